"""An agents folder in MLE-bench's layout, written by the tests: one agent `probe` with two variants
(argparse and omegaconf), YAML anchors and merges, a template, and a secret in its env vars.

Its start.sh records what it was given (argv, environment, user, files, the checker's answers) in
/home/logs/probe.json, then submits the sample submission, as MLE-bench's dummy agent does."""

from __future__ import annotations

from pathlib import Path

CONFIG = """\
vars:
  steps: &steps 7

defaults: &defaults
  start: probe/start.sh
  dockerfile: probe/Dockerfile
  env_vars: &env_vars
    STEP_LIMIT: *steps
    PROBE_TOKEN: ${{ secrets.MY_KEY }}

kwargs_common: &kwargs_common
  steps: *steps
  mode: fast

probe:
  <<: *defaults
  kwargs_type: argparse
  kwargs:
    <<: *kwargs_common
    model: tiny

probe/omega:
  <<: *defaults
  kwargs_type: omegaconf
  kwargs:
    <<: *kwargs_common
    agent.code.model: big
  env_vars:
    <<: *env_vars
    EXTRA: "yes"
"""

# The shipped sample agent's Dockerfile: MLE-bench's build args, the conda shim at build time, COPY .
DOCKERFILE = (Path(__file__).resolve().parent.parent / "agents" / "sample" / "Dockerfile").read_text()

START = """\
#!/bin/bash
set -x
eval "$(conda shell.bash hook)"
conda activate agent
cd ${AGENT_DIR}
touch ${AGENT_DIR}/agent_was_here.txt
python probe.py "$@"
"""

PROBE = r'''
import getpass, json, os, subprocess, sys, urllib.request
record = {"argv": sys.argv[1:], "env": dict(os.environ), "user": getpass.getuser(), "uid": os.getuid(),
          "python": sys.executable, "cwd": os.getcwd(),
          "instructions": open("/home/instructions.txt").read(),
          "agent_dir_writable": os.path.exists(os.environ["AGENT_DIR"] + "/agent_was_here.txt"),
          "data_writable": os.access("/home/data", os.W_OK)}
with urllib.request.urlopen("http://localhost:5000/health") as answer:
    record["health"] = json.load(answer)
with open("/tmp/bad.csv", "w") as bad:
    bad.write("PassengerId,Transported\n0001_01,\n")
record["invalid"] = json.loads(subprocess.run(["bash", "/home/validate_submission.sh", "/tmp/bad.csv"],
                                              capture_output=True, text=True).stdout)
import shutil
shutil.copy("/home/data/sample_submission.csv", "/home/submission/submission.csv")
record["valid"] = json.loads(subprocess.run(["bash", "/home/validate_submission.sh",
                                             "/home/submission/submission.csv"], capture_output=True, text=True).stdout)
with open(os.path.join(os.environ["LOGS_DIR"], "probe.json"), "w") as out:
    json.dump(record, out)
'''


def make_agents_dir(root: Path, **changes: str) -> Path:
    """`root/agents/probe/{config.yaml,Dockerfile,start.sh,probe.py,requirements.txt}`; `changes`
    replace files by name (e.g. config_yaml=...)."""
    agents = root / "agents"
    probe = agents / "probe"
    probe.mkdir(parents=True, exist_ok=True)
    files = {"config.yaml": CONFIG, "Dockerfile": DOCKERFILE, "start.sh": START, "probe.py": PROBE,
             "requirements.txt": "# nothing beyond the base image\nnumpy\npandas\n"}
    for name, text in files.items():
        (probe / name).write_text(changes.get(name.replace(".", "_"), text))
    return agents

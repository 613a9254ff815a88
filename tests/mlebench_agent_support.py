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


# An agent written the way MLE-bench's own are (aide's and mlagentbench's Dockerfile and start.sh
# habits, in our words): `mkdir` of the four folders without -p, requirements through `conda run`,
# `conda install` of what the image has, a file COPY'd into /home, a WORKDIR of its own; start.sh
# uses the hook, `conda activate`, `source .../activate`, `conda run`, a torch check that fails and
# goes on, `ls /private`, rewrites /home/instructions.txt in place with sed and envsubst, links its
# logs, validates the sample submission and submits under `timeout`. Each check lands in checks.txt.
SHAPED_CONFIG = """\
vars:
  limit: &limit 60
shaped:
  start: shaped/start.sh
  dockerfile: shaped/Dockerfile
  kwargs_type: argparse
  kwargs:
    max-time: *limit
    llm-name: tiny
  env_vars:
    TIME_LIMIT_SECS: *limit
"""

# The four build args as the sample's Dockerfile (and MLE-bench's) take them, then MLE-bench's habits.
SHAPED_DOCKERFILE = DOCKERFILE.split("RUN mkdir -p")[0] + """\
RUN mkdir ${LOGS_DIR} ${CODE_DIR} ${AGENT_DIR}
ARG CONDA_ENV_NAME=agent
ARG REQUIREMENTS=${AGENT_DIR}/requirements.txt
COPY requirements.txt ${AGENT_DIR}/requirements.txt
RUN conda run -n ${CONDA_ENV_NAME} pip install -r ${AGENT_DIR}/requirements.txt && \\
    conda clean -afy
RUN conda install -y -n ${CONDA_ENV_NAME} -c conda-forge python=3.11 scikit-learn && \\
    /opt/conda/bin/conda run -n ${CONDA_ENV_NAME} --no-capture-output python -c "import sklearn"
COPY notes.txt /home/additional_notes.txt
COPY . ${AGENT_DIR}
WORKDIR ${AGENT_DIR}/work
"""

SHAPED_START = """\
#!/bin/bash
set -x
out=$LOGS_DIR/checks.txt
eval "$(conda shell.bash hook)"
conda activate agent
echo "hook_python=$(command -v python)" >> $out
echo "cwd=$(pwd)" >> $out
echo "args=$*" >> $out
python -c "import torch; print(torch.cuda.is_available())"
echo "torch_rc=$?" >> $out
ls /private
echo "private_rc=$?" >> $out
ls /home/data > /dev/null
echo "data_rc=$?" >> $out
export TIME_LIMIT="${TIME_LIMIT_SECS} seconds"
sed -i 's|/home/||g' /home/instructions.txt
echo "sed_rc=$?" >> $out
echo "" >> /home/instructions.txt
envsubst < /home/additional_notes.txt >> /home/instructions.txt
echo "notes=$(grep -c "notes for ${COMPETITION_ID} within ${TIME_LIMIT}" /home/instructions.txt)" >> $out
echo "home_left=$(grep -c '/home/' /home/instructions.txt)" >> $out
conda deactivate
source /opt/conda/bin/activate agent
echo "activate_env=$CONDA_DEFAULT_ENV" >> $out
conda run -n agent --no-capture-output python -c "import sys; print('run_prefix=' + sys.prefix)" >> $out
mkdir -p ${AGENT_DIR}/logs && ln -s ${LOGS_DIR} ${AGENT_DIR}/logs/exp
echo "link_rc=$?" >> $out
echo "validate=$(bash /home/validate_submission.sh /home/data/sample_submission.csv)" >> $out
timeout $TIME_LIMIT_SECS cp /home/data/sample_submission.csv ${SUBMISSION_DIR}/submission.csv
echo "timeout_rc=$?" >> $out
touch $CODE_DIR/solution.py
echo "code_rc=$?" >> $out
"""


def make_mlebench_shaped_dir(root: Path) -> Path:
    agents = root / "agents"
    shaped = agents / "shaped"
    shaped.mkdir(parents=True, exist_ok=True)
    files = {"config.yaml": SHAPED_CONFIG, "Dockerfile": SHAPED_DOCKERFILE, "start.sh": SHAPED_START,
             "requirements.txt": "numpy\npandas\nscikit-learn\n",
             "notes.txt": "ADDITIONAL NOTES\nThese are notes for ${COMPETITION_ID} within ${TIME_LIMIT}.\n"}
    for name, text in files.items():
        (shaped / name).write_text(text)
    return agents

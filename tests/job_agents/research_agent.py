"""A scripted agent for research tasks (tests only): works in WORKSPACE_DIR as an agent would.

AGENT_SETTINGS (JSON):
  steps: how many times it rewrites train.py and runs it (the last is the improved model), default 1
  sleep: seconds between steps (so the runner keeps snapshots of the workspace), default 0
  improve: false to leave the starter as it is (run it only)
  edit_read_only: append a row to train.csv, a file the task gives read-only
  look_for_scripts: search every folder the sandbox names for the task's eval.py / answer.csv and
      write what it found to LOGS_DIR/found.json
  plant_links: replace submission.csv by a link to /etc/passwd and leave a FIFO in the workspace
  write_secret: the name of an environment variable whose value it writes as submission.csv's labels
  huge_file: truncate checkpoint.bin in the workspace to this many bytes first (a sparse file: no
      disk taken, but a copy of it takes its whole length)
  say: print this line at the end (e.g. an error message)
  hang: sleep this many seconds at the end (past the job's time limit)
  exit: exit with this code at the end
"""

import json
import os
import subprocess
import sys
import time

settings = json.loads(os.environ.get("AGENT_SETTINGS") or "{}")
workspace = os.environ["WORKSPACE_DIR"]
assert os.path.realpath(os.getcwd()) == os.path.realpath(workspace), (os.getcwd(), workspace)
assert os.environ.get("TASK_KIND") == "research"
with open(os.environ["RESEARCH_PROBLEM"]) as f:
    print("problem:", f.read().strip()[:80], flush=True)

IMPROVED = '''import csv
with open("test.csv") as f:
    rows = list(csv.DictReader(f))
with open("submission.csv", "w") as out:
    out.write("id,label\\n")
    for row in rows:
        out.write(f"{row['id']},{int(float(row['x1']) + float(row['x2']) > %s)}\\n")
'''


def look_for_scripts() -> list:
    roots = {os.environ.get(name, "") for name in ("DATA_DIR", "WORKSPACE_DIR", "CODE_DIR", "SUBMISSION_DIR",
                                                    "LOGS_DIR", "TOOLS_DIR")} - {""}
    roots |= {os.path.dirname(root) for root in roots}
    found = []
    for root in sorted(roots):
        for folder, _dirs, names in os.walk(root):
            found += [os.path.join(folder, n) for n in names if n in ("eval.py", "answer.csv")]
    found += [f"env {k}" for k, v in os.environ.items() if "/scripts" in v]
    return sorted(set(found))


if settings.get("huge_file"):
    with open("checkpoint.bin", "wb") as f:
        f.truncate(int(settings["huge_file"]))
    print("checkpoint.bin:", os.stat("checkpoint.bin").st_size, "bytes", flush=True)

steps = int(settings.get("steps", 1))
for step in range(steps):
    if settings.get("improve", True):
        # the threshold moves towards the right one (1.0) step by step
        threshold = 1.0 if step == steps - 1 else 0.4 + 0.1 * step
        with open("train.py", "w") as f:
            f.write(IMPROVED % threshold)
    subprocess.run([sys.executable, "train.py"], check=True)
    print(f"step {step}: ran train.py", flush=True)
    time.sleep(float(settings.get("sleep", 0)))

if settings.get("edit_read_only"):
    try:
        with open("train.csv", "a") as f:
            f.write("999,0.5,0.5,1\n")
        print("edited train.csv", flush=True)
    except OSError as exc:
        print("train.csv is read-only here:", exc, flush=True)

if settings.get("look_for_scripts"):
    with open(os.path.join(os.environ["LOGS_DIR"], "found.json"), "w") as f:
        json.dump(look_for_scripts(), f)

if settings.get("write_secret"):
    with open("submission.csv", "w") as f:
        f.write(f"id,label\n1,{os.environ[settings['write_secret']]}\n")

if settings.get("plant_links"):
    os.remove("submission.csv")
    os.symlink("/etc/passwd", "submission.csv")
    os.mkfifo("pipe")

if settings.get("say"):
    print(settings["say"], flush=True)
time.sleep(float(settings.get("hang", 0)))
sys.exit(int(settings.get("exit", 0)))

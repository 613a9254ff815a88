"""A scripted agent for the job tests: writes our JSONL trajectory a line at a time and rewrites its
submission as it "improves", with behaviour chosen by AGENT_SETTINGS (JSON):
steps (how many), sleep (seconds between steps), exit (exit code), ignore_term (keep going after
SIGTERM), hang (sleep this long after the steps), trajectory (false: no trajectory.jsonl), journal
(an AIDE journal.json to write in LOGS_DIR, as agents/aide leaves it). Reads ids from DATA_DIR/sample_submission.csv."""

import csv
import json
import os
import signal
import sys
import time
from pathlib import Path

settings = json.loads(os.environ.get("AGENT_SETTINGS") or "{}")
if settings.get("ignore_term"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
data, logs, submission = (Path(os.environ[k]) for k in ("DATA_DIR", "LOGS_DIR", "SUBMISSION_DIR"))
with open(data / "sample_submission.csv") as f:
    reader = csv.reader(f)
    header = next(reader)
    ids = [row[0] for row in reader]
print(f"agent seed {os.environ.get('SEED')} on {os.environ.get('COMPETITION_ID')}, {len(ids)} rows", flush=True)
steps = int(settings.get("steps", 4))
if settings.get("journal"):
    (logs / "journal.json").write_text(json.dumps(settings["journal"]))
trajectory = open(logs / "trajectory.jsonl" if settings.get("trajectory", True) else os.devnull, "w")
trajectory.write(json.dumps({"format": "medalboard-trajectory", "version": 1, "agent": "scripted"}) + "\n")
trajectory.flush()
start = time.monotonic()
for n in range(steps):
    correct = len(ids) * (n + 1) // steps
    rows = [[i, str((k % 2 == 0) if k < correct else (k % 2 != 0))] for k, i in enumerate(ids)]
    tmp = submission / "submission.tmp"
    with open(tmp, "w", newline="") as f:
        csv.writer(f).writerows([header, *rows])
    os.replace(tmp, submission / "submission.csv")
    step = {"kind": "code", "t": round(time.monotonic() - start, 3), "title": f"try {n}",
            "data": {"file": "solution.py", "content": f"# version {n}\n"}, "score": correct / len(ids)}
    trajectory.write(json.dumps(step) + "\n")
    trajectory.flush()
    print(f"step {n}: {correct}/{len(ids)}", flush=True)
    time.sleep(float(settings.get("sleep", 0.3)))
(Path(os.environ["CODE_DIR"]) / "solution.py").write_text("# final\n")
time.sleep(float(settings.get("hang", 0)))
sys.exit(int(settings.get("exit", 0)))

"""A scripted agent for the job tests: writes our JSONL trajectory a line at a time and rewrites its
submission as it "improves", with behaviour chosen by AGENT_SETTINGS (JSON):
steps (how many), sleep (seconds between steps), exit (exit code), ignore_term (keep going after
SIGTERM), hang (sleep this long after the steps), trajectory (false: no trajectory.jsonl), journal
(an AIDE journal.json to write in LOGS_DIR, as agents/aide leaves it), seed_errors (true: SEED % 3 rows
stay wrong, so seeds score apart), big_log_mb (a LOGS_DIR/big.log of that many MiB), wait_for (a path:
after the steps, wait until it exists; it says "waiting" on a line of its own first). `--worse N` on the
command line leaves N more rows wrong (a perturbed agent). Reads ids from DATA_DIR/sample_submission.csv."""

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
wrong = int(sys.argv[sys.argv.index("--worse") + 1]) if "--worse" in sys.argv else 0
wrong += int(os.environ.get("SEED", "0")) % 3 if settings.get("seed_errors") else 0
if settings.get("journal"):
    (logs / "journal.json").write_text(json.dumps(settings["journal"]))
trajectory = open(logs / "trajectory.jsonl" if settings.get("trajectory", True) else os.devnull, "w")
trajectory.write(json.dumps({"format": "medalboard-trajectory", "version": 1, "agent": "scripted"}) + "\n")
trajectory.flush()
start = time.monotonic()
for n in range(steps):
    correct = max(0, len(ids) * (n + 1) // steps - wrong)
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
if settings.get("big_log_mb"):  # a large output file, for the tests of uploads
    block = bytes(range(256)) * 4096
    with open(logs / "big.log", "wb") as f:
        for n in range(int(settings["big_log_mb"])):
            f.write(block[n % 256:] + block[:n % 256])
if settings.get("wait_for"):  # released by the test, so it can look at the site while this runs
    print("waiting", flush=True)
    while not Path(settings["wait_for"]).exists():
        time.sleep(0.05)
time.sleep(float(settings.get("hang", 0)))
sys.exit(int(settings.get("exit", 0)))

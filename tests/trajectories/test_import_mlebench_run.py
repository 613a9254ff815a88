import json
import shutil

from leaderboard.trajectories.importers import detect
from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all

JOURNAL = TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json"
RUN_ID = "spaceship-titanic_0f8b2c4e-1a2b-4c3d-9e8f-001122334455"


def run_folder(tmp_path, logs: dict[str, bytes | str]):
    root = tmp_path / RUN_ID
    for part in ("logs", "code", "submission"):
        (root / part).mkdir(parents=True)
    for name, content in logs.items():
        target = root / "logs" / name
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    (root / "code" / "solution.py").write_text("import pandas as pd\nprint('hi')\n")
    (root / "submission" / "submission.csv").write_text("PassengerId,Transported\n1,True\n")
    return root


def test_known_trajectory_in_logs_is_used(db, tmp_path):
    root = run_folder(tmp_path, {"run.log": "starting\n"})
    shutil.copy(JOURNAL, root / "logs" / "journal.json")
    assert detect(root) == "mlebench_run"
    [(run, steps)] = import_all(root)
    n_nodes = len(json.loads(JOURNAL.read_text())["nodes"])
    assert run.n_steps == len(steps) == 4 * n_nodes
    assert run.trajectory_format == "aide"
    assert run.task_name == "spaceship-titanic"


def test_without_a_trajectory_logs_code_and_submission_become_steps(db, tmp_path):
    root = run_folder(tmp_path, {"agent.log": "step 1\nstep 2\n", "stderr.txt": "warning\n"})
    [(run, steps)] = import_all(root)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert run.n_steps == len(files)
    assert sorted(s.title for s in steps) == files
    kinds = {s.title: s.kind for s in steps}
    assert kinds["code/solution.py"] == "code"
    assert kinds["submission/submission.csv"] == "submission"
    assert kinds["logs/agent.log"] == "observation"
    log = next(s for s in steps if s.title == "logs/agent.log")
    assert log.text == "step 1\nstep 2\n"
    assert run.task_name == "spaceship-titanic" and run.trajectory_format == "mlebench_run"

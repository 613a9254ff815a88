"""The baseline agent on an MLAgentBench research task (TASK_KIND=research).

A research task gives no sample submission and no fixed file names: the workspace (the current
directory, WORKSPACE_DIR) holds a starter script (`train.py`), its data and descriptions, and the task's
eval.py later scores the workspace's `submission.csv`. So the agent:

1. runs the starter unmodified (the same Python, within part of its time budget), which writes the
   baseline's submission.csv: from then on a valid answer exists whatever happens;
2. takes the submission's format from that file, exactly as it takes it from a sample submission in
   MLE-bench mode (first column the id, the rest the predictions; their values say labels,
   probabilities or numbers), and the metric from the research problem and the workspace's texts;
3. finds the training file (a CSV with the prediction columns) and the test file (a CSV with the
   submission's ids and without them) among the workspace's CSV files;
4. measures the starter on its own validation fold (the starter run again in a scratch folder whose
   training file is the fold's fitting rows and whose test file the held-out rows), so that its
   search rewrites submission.csv only when a candidate's validation score beats the starter's.

It reads nothing outside the workspace but the research problem's file (RESEARCH_PROBLEM) and its own
tools; its scratch folder is a fresh temporary directory, removed at the end.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import baseline_agent as base
import numpy as np
import pandas as pd

STARTER = "train.py"  # MLAgentBench's entry script
STARTER_SHARE = 0.6  # of the remaining budget, at most, for the starter's run: without it there is no format
VALIDATION_SHARE = 0.4  # of what remains then, at most, for its run on the validation fold
TEXT_SUFFIXES = (".txt", ".md")
TEXT_LIMIT = 200_000  # characters of descriptions read (the metric is named in the first lines)
COPY_LIMIT = 5 * 2**20  # a scratch folder copies smaller files; larger ones (never the data) are linked
SKIPPED = {"submission.csv", "__pycache__"}
OUTPUT_TAIL = 4000


def _preload() -> None:
    import sklearn.compose  # noqa: F401 - what the folds and the first candidates need
    import sklearn.linear_model  # noqa: F401
    import sklearn.model_selection  # noqa: F401


class ResearchError(Exception):
    """The workspace does not give what the agent needs (a starter that writes a submission, the data)."""


def run_script(script: str, folder: str, timeout: float) -> tuple[int, str, float]:
    """(exit code, the output's tail, seconds): the script with this Python in its folder, in its own process
    group, killed with its children at the timeout (exit code 124)."""
    began = time.monotonic()
    process = _start([sys.executable, script], folder)
    try:
        output, code = process.communicate(timeout=max(1.0, timeout))[0], process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, code = process.communicate()[0], 124
    text = output.decode("utf-8", errors="replace")[-OUTPUT_TAIL:]
    return code, text, time.monotonic() - began


def _start(command: list[str], folder: str, attempts: int = 3) -> subprocess.Popen:
    """Popen, tried again when the start itself fails for want of memory (EFAULT, ENOMEM and EAGAIN
    from exec under the sandbox's memory limit, seen once on a loaded runner), then without vfork."""
    for attempt in range(attempts):
        try:
            return subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as exc:
            if exc.errno not in (errno.EFAULT, errno.ENOMEM, errno.EAGAIN) or attempt == attempts - 1:
                raise
            print(f"starting {command[-1]} failed ({exc}); trying again", file=sys.stderr)
            subprocess._USE_VFORK = False  # a plain fork copies the agent's memory instead of sharing it
            time.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")


def csv_files(workspace: str) -> list[str]:
    """The workspace's CSV files (two folder levels deep), the submission and hidden files left out."""
    found = []
    for folder, subfolders, names in os.walk(workspace):
        depth = os.path.relpath(folder, workspace).count(os.sep)
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIPPED and depth < 2)
        found += [os.path.join(folder, n) for n in sorted(names)
                  if n.lower().endswith(".csv") and not n.startswith(".") and n not in SKIPPED]
    return found


def _header(path: str) -> list:
    try:
        return list(pd.read_csv(path, nrows=0).columns)
    except (ValueError, OSError, UnicodeDecodeError):
        return []


def _named(paths: list, word: str) -> list:
    """Files whose name says what they are first, then the rest in order."""
    return sorted(paths, key=lambda p: word not in os.path.basename(p).lower())


def find_data(workspace: str, sample: pd.DataFrame) -> tuple[str, str]:
    """(training file, test file): the CSV with the prediction columns, and the one with every submitted id."""
    id_column, targets = sample.columns[0], list(sample.columns[1:])
    if not targets:
        raise ResearchError(f"the sample submission has only its id column {id_column!r}: it names no column "
                            "to predict")
    headers = {p: _header(p) for p in csv_files(workspace)}
    trains = [p for p, h in headers.items() if all(t in h for t in targets)]
    ids = set(sample[id_column])
    tests = [p for p, h in headers.items() if id_column in h and not any(t in h for t in targets)
             and ids <= set(pd.read_csv(p, usecols=[id_column], dtype=str, keep_default_na=False)[id_column])]
    if not trains or not tests:
        what = "training file (a CSV with the columns " + ", ".join(targets) + ")" if not trains else \
            f"test file (a CSV with the column {id_column} holding every id of submission.csv)"
        raise ResearchError(f"the workspace has no {what}; CSV files seen: "
                            + (", ".join(os.path.relpath(p, workspace) for p in headers) or "none"))
    return _named(trains, "train")[0], _named(tests, "test")[0]


def read_texts(workspace: str, problem_path: str) -> str:
    """The research problem, then the workspace's description files: where the metric is named."""
    paths = ([problem_path] if problem_path and os.path.isfile(problem_path) else []) + [
        os.path.join(workspace, n) for n in sorted(os.listdir(workspace)) if n.lower().endswith(TEXT_SUFFIXES)]
    texts = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            texts.append(handle.read(TEXT_LIMIT))
    return "\n\n".join(texts)


def scratch_copy(workspace: str, scratch: str, replaced: dict) -> None:
    """The workspace's files in scratch (small ones copied, large ones linked), with replaced's texts in place of
    the files they name (relative paths): the starter runs there on other data without touching the workspace."""
    for folder, subfolders, names in os.walk(workspace):
        subfolders[:] = [d for d in subfolders if d not in SKIPPED]
        target = os.path.join(scratch, os.path.relpath(folder, workspace))
        os.makedirs(target, exist_ok=True)
        for name in names:
            source, relative = os.path.join(folder, name), os.path.relpath(os.path.join(folder, name), workspace)
            if name in SKIPPED or relative in replaced or os.path.islink(source):
                continue
            if os.path.getsize(source) <= COPY_LIMIT:
                shutil.copy2(source, os.path.join(target, name))
            else:
                os.symlink(source, os.path.join(target, name))
    for relative, text in replaced.items():
        with open(os.path.join(scratch, relative), "w", encoding="utf-8", newline="") as handle:
            handle.write(text)


class ResearchAgent(base.Agent):
    def __init__(self, args) -> None:
        args.submission_dir = args.workspace_dir  # eval.py scores the workspace's submission.csv
        super().__init__(args)
        self.workspace = os.path.abspath(args.workspace_dir)
        self.scratch = tempfile.mkdtemp(prefix="baseline-research-")

    def run(self) -> int:
        try:
            return super().run()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)

    # ----------------------------------------------------------------------------- reading
    def load(self) -> None:
        self.description = read_texts(self.workspace, self.args.research_problem)
        self.run_starter()
        submission = os.path.join(self.workspace, "submission.csv")
        # kept with the logs: the baseline's output, and the format every later submission is checked by
        self.sample_path = os.path.join(self.args.logs_dir, "starter_submission.csv")
        shutil.copyfile(submission, self.sample_path)
        self.sample = pd.read_csv(self.sample_path, dtype=str, keep_default_na=False)
        self.train_path, self.test_path = find_data(self.workspace, self.sample)
        self.read_data(self.train_path, self.test_path)
        self.log.step("plan", "Learn the task from the starter", "\n".join([
            f"The starter's submission.csv: {len(self.sample)} rows, columns {', '.join(self.sample.columns)}.",
            f"Training data: {os.path.relpath(self.train_path, self.workspace)}; test data: "
            f"{os.path.relpath(self.test_path, self.workspace)}.",
            f"Descriptions read: {len(self.description)} characters (research problem and workspace texts)."]))

    def run_starter(self) -> None:
        starter = os.path.join(self.workspace, STARTER)
        if not os.path.isfile(starter):
            raise ResearchError(f"the workspace has no {STARTER} to learn the submission's format from")
        self.log.step("plan", "Run the starter first", f"Run {STARTER} unmodified: its submission.csv is the "
                      "baseline, and it shows the submission's format.")
        # scikit-learn loads while the starter runs (seconds on a busy machine), not after it, on the clock
        threading.Thread(target=_preload, daemon=True).start()
        code, output, seconds = run_script(STARTER, self.workspace, STARTER_SHARE * self.remaining())
        self._command(f"python {STARTER}", output.splitlines(), code, time.monotonic() - seconds)
        self.starter_seconds = seconds
        if not os.path.isfile(os.path.join(self.workspace, "submission.csv")):
            raise ResearchError(f"{STARTER} exited with {code} and wrote no submission.csv: no format to learn")
        self.submissions += 1  # the starter's stands until a candidate validates better

    # ----------------------------------------------------------------------------- the floor
    def constant(self) -> None:
        """In research mode the floor is the starter, measured on the first validation fold."""
        self.log.step("plan", "Candidate 0: the starter", f"Run {STARTER} on the first validation fold (its "
                      "training rows as the training file, the held-out rows as the test file) and score what it "
                      "writes: a candidate replaces the starter's submission only when it validates better.")
        try:
            value = self.starter_validation()
        except (ResearchError, OSError, ValueError, KeyError) as exc:
            self.log.step("error", "The starter could not be validated", f"{exc}; any validated candidate "
                          "will replace its submission",
                          {"message": str(exc), "type": type(exc).__name__})
            return
        self.log.step("score", f"validation {self.task.metric} = {value:.6g}", "",
                      {"metric": self.task.metric, "value": value, "maximize": self.task.maximize,
                       "candidate": "starter", "validation": "the first cross-validation fold"}, score=value)
        self.best = value

    def starter_validation(self) -> float:
        id_column = self.task.id_column
        if id_column not in self.train.columns:
            raise ResearchError(f"the training file has no {id_column} column to tell the held-out rows apart")
        if VALIDATION_SHARE * self.remaining() < 1.5 * self.starter_seconds:
            raise ResearchError(f"too little time left to run {STARTER} again (it took {self.starter_seconds:.1f} s)")
        fit, held = self.folds()[0]
        rows = [self.labelled_rows[self.cv_rows[part]] for part in (fit, held)]
        text = pd.read_csv(self.train_path, dtype=str, keep_default_na=False)
        held_out = text.iloc[rows[1]].drop(columns=[c for c in text.columns if c not in self.test.columns])
        folder = os.path.join(self.scratch, "validation")
        scratch_copy(self.workspace, folder, {os.path.relpath(self.train_path, self.workspace):
                                              text.iloc[rows[0]].to_csv(index=False),
                                              os.path.relpath(self.test_path, self.workspace):
                                              held_out.to_csv(index=False)})
        budget = min(VALIDATION_SHARE * self.remaining(), 3 * self.starter_seconds + 10)
        code, output, seconds = run_script(STARTER, folder, budget)
        self._command(f"python {STARTER} (on the validation fold)", output.splitlines(), code,
                      time.monotonic() - seconds)
        if not os.path.isfile(os.path.join(folder, "submission.csv")):
            raise ResearchError(f"{STARTER} exited with {code} on the validation fold and wrote no submission.csv")
        written = pd.read_csv(os.path.join(folder, "submission.csv"), dtype=str, keep_default_na=False)
        written = written.drop_duplicates(id_column).set_index(id_column).reindex(held_out[id_column].tolist())
        return base.score(self.task, base.truth(self.task, self.y[self.cv_rows[held]]), self.predictions(written))

    def predictions(self, written: pd.DataFrame) -> np.ndarray:
        """A submission's columns as the metric wants predictions (see base.Model.predict)."""
        task = self.task
        if written[task.targets].isna().any().any():
            raise ResearchError("the starter's submission misses some held-out rows")
        if task.kind == "labels":
            reverse = {v: k for k, v in task.spelling.items()}
            return np.asarray([reverse.get(v, v) for v in written[task.targets[0]].tolist()], dtype=object)
        values = written[task.targets].apply(pd.to_numeric, errors="raise").to_numpy(dtype=float)
        if task.kind == "class-probabilities":
            order = [task.targets.index(next(t for t in task.targets if task.column_class[t] == c))
                     for c in task.classes]
            return values[:, order]
        return values[:, 0] if values.shape[1] == 1 else values

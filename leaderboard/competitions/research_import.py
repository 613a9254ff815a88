"""Research tasks in MLAgentBench's layout (`MLAgentBench/benchmarks/<task>/{env,scripts}`) become
competitions of kind research.

    imported, refused = import_tasks(path, lower_is_better={"house-price"}, splits=["mine"])

Each `<task>/env/` (the workspace an agent starts from) and `<task>/scripts/` (eval.py with
get_score(submission_folder), research_problem.txt, read_only_files.txt, what the eval reads) is
copied into settings.RESEARCH_DIR/<task>/; env/ becomes the competition's public data, scripts/ a
private location (CompetitionAnswers.research_scripts_dir). A task folder is untrusted input: it is
checked before anything is written (eval.py parsed, never imported or run here: its code runs only
in a runner's grading sandbox), a task that fails a check is refused with the reason, and only
regular files are copied. Importing the same folder again changes nothing; a changed one is copied
again and its baseline computed afresh.
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import os
import re
import shutil
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from leaderboard.models import Benchmark, Competition, CompetitionAnswers, LeaderboardKind, ResearchTask, Split

BENCHMARK = "mlagentbench"
SPLIT = "research"
ENTRY_SCRIPT = "train.py"  # MLAgentBench's starters; a task without one needs --baseline-score
SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
DESCRIPTION_BYTES = 64 * 1024
STARTER_CODE_BYTES = 200 * 1024
LISTED_FILES = 500
MAX_FILES = 200_000


class Refused(Exception):
    """The folder is not a research task this site can host; the message says why."""


@dataclass
class TaskFolder:
    slug: str
    env: Path
    scripts: Path
    problem: str
    read_only_patterns: list[str]
    files: dict[str, list[str]] = field(default_factory=dict)  # "env"/"scripts" -> regular files below
    lower_is_better: bool | None = None  # what scripts/direction.txt says, if the task says it


@dataclass
class Imported:
    competition: Competition
    task: ResearchTask
    changed: bool  # copied (first import or new content) rather than found unchanged
    needs_baseline: bool  # the site must ask a runner for the starter's baseline
    linked: int = 0  # runs imported earlier under the task's id, linked to it now
    direction: str = ""  # "lower is better (MLAgentBench's list)": the metric's direction and who said it
    unmatched: list[str] = field(default_factory=list)  # read-only patterns that name no file of env/
    asked_again: bool = False  # unchanged, but its failed baseline is asked for again


# MLAgentBench's tasks whose metric is better when lower (its eval/plot code lists them: SMAPE, MCRMSE,
# perplexity, seconds, MAE); every other task of it is higher-is-better.
MLAGENTBENCH_LOWER_IS_BETTER = frozenset({
    "amp-parkinsons-disease-progression-prediction", "feedback", "babylm", "llama-inference", "house-price",
    "vectorization"})
# MLAgentBench's prepare_task runs scripts/prepare.py (which downloads the task's data into env/) and then
# writes scripts/prepared; a task with a prepare.py and no such mark has no data yet.
PREPARE, PREPARED = "prepare.py", "prepared"
DIRECTION_FILE = "direction.txt"  # scripts/direction.txt: "lower" or "higher" (is better): the task says it


def find_tasks(path: Path) -> list[Path]:
    """`path` itself when it is a task folder, else its sub-folders that look like one."""
    path = Path(path)
    if not path.is_dir():
        raise Refused(f"{path} is not a folder")
    if _looks_like_task(path):
        return [path]
    return [child for child in sorted(path.iterdir()) if child.is_dir() and _looks_like_task(child)]


def _looks_like_task(folder: Path) -> bool:
    return (folder / "env").is_dir() or (folder / "scripts").is_dir()


# --- checks -------------------------------------------------------------------------------------


def check_task(folder: Path) -> TaskFolder:
    """The task in `folder`, or Refused with the first reason it cannot be hosted."""
    slug = folder.name
    if not SLUG.match(slug):
        raise Refused(f"{slug!r} is not a usable task id (letters, digits, '.', '_' and '-')")
    env, scripts = folder / "env", folder / "scripts"
    for part, path in (("env", env), ("scripts", scripts)):
        if path.is_symlink() or not path.is_dir():
            raise Refused(f"no {part}/ folder (MLAgentBench's layout: <task>/env and <task>/scripts)")
    files = {"env": _regular_files(env, "env"), "scripts": _regular_files(scripts, "scripts")}
    if "eval.py" not in files["scripts"]:
        raise Refused("no scripts/eval.py: the task's own evaluation is what scores a workspace")
    if PREPARE in files["scripts"] and PREPARED not in files["scripts"]:
        raise Refused(f"not prepared: scripts/{PREPARE} has not been run (no scripts/{PREPARED}, MLAgentBench's "
                      f"mark of it); run `python -m MLAgentBench.prepare_task {slug}` where its data can be "
                      "downloaded (docs/research.md lists what each task fetches), then import it")
    check_eval_source((scripts / "eval.py").read_bytes())
    if "research_problem.txt" not in files["scripts"]:
        raise Refused("no scripts/research_problem.txt: the agent would have no instructions")
    problem = _text(scripts / "research_problem.txt", DESCRIPTION_BYTES).strip()
    if not problem:
        raise Refused("scripts/research_problem.txt is empty")
    patterns = []
    if "read_only_files.txt" in files["scripts"]:
        patterns = [line.strip() for line in _text(scripts / "read_only_files.txt", DESCRIPTION_BYTES).splitlines()
                    if line.strip() and not line.strip().startswith("#")]
    said = None
    if DIRECTION_FILE in files["scripts"]:
        words = _text(scripts / DIRECTION_FILE, 200).lower().split()
        word = words[0] if words else ""
        if word not in ("lower", "higher"):
            raise Refused(f"scripts/{DIRECTION_FILE} must say 'lower' or 'higher' (is better), not {word!r}")
        said = word == "lower"
    return TaskFolder(slug, env, scripts, problem, patterns, files, said)


def direction(folder: TaskFolder, lower: set[str], higher: set[str]) -> tuple[bool, str]:
    """(lower is better, in words with who said it): the command line, then the task's own
    scripts/direction.txt, then MLAgentBench's own list, else higher is better."""
    if folder.slug in lower and folder.slug in higher:
        raise Refused("given both --lower-is-better and --higher-is-better")
    if folder.slug in lower or folder.slug in higher:
        is_lower, source = folder.slug in lower, "as given on the command line"
    elif folder.lower_is_better is not None:
        is_lower, source = folder.lower_is_better, f"as scripts/{DIRECTION_FILE} says"
    elif folder.slug in MLAGENTBENCH_LOWER_IS_BETTER:
        is_lower, source = True, "MLAgentBench's list"
    else:
        is_lower, source = False, "the default; say --lower-is-better if not"
    return is_lower, f"{'lower' if is_lower else 'higher'} is better ({source})"


def unmatched_patterns(folder: TaskFolder) -> list[str]:
    """read_only_files.txt's patterns that name no file of env/ (a typo leaves that file writable)."""
    return [pattern for pattern in folder.read_only_patterns
            if not any(read_only_matches(rel, [pattern]) for rel in folder.files["env"])]


def check_eval_source(source: bytes) -> None:
    """eval.py must define get_score(submission_folder) at its top level: read from its syntax tree,
    since importing it would run the task's code in the site's process."""
    try:
        tree = ast.parse(source, filename="scripts/eval.py")
    except (SyntaxError, ValueError) as exc:
        where = f"line {exc.lineno}: " if getattr(exc, "lineno", None) else ""
        raise Refused(f"scripts/eval.py is not valid Python ({where}{getattr(exc, 'msg', exc)})") from None
    found = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
             and node.name == "get_score"]
    if not found:
        raise Refused("scripts/eval.py has no get_score(submission_folder) function at its top level")
    function = found[-1]
    if isinstance(function, ast.AsyncFunctionDef):
        raise Refused("scripts/eval.py's get_score is async; it must return the score")
    args = function.args
    if not (args.posonlyargs or args.args or args.vararg):
        raise Refused("scripts/eval.py's get_score takes no argument; it must take the submission folder")


def _regular_files(root: Path, label: str) -> list[str]:
    """Every file below `root` as a POSIX path; a link or special file refuses the task (copying it
    could reach outside the folder)."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = Path(folder) / name
            mode = path.lstat().st_mode
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(mode):
                raise Refused(f"{label}/{rel} is a symbolic link; only regular files are copied")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise Refused(f"{label}/{rel} is not a regular file")
            if stat.S_ISREG(mode):
                found.append(rel)
                if len(found) > MAX_FILES:
                    raise Refused(f"{label}/ holds more than {MAX_FILES:,} files")
    return sorted(found)


def _text(path: Path, limit: int) -> str:
    with open(path, "rb") as f:
        return f.read(limit).decode("utf-8", errors="replace")


def read_only_matches(rel: str, patterns: list[str]) -> bool:
    """Whether read_only_files.txt's patterns name `rel`. MLAgentBench matches them with fnmatch
    against './name' for a file at the top and 'dir/name' below it; the bare name is accepted too."""
    keys = {rel, f"./{rel}"}
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns for key in keys)


# --- import -------------------------------------------------------------------------------------


def import_tasks(path: Path, *, lower_is_better: set[str] = frozenset(), splits: list[str] = (),
                 baseline_scores: dict[str, float] | None = None, time_limit_s: float = 3600.0,
                 higher_is_better: set[str] = frozenset()) -> tuple[list[Imported], dict[str, str]]:
    """Every task below `path`: (the imported ones, {folder name: why refused})."""
    imported, refused = [], {}
    baseline_scores = baseline_scores or {}
    for folder in find_tasks(path):
        try:
            task = check_task(folder)
            is_lower, words = direction(task, set(lower_is_better), set(higher_is_better))
            item = import_task(task, lower_is_better=is_lower, splits=splits,
                               baseline_score=baseline_scores.get(task.slug), time_limit_s=time_limit_s)
            item.direction, item.unmatched = words, unmatched_patterns(task)
            imported.append(item)
        except Refused as exc:
            refused[folder.name] = str(exc)
    return imported, refused


def import_task(folder: TaskFolder, *, lower_is_better: bool, splits: list[str] = (),
                baseline_score: float | None = None, time_limit_s: float = 3600.0) -> Imported:
    existing = Competition.objects.filter(slug=folder.slug).first()
    if existing is not None and existing.kind != Competition.Kind.RESEARCH:
        raise Refused(f"a competition {folder.slug!r} of {existing.benchmark.name} already exists; "
                      "rename the task folder to import it beside it")
    digest = _content_hash(folder)
    previous = ResearchTask.objects.filter(competition=existing).first() if existing else None
    changed = previous is None or previous.content_hash != digest
    failed_before = previous is not None and previous.baseline_status == ResearchTask.Baseline.FAILED
    target = Path(settings.RESEARCH_DIR) / folder.slug
    if changed and _resolved(folder.env.parent) != _resolved(target):  # a task already in storage stays as it is
        _copy_into(folder, target)
    with transaction.atomic():
        competition = _competition(folder, target, lower_is_better, splits)
        task = _research_task(competition, folder, target, digest, changed, baseline_score, time_limit_s)
    needs = task.baseline_status == ResearchTask.Baseline.PENDING
    return Imported(competition, task, changed, needs, asked_again=not changed and failed_before and needs)


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _content_hash(folder: TaskFolder) -> str:
    digest = hashlib.sha256()
    for part, root in (("env", folder.env), ("scripts", folder.scripts)):
        for rel in folder.files[part]:
            digest.update(f"{part}/{rel}\0".encode())
            digest.update(_sha256(root / rel).encode())
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_into(folder: TaskFolder, target: Path) -> None:
    """env/ and scripts/ copied beside the target, then swapped in: a failed copy leaves the old one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{folder.slug}.{uuid.uuid4().hex[:8]}"
    try:
        for part, root in (("env", folder.env), ("scripts", folder.scripts)):
            (staging / part).mkdir(parents=True)
            for rel in folder.files[part]:
                destination = staging / part / rel
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(root / rel, destination, follow_symlinks=False)
        old = target.parent / f".{folder.slug}.old.{uuid.uuid4().hex[:8]}"
        if target.exists():
            target.rename(old)
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _competition(folder: TaskFolder, target: Path, lower_is_better: bool, splits: list[str]) -> Competition:
    benchmark, _ = Benchmark.objects.get_or_create(slug=BENCHMARK, defaults={
        "name": "MLAgentBench", "url": "https://github.com/snap-stanford/MLAgentBench",
        "description": "Research tasks: improve the starter's score by at least 10% (Huang et al., 2023)"})
    competition, _ = Competition.objects.update_or_create(slug=folder.slug, defaults={
        "benchmark": benchmark, "name": folder.slug, "kind": Competition.Kind.RESEARCH,
        "description": _description(folder), "config_metric": "eval.py get_score",
        "is_lower_better": lower_is_better, "leaderboard_kind": LeaderboardKind.REFERENCE,
        "public_data_dir": str(target / "env"), "competition_type": "research",
    })
    CompetitionAnswers.objects.update_or_create(competition=competition,
                                                defaults={"research_scripts_dir": str(target / "scripts")})
    for slug in dict.fromkeys([SPLIT, *splits]):
        split, _ = Split.objects.get_or_create(benchmark=benchmark, slug=slug, defaults={
            "name": "Research tasks" if slug == SPLIT else slug, "position": 500})
        competition.splits.add(split)
    return competition


def _description(folder: TaskFolder) -> str:
    """research_problem.txt, then the env's description files (MLAgentBench's data_description.txt ...)."""
    parts = [folder.problem]
    for rel in folder.files["env"]:
        name = rel.rsplit("/", 1)[-1].lower()
        if "/" not in rel and name.endswith((".txt", ".md")) and ("description" in name or "evaluation" in name):
            parts.append(f"## {rel}\n\n{_text(folder.env / rel, DESCRIPTION_BYTES).strip()}")
    return "\n\n".join(parts)


def _research_task(competition: Competition, folder: TaskFolder, target: Path, digest: str, changed: bool,
                   baseline_score: float | None, time_limit_s: float) -> ResearchTask:
    entry = ENTRY_SCRIPT if ENTRY_SCRIPT in folder.files["env"] else ""
    env_files = folder.files["env"]
    task, _ = ResearchTask.objects.get_or_create(competition=competition)
    task.entry_script = entry
    task.research_problem = folder.problem
    task.read_only_patterns = folder.read_only_patterns
    task.read_only_files = {rel: _sha256(target / "env" / rel) for rel in env_files
                            if read_only_matches(rel, folder.read_only_patterns)}
    task.starter_files = [[rel, (target / "env" / rel).stat().st_size] for rel in env_files[:LISTED_FILES]]
    task.starter_code = _text(target / "env" / entry, STARTER_CODE_BYTES) if entry else ""
    task.time_limit_s = time_limit_s
    task.content_hash = digest
    if baseline_score is not None:
        _set_baseline(task, ResearchTask.Baseline.GIVEN, baseline_score, log="", error="")
    elif changed or task.baseline_status == ResearchTask.Baseline.FAILED:  # unchanged: nothing to redo
        if entry:
            _set_baseline(task, ResearchTask.Baseline.PENDING, None, log="", error="")
        else:
            _set_baseline(task, ResearchTask.Baseline.NONE, None, log="",
                          error=f"env/ has no {ENTRY_SCRIPT} to run; give the baseline with --baseline-score")
    task.save()
    return task


def _set_baseline(task: ResearchTask, status: str, score: float | None, *, log: str, error: str) -> None:
    task.baseline_status, task.baseline_log, task.baseline_error = status, log, error
    task.baseline_seconds, task.baseline_runs = None, []  # a given or asked-for baseline: the old runs are not it
    task.baseline_at = timezone.now() if status != ResearchTask.Baseline.NONE else None  # given, or asked for
    # A fresh request: no claim on it, its attempts counted afresh (a holder's last write now matches nothing)
    task.baseline_owner, task.baseline_lease_expires_at, task.baseline_attempts = "", None, 0
    Competition.objects.filter(pk=task.competition_id).update(baseline_score=score)
    task.competition.baseline_score = score

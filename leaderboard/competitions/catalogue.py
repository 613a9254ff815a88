"""Import the MLE-bench competition catalogue: configs, descriptions, Kaggle leaderboards, splits.

The catalogue directory is an MLE-bench checkout's `mlebench/competitions` layout
(`<id>/config.yaml`, `<id>/description.md`, `<id>/leaderboard.csv`) plus split lists
(`splits/*.txt`, or MLE-bench's `experiments/splits/*.txt`). Any bad file stops the whole import
with an error naming the file and line; the import runs in one transaction, so nothing is left
half-imported, and running it again updates in place.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from django.db import transaction

from leaderboard.models import Benchmark, Competition, CompetitionAnswers, HumanScore, LeaderboardKind, Split

MLE_BENCH = {"slug": "mle-bench", "name": "MLE-bench", "url": "https://github.com/openai/mle-bench"}
# Display names and order of MLE-bench's split files; unknown split files are imported as they are.
SPLIT_NAMES = {
    "low": ("Lite (low)", "The 22 low-complexity competitions: MLE-bench Lite"),
    "medium": ("Medium", "38 medium-complexity competitions"),
    "high": ("High", "15 high-complexity competitions"),
    "split75": ("All 75", "The full benchmark"),
    "dev": ("Dev", "Development competitions outside the benchmark"),
    "systemcard": ("System card", "The 30 competitions of OpenAI's system cards"),
    "spaceship-titanic": ("Spaceship Titanic", "A one-competition smoke test"),
    "smoke": ("Smoke", "Small competitions from scikit-learn's bundled data sets; reference leaderboards, "
                       "not Kaggle humans"),
}
KAGGLE_API_COLUMNS = {"scoreNullable", "teamId", "hasTeamName", "submissionDate", "score", "hasScore"}


class CatalogueError(Exception):
    """A catalogue file is malformed; the message names the file and, where known, the line."""


@dataclass
class ImportSummary:
    competitions: int = 0
    leaderboards: int = 0
    human_scores: int = 0
    splits: dict[str, int] = field(default_factory=dict)
    without_leaderboard: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # ids a research task holds: never taken over


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise CatalogueError(f"{where}: score {text!r} is not a number") from None
    if not math.isfinite(value):
        raise CatalogueError(f"{where}: score {text!r} is not a finite number")
    return value


def read_leaderboard(path: Path) -> list[tuple[int | None, float]]:
    """(rank, score) rows, best first, from `rank,score` or Kaggle's API leaderboard format."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            columns = set(reader.fieldnames or [])
            if {"rank", "score"} <= columns:
                kaggle = False
            elif KAGGLE_API_COLUMNS <= columns:
                kaggle = True
            else:
                raise CatalogueError(
                    f"{path}:1: expected columns 'rank,score' or Kaggle's "
                    f"'{','.join(sorted(KAGGLE_API_COLUMNS))}', found {sorted(columns)}"
                )
            rows = [_leaderboard_row(row, kaggle, f"{path}:{reader.line_num}") for row in reader]
    except UnicodeDecodeError as exc:
        raise CatalogueError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except csv.Error as exc:
        raise CatalogueError(f"{path}: malformed CSV ({exc})") from None
    if not rows:
        raise CatalogueError(f"{path}: the leaderboard has no rows")
    return rows


def _leaderboard_row(row: dict, kaggle: bool, where: str) -> tuple[int | None, float]:
    if None in row:
        raise CatalogueError(f"{where}: more fields than the header has")
    if kaggle:
        return None, _number((row.get("score") or "").strip(), where)
    rank_text = (row.get("rank") or "").strip()
    try:
        rank = int(float(rank_text)) if rank_text else None
    except ValueError:
        raise CatalogueError(f"{where}: rank {rank_text!r} is not a number") from None
    return rank, _number((row.get("score") or "").strip(), where)


def read_config(path: Path) -> dict:
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else "?"
        raise CatalogueError(f"{path}:{line}: malformed YAML ({exc.problem})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CatalogueError(f"{path}: malformed YAML ({exc})") from None
    if not isinstance(config, dict) or not str(config.get("id") or "").strip():
        raise CatalogueError(f"{path}:1: a competition config needs an 'id'")
    return config


def find_split_dir(catalogue_dir: Path) -> Path | None:
    for candidate in (
        catalogue_dir / "splits",
        catalogue_dir / "experiments" / "splits",
        catalogue_dir.parent.parent / "experiments" / "splits",  # <checkout>/mlebench/competitions
    ):
        if candidate.is_dir():
            return candidate
    return None


def find_competitions_dir(catalogue_dir: Path) -> Path:
    for candidate in (catalogue_dir / "competitions", catalogue_dir / "mlebench" / "competitions", catalogue_dir):
        if candidate.is_dir() and any(candidate.glob("*/config.yaml")):
            return candidate
    raise CatalogueError(f"{catalogue_dir}: no competition folders (<id>/config.yaml) found")


def read_splits(split_dir: Path, known_ids: set[str]) -> dict[str, list[str]]:
    splits = {}
    for path in sorted(split_dir.glob("*.txt")):
        ids = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            competition_id = line.strip()
            if not competition_id or competition_id.startswith("#"):
                continue
            if competition_id not in known_ids:
                raise CatalogueError(f"{path}:{number}: unknown competition id {competition_id!r}")
            ids.append(competition_id)
        splits[path.stem] = ids
    return splits


@dataclass
class _Folder:
    config: dict
    description: str
    leaderboard: list[tuple[int | None, float]]


def _read_folder(folder: Path) -> _Folder:
    config_path = folder / "config.yaml"
    if not config_path.is_file():
        raise CatalogueError(f"{config_path}: missing config.yaml")
    config = read_config(config_path)
    description_path = folder / "description.md"
    description = description_path.read_text(encoding="utf-8") if description_path.is_file() else ""
    leaderboard_path = folder / "leaderboard.csv"
    leaderboard = read_leaderboard(leaderboard_path) if leaderboard_path.is_file() else []
    return _Folder(config, description, leaderboard)


def import_catalogue(catalogue_dir: Path, data_dir: Path | None = None) -> ImportSummary:
    """Read every file first, then write everything in one transaction."""
    catalogue_dir = Path(catalogue_dir)
    competitions_dir = find_competitions_dir(catalogue_dir)
    folders = {}
    for folder in sorted(p.parent for p in competitions_dir.glob("*/config.yaml")):
        parsed = _read_folder(folder)
        folders[str(parsed.config["id"]).strip()] = parsed
    for folder in sorted(p for p in competitions_dir.iterdir() if p.is_dir()):
        if not (folder / "config.yaml").exists() and (folder / "leaderboard.csv").exists():
            raise CatalogueError(f"{folder / 'config.yaml'}: missing config.yaml")
    split_dir = find_split_dir(catalogue_dir)
    splits = read_splits(split_dir, set(folders)) if split_dir else {}
    with transaction.atomic():
        return _write(folders, splits, data_dir)


def _write(folders: dict[str, _Folder], splits: dict[str, list[str]], data_dir: Path | None) -> ImportSummary:
    summary = ImportSummary()
    benchmark, _ = Benchmark.objects.update_or_create(slug=MLE_BENCH["slug"], defaults=MLE_BENCH)
    held = _held_by_research_tasks(folders)
    if held:  # import_research_tasks refuses a competition's id; the other order is refused here
        summary.skipped = sorted(held)
        folders = {cid: f for cid, f in folders.items() if cid not in held}
        splits = {slug: [cid for cid in ids if cid not in held] for slug, ids in splits.items()}
    competitions = {cid: _write_competition(benchmark, cid, f, data_dir) for cid, f in folders.items()}
    HumanScore.objects.filter(competition__in=competitions.values()).delete()
    HumanScore.objects.bulk_create(_human_scores(competitions, folders), batch_size=5000)
    for competition_id, folder in folders.items():
        summary.competitions += 1
        if folder.leaderboard:
            summary.leaderboards += 1
            summary.human_scores += len(folder.leaderboard)
        else:
            summary.without_leaderboard.append(competition_id)
    order = list(SPLIT_NAMES)
    for slug, ids in splits.items():
        name, description = SPLIT_NAMES.get(slug, (slug, ""))
        split, _ = Split.objects.update_or_create(
            benchmark=benchmark,
            slug=slug,
            defaults={"name": name, "description": description,
                      "position": order.index(slug) if slug in order else len(order)},
        )
        split.competitions.set([competitions[cid] for cid in ids])
        summary.splits[slug] = len(ids)
    return summary


def _held_by_research_tasks(folders: dict[str, _Folder]) -> set[str]:
    """The catalogue's ids that research tasks already hold: importing them would turn the task into an
    MLE-bench competition that keeps the task's env as public data, its scripts and its split."""
    return set(Competition.objects.filter(slug__in=list(folders), kind=Competition.Kind.RESEARCH)
               .values_list("slug", flat=True))


def _write_competition(benchmark: Benchmark, competition_id: str, folder: _Folder, data_dir: Path | None):
    config = folder.config
    grader = config.get("grader") or {}
    competition, _ = Competition.objects.update_or_create(
        slug=competition_id,
        defaults={
            "benchmark": benchmark,
            "name": str(config.get("name") or competition_id).strip(),
            "kind": Competition.Kind.KAGGLE,
            "description": folder.description,
            "competition_type": str(config.get("competition_type") or ""),
            "awards_medals": bool(config.get("awards_medals")),
            "prizes": config.get("prizes") or [],
            "config_metric": str(grader.get("name") or ""),
            "grade_fn": str(grader.get("grade_fn") or ""),
            "leaderboard_kind": _leaderboard_kind(config, competition_id),
        },
    )
    competition.set_leaderboard_summary([score for _, score in folder.leaderboard])
    competition.save()
    if data_dir is not None:
        _register_answers(competition, config.get("dataset") or {}, Path(data_dir))
        _register_public_data(competition, Path(data_dir))
    return competition


def _leaderboard_kind(config: dict, competition_id: str) -> str:
    """A config's `leaderboard_kind` (kaggle | reference); by default MLE-bench's competitions (those the
    product has a grader spec for) have Kaggle's human leaderboard and custom ones a reference leaderboard
    of their own, whatever grade_fn a config copied from MLE-bench's template names."""
    from leaderboard.grading.specs import is_mle_bench

    default = LeaderboardKind.KAGGLE if is_mle_bench(competition_id) else LeaderboardKind.REFERENCE
    kind = str(config.get("leaderboard_kind") or default).strip().lower()
    if kind not in LeaderboardKind.values:
        raise CatalogueError(f"{competition_id}/config.yaml: leaderboard_kind {kind!r} is not one of "
                             f"{', '.join(LeaderboardKind.values)}")
    return kind


def _register_public_data(competition: Competition, data_dir: Path) -> None:
    """ROOT/<id>/prepared/public/: what a sandbox mounts. Left as it was when the folder is not there."""
    public = data_dir / competition.slug / "prepared" / "public"
    if public.is_dir():
        competition.public_data_dir = str(public.resolve())
        competition.save(update_fields=["public_data_dir"])


def _register_answers(competition: Competition, dataset: dict, data_dir: Path) -> None:
    def resolve(key: str) -> str:
        relative = dataset.get(key)
        return str((data_dir / relative).resolve()) if relative else ""

    CompetitionAnswers.objects.update_or_create(
        competition=competition,
        defaults={
            "answers_path": resolve("answers"),
            "sample_submission_path": resolve("sample_submission"),
            "gold_submission_path": resolve("gold_submission"),
        },
    )


def _human_scores(competitions: dict[str, Competition], folders: dict[str, _Folder]) -> Iterable[HumanScore]:
    for competition_id, folder in folders.items():
        competition = competitions[competition_id]
        for position, (rank, score) in enumerate(folder.leaderboard, start=1):
            yield HumanScore(competition=competition, position=position, rank=rank or position, score=score)

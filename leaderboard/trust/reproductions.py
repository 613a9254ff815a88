"""Does a reproduction of an experiment reproduce it? The original and the re-run side by side.

Per competition the two are paired by seed (a reproduction re-runs the same seeds): each side's
mean score ± SEM over the seeds both scored, the difference with a paired t-test and a Wilcoxon
test (leaderboard.analysis.paired), and each side's medal rate. Overall, the medal rate and the
share of humans beaten are paired by competition, as two experiments are compared anywhere else.

The badge (docs/trust.md, Reproductions):
- pending: some task of the reproduction's jobs has not finished (the runner says so through the
  progress source it registers; without one nothing is pending);
- reproduced: on every competition of the original that the reproduction ran, the mean score of
  the reproduction is within the seeds' spread of the original's: |mean B - mean A| <= 2 SEM(A),
  SEM(A) being the standard error of the original's scores over those seeds (sample standard
  deviation / sqrt(n)). With one seed, or seeds that all scored alike, the spread is 0 and only
  the same score (to a relative 1e-9) reproduces;
- not reproduced: otherwise: a mean outside the spread, a seed scored on one side only, or a
  competition of the original on which the reproduction has no score at all.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from leaderboard.analysis import paired
from leaderboard.analysis.stats import Estimate, mean_sem
from leaderboard.models import Experiment, Run

PENDING, REPRODUCED, NOT_REPRODUCED = "pending", "reproduced", "not reproduced"
# What, in the runs' recipes (runner.jobs.recipes), says the two did not run the same thing.
RECIPE_KEYS = ("agent.version", "agent.image_id", "model", "data.version", "time_limit_s", "sandbox.backend",
               "sandbox.runtime", "hardware.gpu_names")  # the GPU models the sandboxes were given
UNFINISHED_RUNS = (Run.Status.PENDING, Run.Status.RUNNING, Run.Status.GRADING)
SPREAD_SEMS = 2.0
EXACT = 1e-9  # relative: what "the same score" allows for floating point

ProgressSource = Callable[[list[int]], dict[int, int]]
_progress_source: ProgressSource | None = None


def set_progress_source(source: ProgressSource | None) -> None:
    global _progress_source
    _progress_source = source


def unfinished(experiment_ids: list[int]) -> dict[int, int]:
    """{experiment id: tasks of its jobs not finished}, from the runner's source (none: nothing)."""
    return _progress_source(experiment_ids) if _progress_source and experiment_ids else {}


@dataclass
class CompetitionRow:
    competition_id: int
    seeds: list[int]  # scored on both sides
    original: Estimate
    reproduction: Estimate
    score_test: paired.PairedTest  # reproduction - original, paired by seed
    original_medal_rate: float | None
    reproduction_medal_rate: float | None
    one_sided: list[int] = field(default_factory=list)  # seeds scored on one side only

    @property
    def tolerance(self) -> float | None:
        """How far the reproduction's mean may lie from the original's: 2 SEM(A), 0 without a spread."""
        if self.original.mean is None:
            return None
        return SPREAD_SEMS * (self.original.sem or 0.0) + EXACT * max(1.0, abs(self.original.mean))

    @property
    def within(self) -> bool:
        if self.one_sided or not self.seeds:
            return False
        return abs(self.reproduction.mean - self.original.mean) <= self.tolerance

    @property
    def score_diff(self) -> float | None:
        return self.score_test.mean_diff


@dataclass
class Assessment:
    badge: str
    rows: list[CompetitionRow]
    overall: paired.Comparison
    unfinished_tasks: int = 0
    changed: list[str] = field(default_factory=list)  # RECIPE_KEYS whose values differ between the two

    @property
    def outside(self) -> list[int]:
        """The competitions outside the seeds' spread (ids)."""
        return [row.competition_id for row in self.rows if not row.within]

    @property
    def original_medal_rate(self) -> float | None:
        """Mean over the competitions both ran of the original's medal rate (%)."""
        return _mean([a.medal_rate for _, a, _ in self.overall.rows])

    @property
    def reproduction_medal_rate(self) -> float | None:
        return _mean([b.medal_rate for _, _, b in self.overall.rows])


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def assess(original: Iterable[Run], reproduction: Iterable[Run], *, unfinished_tasks: int = 0) -> Assessment:
    """Runs of the original and of the reproduction, oldest first (the latest graded run of a seed
    counts). Only the original's runs from jobs are compared: uploaded ones were never re-run."""
    a = _latest(r for r in original if r.origin == Run.Origin.JOB)
    b = _latest(reproduction)
    rows = [_row(c, a[c], b.get(c, {})) for c in sorted(a)]
    overall = paired.compare(_flat(a), _flat(b), set(a))
    if unfinished_tasks:
        badge = PENDING
    elif rows and all(row.within for row in rows):
        badge = REPRODUCED
    else:
        badge = NOT_REPRODUCED
    return Assessment(badge=badge, rows=rows, overall=overall, unfinished_tasks=unfinished_tasks,
                      changed=changed_in_recipes(_flat(a), _flat(b)))


def changed_in_recipes(original: list[Run], reproduction: list[Run]) -> list[str]:
    """The recipe keys whose values (over each side's runs that have a recipe) are not the same."""
    def values(runs: list[Run], key: str) -> set[str]:
        return {repr(_dig(run.recipe, key)) for run in runs if run.recipe}

    if not any(r.recipe for r in original) or not any(r.recipe for r in reproduction):
        return []
    return [key for key in RECIPE_KEYS if values(original, key) != values(reproduction, key)]


def _dig(recipe: dict, key: str):
    for part in key.split("."):
        recipe = recipe.get(part) if isinstance(recipe, dict) else None
    return recipe


def _latest(runs: Iterable[Run]) -> dict[int, dict[int, Run]]:
    by_competition: dict[int, dict[int, Run]] = defaultdict(dict)
    for run in runs:
        if run.status == Run.Status.GRADED and run.competition_id is not None:
            by_competition[run.competition_id][run.seed] = run
    return by_competition


def _flat(grid: dict[int, dict[int, Run]]) -> list[Run]:
    return [run for by_seed in grid.values() for run in by_seed.values()]


def _row(competition_id: int, a: dict[int, Run], b: dict[int, Run]) -> CompetitionRow:
    scored_a = {s for s, r in a.items() if r.score is not None}
    scored_b = {s for s, r in b.items() if r.score is not None}
    seeds = sorted(scored_a & scored_b)
    xs, ys = [a[s].score for s in seeds], [b[s].score for s in seeds]
    return CompetitionRow(
        competition_id=competition_id, seeds=seeds, original=mean_sem(xs), reproduction=mean_sem(ys),
        score_test=paired.paired_test(xs, ys), one_sided=sorted(scored_a ^ scored_b),
        original_medal_rate=_medal_rate(a), reproduction_medal_rate=_medal_rate(b),
    )


def _medal_rate(by_seed: dict[int, Run]) -> float | None:
    return 100.0 * sum(r.any_medal for r in by_seed.values()) / len(by_seed) if by_seed else None


def reproductions_of(experiment: Experiment, user) -> list[tuple[Experiment, Assessment]]:
    """Each reproduction of `experiment` with its assessment, from the runs `user` may see; one with
    nothing visible is left out once it is no longer pending (its runs are private to others)."""
    reproductions = list(experiment.reproductions.select_related("owner", "team").order_by("created_at", "pk"))
    if not reproductions:
        return []
    runs = list(Run.objects.visible_to(user).filter(experiment_id__in=[experiment.pk, *(r.pk for r in reproductions)])
                .order_by("created_at", "pk"))
    left = unfinished([r.pk for r in reproductions])
    in_progress: dict[int, int] = defaultdict(int)
    for run in runs:  # a run still being graded keeps its reproduction pending, whatever its task says
        if run.status in UNFINISHED_RUNS and run.experiment_id != experiment.pk:
            in_progress[run.experiment_id] += 1
    left = {pk: max(left.get(pk, 0), in_progress[pk]) for pk in {*left, *in_progress}}
    original = [run for run in runs if run.experiment_id == experiment.pk]
    found = []
    for reproduction in reproductions:
        own = [run for run in runs if run.experiment_id == reproduction.pk]
        if own or left.get(reproduction.pk):
            found.append((reproduction, assess(original, own, unfinished_tasks=left.get(reproduction.pk, 0))))
    return found


def can_be_reproduced(runs: Iterable[Run]) -> bool:
    """Only runs from jobs have a job to submit again; an experiment of uploads says so instead."""
    return any(run.origin == Run.Origin.JOB for run in runs)


def may_reproduce(user, experiment: Experiment) -> bool:
    """Staff, or the experiment's owner."""
    if user is None or not user.is_authenticated:
        return False
    return bool(user.is_staff or (experiment.owner_id is not None and experiment.owner_id == user.pk))


def visible_original(experiment: Experiment, user) -> Experiment | None:
    """The experiment this one reproduces, if `user` may see it."""
    if experiment.reproduces_id is None:
        return None
    return Experiment.objects.visible_to(user).filter(pk=experiment.reproduces_id).first()

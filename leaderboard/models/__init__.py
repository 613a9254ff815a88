"""The data model of the whole product, one module per area; this file only re-exports (import from here).

- base: the numeric ranges input is checked against, the user model's name
- catalogue: Benchmark -> Split <-> Competition -> HumanScore (the Kaggle private leaderboard); the private
  answer locations apart in CompetitionAnswers, so nothing that shows a competition reaches them by accident
- experiments: Agent x LanguageModel x hardware x time limit x settings = Experiment, owned by a user or Team
- runs: Run (one competition, one seed), its Artifacts, Snapshots and the RunIntake of an upload
- trajectories: the typed steps of every agent (StepKind), one file per Trajectory indexed by StepBlocks
- changes: the one announcement the models make (the run keys a write changed); the aggregates listen
The models of other areas live beside their code (aggregates, research tasks, the search index, trust
findings, code similarity) and are imported here so Django registers them with the app.
docs/architecture.md draws how the pieces connect.
"""

from leaderboard.analysis.aggregates.models import (
    LeaderboardVersion,
    SeedAggregate,
)
from leaderboard.competitions.research_models import (
    ResearchTask,
)
from leaderboard.models import changes
from leaderboard.models.base import (
    INT32_MAX,
    INT64_MAX,
    MAX_MEMORY_GB,
    MAX_TIME_LIMIT_HOURS,
    USER_MODEL,
)
from leaderboard.models.catalogue import (
    Benchmark,
    Competition,
    CompetitionAnswers,
    CompetitionQuerySet,
    CompetitionVersion,
    HumanScore,
    LeaderboardKind,
    Split,
)
from leaderboard.models.experiments import (
    Agent,
    Disclosure,
    Experiment,
    ExperimentQuerySet,
    LanguageModel,
    Team,
    owner_key,
)
from leaderboard.models.runs import (
    Artifact,
    MedalFlags,
    Run,
    RunIntake,
    RunQuerySet,
    Snapshot,
)
from leaderboard.models.trajectories import (
    StepBlock,
    StepKind,
    Trajectory,
)
from leaderboard.questions.models import (
    RunSummary,
    SavedQuestion,
)
from leaderboard.search.models import (
    StepText,
)
from leaderboard.trust.models import (
    Finding,
    FindingReview,
)
from leaderboard.trust.similarity.models import (
    CodeFingerprint,
    CodeHashCount,
    CodeMatch,
    CodePosting,
    ReferenceCode,
)

__all__ = [
    "Agent",
    "Artifact",
    "Benchmark",
    "CodeFingerprint",
    "CodeHashCount",
    "CodeMatch",
    "CodePosting",
    "Competition",
    "CompetitionAnswers",
    "CompetitionQuerySet",
    "CompetitionVersion",
    "Disclosure",
    "Experiment",
    "ExperimentQuerySet",
    "Finding",
    "FindingReview",
    "HumanScore",
    "INT32_MAX",
    "INT64_MAX",
    "LanguageModel",
    "LeaderboardKind",
    "LeaderboardVersion",
    "MAX_MEMORY_GB",
    "MAX_TIME_LIMIT_HOURS",
    "MedalFlags",
    "ReferenceCode",
    "ResearchTask",
    "RunSummary",
    "Run",
    "RunIntake",
    "RunQuerySet",
    "SavedQuestion",
    "SeedAggregate",
    "Snapshot",
    "Split",
    "StepBlock",
    "StepKind",
    "StepText",
    "Team",
    "Trajectory",
    "USER_MODEL",
    "owner_key",
    "changes",
]

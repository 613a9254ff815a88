"""Where a run's steps live: one JSONL file per trajectory in artifact storage, indexed by blocks.

    write_steps(run, steps)                 # writing.py: the importers' steps -> file + index
    live = LiveTrajectory(run); live.append(new_steps)   # a run's steps while it works (runners)
    stored = StoredTrajectory.of(run)       # reading.py: windows, pages, search, single steps
    for step in stored.steps(start=0, kinds=["code"]): ...

The file holds one line per step in Medalboard's own JSONL step format (docs/trajectory-format.md),
so the trajectory download is the file itself behind a header line. The database holds a
`Trajectory` row (file name, kind counts, outline) and one `StepBlock` row per block of up to
BLOCK_STEPS consecutive steps (first index, count, byte range, kinds in it). A window of steps
reads and decodes one or two blocks; a filter by kind skips the blocks that hold none.

Why not one database row per step: writing 100 MB of step text into SQLite costs about 3x parsing
it with orjson, and 100,000 rows cost about 2x more, while appending it to a file costs 0.5x
(benchmarks/ingest.py measures the whole import against the parse).

The outline (tree-search nodes, score points, which code step is the best or last) is built while
the file is written, so the tree, the score chart and the compare page never scan the trajectory.
"""

from leaderboard.trajectories.store.reading import (
    Block,
    StoredStep,
    StoredTrajectory,
    outline_of,
    read_steps_at,
)
from leaderboard.trajectories.store.writing import (
    BLOCK_BYTES,
    BLOCK_STEPS,
    OUTLINE_LIMIT,
    LiveTrajectory,
    Writer,
    delete_file,
    new_file_name,
    write_file,
    write_steps,
    write_trajectory,
)

__all__ = [
    "BLOCK_BYTES", "BLOCK_STEPS", "OUTLINE_LIMIT", "Block", "LiveTrajectory",
    "StoredStep", "StoredTrajectory", "Writer", "delete_file",
    "new_file_name", "outline_of", "read_steps_at", "write_file", "write_steps", "write_trajectory",
]

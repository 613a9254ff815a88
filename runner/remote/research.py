"""A research task (MLAgentBench's layout) on a remote runner, which holds its env/ and nothing more.

The claim of a research task carries `research` (runner.api_v1.research.claim_part): the problem, the
read-only files with their hashes, the research environment and the snapshots' pace. Its env/ comes
as any competition's public data (runner.remote.data: each file by its hash, verified, cached); the
task's scripts/ (eval.py, the answers) never reach the runner: the site scores the run.

- `prepare`: the agent's sandbox (runner.research.sandbox): a
  writable workspace copied from the cached env/, the problem at DATA_DIR, the read-only files.
- `snapshots`: the workspace's snapshots while the agent runs (runner.research.sandbox.Snapshots).
- `wrap_up`: at the end, each snapshot as `workspace-snapshots/<seconds>.zip` (redacted; the zips
  within a quarter of the run's output total, charged to it, so with the final workspace, which
  runner.host.outputs keeps as `workspace/<path>`, they stay within what the site takes), and the report
  only the runner can make: the read-only files the agent changed, the files of the final workspace
  that the eval's copy leaves out (past the limits by their real size, so stored cut), the agent's
  time, whether it wrote submission.csv.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runner.backends import Backend, SandboxSpec
from runner.host.output_budget import Budget
from runner.host.outputs import Limits
from runner.host.secrets import Redactor
from runner.research import sandbox, workspace
from runner.research.sandbox import SNAPSHOT_SHARE, Snapshots

STEPS_FOLDER = "workspace-snapshots"  # the site's name for them (leaderboard.runs.research_traces)


def prepare(claim: dict, spec: SandboxSpec, backend: Backend) -> SandboxSpec:
    """The sandbox of a research task from its claim; `spec.data_dir` is the cached env/."""
    part = claim["research"]
    spec = sandbox.prepare(
        spec,
        backend,
        env_dir=spec.data_dir,
        problem=part["problem"],
        description=part["description"],
        read_only_files=part["read_only_files"],
    )
    if part["environment"] == "none":  # the agent's own image and the runner's Python
        return spec
    return sandbox.in_environment(spec, backend, flavour=part["environment"], default_image=part["default_image"])


def snapshots(claim: dict, spec: SandboxSpec) -> Snapshots | None:
    part = claim.get("research")
    if not part:
        return None
    limits = Limits(**{k: claim["limits"][k] for k in ("file_bytes", "total_bytes", "files")})
    return Snapshots(spec, every_s=part["snapshot_every_s"], most=part["max_snapshots"], limits=limits)


@dataclass
class WrapUp:
    files: list[tuple[str, str, Path]] = field(default_factory=list)  # (kind, name, path) to upload
    bytes: int = 0
    report: dict = field(default_factory=dict)  # merged into the finish

    def charged(self, spent: Budget | None) -> Budget | None:
        """What the run's outputs have left once the zips are counted (as runner.host.outputs reads `spent`)."""
        if not self.files:
            return spent
        total, count = (spent.total, spent.count) if spent else (0, 0)
        return Budget(0, 0, 0, total=total + self.bytes, count=count + len(self.files))


def wrap_up(
    claim: dict,
    spec: SandboxSpec,
    taken: Snapshots | None,
    redactor: Redactor,
    limits: Limits,
    elapsed_s: float | None,
) -> WrapUp:
    """The snapshots' zips and the research report (an empty WrapUp for a competition)."""
    part = claim.get("research")
    if not part or spec.workspace_dir is None:
        return WrapUp()
    done = WrapUp()
    notes = taken.notes if taken else []
    for seconds, files in taken.taken if taken else []:
        name = f"{STEPS_FOLDER}/{seconds_name(seconds)}.zip"
        archive = spec.runner_dir / f"snapshot-{seconds_name(seconds)}.zip"
        sandbox.zip_files(files, archive, redactor)
        size = archive.stat().st_size
        if size > limits.file_bytes or done.bytes + size > limits.total_bytes // SNAPSHOT_SHARE:
            archive.unlink()
            notes.append(f"{name}: not kept, past the snapshots' share of the run's output limits")
            continue  # its time is known, its files are too many to keep
        done.files.append(("other", name, archive))
        done.bytes += size
    changes = workspace.read_only_changes(spec.workspace_dir, part["read_only_files"])
    left_out = workspace.left_out_of_grading(spec.workspace_dir, set(part["read_only_files"]), Budget.share_of(limits))
    done.report = {
        "research": {
            "read_only_changes": [redactor.text(change) for change in changes],
            "left_out": [[redactor.text(rel), why] for rel, why in left_out],  # stored cut: the eval's copy skips them
            "elapsed_s": round(elapsed_s, 3) if elapsed_s is not None else None,
            "has_submission": (spec.workspace_dir / "submission.csv").is_file(),
        }
    }
    return done


def seconds_name(seconds: float) -> str:
    """12.5 -> "12.5", 30.0 -> "30" (never an exponent form), as the site names a snapshot's zip."""
    return f"{seconds:.1f}".removesuffix(".0")

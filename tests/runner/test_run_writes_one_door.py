"""The runner writes a job's run through one door: no module of runner/ creates, updates or deletes a
Run row itself (`Run.objects...create/update/delete`, `Run(...)`); leaderboard.runs.job_runs does, so
what a job does to its run is the list of functions there. Migrations are history and keep theirs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WRITES = {"create", "get_or_create", "update_or_create", "bulk_create", "update", "bulk_update", "delete"}


def run_writes(source: str) -> list[int]:
    """Lines where `source` writes Run rows through the ORM."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id == "Run":
            found.append(node.lineno)
        elif isinstance(node.func, ast.Attribute) and node.func.attr in WRITES and _on_run_manager(node.func.value):
            found.append(node.lineno)
    return found


def _on_run_manager(node: ast.AST) -> bool:
    """Whether an expression is `Run.objects`, or a chain of calls on it (`.filter(...)`, `.select_for_update()`)."""
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            if node.attr == "objects" and isinstance(node.value, ast.Name) and node.value.id == "Run":
                return True
            node = node.value
        else:
            return False


def test_no_module_of_the_runner_writes_a_run_itself():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "runner").rglob("*.py"))
        if "migrations" not in path.parts
        for line in run_writes(path.read_text())
    ]
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        "Run.objects.filter(pk=1).update(status='failed')",
        "Run.objects.filter(pk=1, status__in=x).select_for_update().update(score=None)",
        "Run.objects.create(seed=0)",
        "Run.objects.get(pk=1).delete()",
        "def f():\n    Run(seed=0).save()",
    ],
)
def test_a_run_write_is_found(source):
    assert run_writes(source)


@pytest.mark.parametrize(
    "source",
    [
        "Run.objects.get(pk=1)",
        "Runner.objects.filter(pk=1).update(status='offline')",
        "JobTask.objects.filter(run_id=1).update(error='x')",
        "job_runs.fail_job_run(1, 'why')",
    ],
)
def test_a_read_or_another_model_is_not_a_run_write(source):
    assert run_writes(source) == []

"""The import rules of docs/architecture.md ("Which package may import which"), checked over every
module of leaderboard/, runner/ and webapp/ by parsing it: imports inside functions count too, since a
lazy import is still a dependency."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD_BELOW_WEB = ("leaderboard.lib", "leaderboard.models", "leaderboard.competitions.medals")

# What each part may import of the project, besides itself (prefixes of dotted module names).
# Third-party and standard-library imports are not the rules' concern.
ALLOWED: dict[str, tuple[str, ...]] = {
    # bottom: pure helpers and the medal rules; they import nothing of the project
    "lib": (),
    "medals": (),
    # the models' save and delete hooks keep the aggregates and the trajectory files in step
    "models": ("leaderboard.lib", "leaderboard.competitions.medals", "leaderboard.analysis.aggregates",
               "leaderboard.trajectories.store", "leaderboard.trust.models", "leaderboard.trust.similarity.models",
               "leaderboard.competitions.research_models", "leaderboard.search.models"),
    "grading": LEADERBOARD_BELOW_WEB,
    # the store keeps the search index in step as it writes steps
    "trajectories": ("leaderboard.lib", "leaderboard.models", "leaderboard.search.index"),
    # search across runs and failure signatures read runs and their stored steps
    "search": (*LEADERBOARD_BELOW_WEB, "leaderboard.trajectories"),
    "failures": (*LEADERBOARD_BELOW_WEB, "leaderboard.trajectories", "leaderboard.search"),
    "analysis": LEADERBOARD_BELOW_WEB,
    "competitions": (*LEADERBOARD_BELOW_WEB, "leaderboard.grading", "leaderboard.analysis"),
    # rule checks, code similarity, disclosures, reproductions: they read runs and trajectories
    "trust": (*LEADERBOARD_BELOW_WEB, "leaderboard.grading", "leaderboard.trajectories", "leaderboard.analysis",
              "leaderboard.competitions", "webapp.celery"),
    # the write side: everything below it, the Celery app to publish its tasks, and the one lease
    # machine (webapp.leases, which imports nothing of the apps) to claim gradings and imports
    "runs": (*LEADERBOARD_BELOW_WEB, "leaderboard.grading", "leaderboard.trajectories", "leaderboard.analysis",
             "leaderboard.competitions", "leaderboard.trust", "leaderboard.tasks", "webapp.celery", "webapp.leases"),
    # pages, API, admin, commands: all of leaderboard, never the runner
    "web": ("leaderboard", "webapp.celery"),
    "api": ("leaderboard", "webapp.celery"),
    "top": ("leaderboard", "webapp.celery"),
    # the runner reaches its runs through one door, and claims its tasks with the one lease machine
    "runner": ("leaderboard.models", "leaderboard.runs.job_runs", "runner", "webapp.celery", "webapp.parsers",
               "webapp.maintenance", "webapp.leases"),
    # the lease machine works on whatever model it is given: it imports nothing of the project
    "leases": (),
    # settings, URL map, Celery app and the site-wide sweep join the two apps
    "webapp": ("leaderboard", "runner", "webapp"),
}
PROJECT = ("leaderboard", "runner", "webapp")


def part_of(module: str) -> str:
    """Which rule a module follows."""
    parts = module.split(".")
    if module == "webapp.leases":
        return "leases"
    if parts[0] in ("runner", "webapp"):
        return parts[0]
    if module.startswith("leaderboard.competitions.medals"):
        return "medals"
    if module == "leaderboard.tasks":
        return "runs"  # the runs' Celery tasks, where Celery looks for them
    sub = parts[1] if len(parts) > 1 else ""
    if sub == "templatetags":
        return "web"
    if sub in ALLOWED:
        return sub
    return "top"  # admin, apps, management commands, the package itself


def imports_of(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, dotted name) for every import of the project in `source`, relative ones resolved;
    `from a.b import c` gives a.b.c, which is the module a.b.c or a name in a.b: the rules name
    modules, so either way the prefix decides."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]  # a module, or a name in one
            found += [(node.lineno, name) for name in names]
    return [(line, name) for line, name in found if name.split(".")[0] in PROJECT]


def allowed(importer: str, imported: str) -> bool:
    rule = part_of(importer)
    if part_of(imported) == rule:
        return True
    return any(imported == prefix or imported.startswith(prefix + ".") for prefix in ALLOWED[rule])


def project_modules():
    for top in PROJECT:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            yield path, dotted.removesuffix(".__init__"), path.name == "__init__.py"


def violations() -> list[str]:
    found = []
    for path, module, is_package in project_modules():
        for line, imported in imports_of(path.read_text(), module, is_package):
            if not allowed(module, imported):
                found.append(f"{path.relative_to(ROOT)}:{line}: {module} ({part_of(module)}) imports {imported}")
    return found


def test_every_module_keeps_the_import_rules():
    assert violations() == []


def test_every_part_has_a_rule():
    parts = {part_of(module) for _, module, _ in project_modules()}
    assert parts <= set(ALLOWED)
    assert {"lib", "grading", "trajectories", "analysis", "competitions", "runs", "web", "api", "runner"} <= parts


@pytest.mark.parametrize(("importer", "source", "refused"), [
    ("leaderboard.grading.engine", "from leaderboard.web import charts", "leaderboard.web.charts"),
    ("leaderboard.grading.engine", "def f():\n    from leaderboard.api.runs import x", "leaderboard.api.runs"),
    ("runner.execution", "from leaderboard.runs.submission import submit_run", "leaderboard.runs.submission"),
    ("runner.live", "from leaderboard import tasks", "leaderboard.tasks"),
    ("leaderboard.runs.intake", "import runner.leases", "runner.leases"),
    ("leaderboard.trajectories.importers.aide", "from leaderboard.runs import artifacts",
     "leaderboard.runs.artifacts"),
    ("leaderboard.lib.archives", "from leaderboard.models import Run", "leaderboard.models"),
    ("leaderboard.analysis.stats", "from ..web import charts", "leaderboard.web.charts"),
])
def test_a_forbidden_import_is_found(importer, source, refused):
    imported = [name for _, name in imports_of(source, importer)]
    assert any(name == refused or name.startswith(refused + ".") for name in imported)
    assert not any(allowed(importer, name) for name in imported)


@pytest.mark.parametrize(("importer", "imported"), [
    ("runner.execution", "leaderboard.runs.job_runs"),
    ("runner.tasks", "leaderboard.models"),
    ("leaderboard.web.views", "leaderboard.runs.submission"),
    ("leaderboard.grading.report", "leaderboard.competitions.medals"),
    ("leaderboard.runs.submission", "leaderboard.runs.artifacts"),
    ("leaderboard.grading.metrics.rle", "leaderboard.grading.validation"),
])
def test_an_allowed_import_passes(importer, imported):
    assert allowed(importer, imported)

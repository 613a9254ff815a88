"""The import rules of docs/architecture.md ("Which package may import which"), checked over every
module of leaderboard/, runner/ and webapp/ by parsing it: imports inside functions count too, since a
lazy import is still a dependency.

The same imports also make a graph of modules, and a circle in it (a strongly connected component:
modules that import each other, directly or through others) is debt. import_cycles.json lists the
circles allowed to stay, and it is empty: a new circle, or a listed one taking in another module or
another import, fails with its imports as file:line. A circle broken or shrunk is written back to
that list, so it only shrinks: `python -m tests.site.test_import_rules --write-cycles`. A circle is
broken by moving the shared piece down or by passing it in, never by moving an import into a function:
imports inside functions count here (only `if TYPE_CHECKING:` ones, which never run, do not)."""

from __future__ import annotations

import ast
import functools
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD_BELOW_WEB = ("leaderboard.lib", "leaderboard.models", "leaderboard.competitions.medals")

# What each part may import of the project, besides itself (prefixes of dotted module names).
# Third-party and standard-library imports are not the rules' concern.
ALLOWED: dict[str, tuple[str, ...]] = {
    # Celery's entry points for grading and imports: they call the runs' workflows, which enqueue them
    # by name (webapp.queue), so nothing imports them
    "tasks": ("leaderboard.models", "leaderboard.runs", "leaderboard.trust", "webapp.queue", "webapp.leases"),
    # bottom: pure helpers and the medal rules; they import nothing of the project
    "lib": (),
    "medals": (),
    # the ground floor: the models announce their changes (models.changes) and import nothing above them;
    # the package re-exports the models other areas keep beside their code, so Django registers them
    "models": ("leaderboard.lib", "leaderboard.competitions.medals", "leaderboard.analysis.aggregates.models",
               "leaderboard.trust.models", "leaderboard.trust.similarity.models",
               "leaderboard.competitions.research_models", "leaderboard.search.models",
               "leaderboard.questions.models"),
    "grading": LEADERBOARD_BELOW_WEB,
    # the store keeps the search index in step as it writes steps
    "trajectories": ("leaderboard.lib", "leaderboard.models", "leaderboard.search.index"),
    # search across runs and failure signatures read runs and their stored steps
    "search": (*LEADERBOARD_BELOW_WEB, "leaderboard.trajectories"),
    "failures": (*LEADERBOARD_BELOW_WEB, "leaderboard.trajectories", "leaderboard.search"),
    # saved questions count runs through search and failure signatures; the LLM summary reads the same
    # rows and redacts them as the judge's answers are
    "questions": (*LEADERBOARD_BELOW_WEB, "leaderboard.trajectories", "leaderboard.search", "leaderboard.failures",
                  "leaderboard.analysis", "leaderboard.trust"),
    "analysis": LEADERBOARD_BELOW_WEB,
    "competitions": (*LEADERBOARD_BELOW_WEB, "leaderboard.grading", "leaderboard.analysis"),
    # rule checks, code similarity, disclosures, reproductions: they read runs and trajectories
    "trust": (*LEADERBOARD_BELOW_WEB, "leaderboard.grading", "leaderboard.trajectories", "leaderboard.analysis",
              "leaderboard.competitions", "webapp.queue"),
    # the write side: everything below it, the Celery app to publish its tasks, and the one lease
    # machine (webapp.leases, which imports nothing of the apps) to claim gradings and imports
    "runs": (*LEADERBOARD_BELOW_WEB, "leaderboard.grading", "leaderboard.trajectories", "leaderboard.analysis",
             "leaderboard.competitions", "leaderboard.trust", "webapp.queue", "webapp.leases"),
    # pages, API, admin, commands: all of leaderboard, never the runner
    "web": ("leaderboard", "webapp.queue"),
    "api": ("leaderboard", "webapp.queue"),
    "top": ("leaderboard", "webapp.queue"),
    # the runner reaches its runs through one door, and claims its tasks with the one lease machine
    "runner": ("leaderboard.models", "leaderboard.runs.job_runs", "runner", "webapp.queue", "webapp.parsers",
               "webapp.maintenance", "webapp.leases"),
    # the lease machine works on whatever model it is given, and the queue sends tasks by name: neither
    # imports anything of the project
    "leases": (),
    # settings, URL map, Celery app and the site-wide sweep join the two apps
    "webapp": ("leaderboard", "runner", "webapp"),
}
PROJECT = ("leaderboard", "runner", "webapp")

# Inside the runner app, what each floor may not import (prefixes): the site's side of jobs and the runner
# API build on the agents, hosts and backends below them, never on the Celery entry points nor on the
# pages above them; the site's research grading side never on the runner API.
RUNNER_FLOORS: dict[str, tuple[str, ...]] = {
    "runner.agents": ("runner.jobs", "runner.api_v1", "runner.web", "runner.tasks"),
    "runner.jobs": ("runner.api_v1", "runner.web", "runner.tasks"),
    "runner.api_v1": ("runner.web", "runner.tasks"),
    "runner.research": ("runner.api_v1", "runner.web", "runner.remote"),
}


def part_of(module: str) -> str:
    """Which rule a module follows."""
    parts = module.split(".")
    if module in ("webapp.leases", "webapp.queue"):
        return "leases"
    if parts[0] in ("runner", "webapp"):
        return parts[0]
    if module.startswith("leaderboard.competitions.medals"):
        return "medals"
    if module == "leaderboard.tasks":
        return "tasks"  # where Celery looks for the leaderboard's tasks
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
    for floor, above in RUNNER_FLOORS.items():
        if _under(importer, floor) and any(_under(imported, prefix) for prefix in above):
            return False
    rule = part_of(importer)
    if part_of(imported) == rule:
        return True
    return any(imported == prefix or imported.startswith(prefix + ".") for prefix in ALLOWED[rule])


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


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
    ("runner.research.remote_runs", "from leaderboard.runs.submission import submit_run",
     "leaderboard.runs.submission"),
    ("runner.host.live", "from leaderboard import tasks", "leaderboard.tasks"),
    ("leaderboard.runs.intake", "import runner.jobs.task_leases", "runner.jobs.task_leases"),
    ("leaderboard.trajectories.importers.aide", "from leaderboard.runs import artifacts",
     "leaderboard.runs.artifacts"),
    ("leaderboard.lib.archives", "from leaderboard.models import Run", "leaderboard.models"),
    ("leaderboard.analysis.stats", "from ..web import charts", "leaderboard.web.charts"),
    ("runner.api_v1.writes", "from runner.tasks import score_trace", "runner.tasks.score_trace"),
    ("runner.research.remote_runs", "def f():\n    from runner.api_v1.writes import finish",
     "runner.api_v1.writes"),
    ("runner.agents.importer", "from runner.jobs.registry import images_present", "runner.jobs.registry"),
    ("runner.jobs.sweep", "from runner.tasks import sweep", "runner.tasks"),
])
def test_a_forbidden_import_is_found(importer, source, refused):
    imported = [name for _, name in imports_of(source, importer)]
    assert any(name == refused or name.startswith(refused + ".") for name in imported)
    assert not any(allowed(importer, name) for name in imported)


@pytest.mark.parametrize(("importer", "imported"), [
    ("runner.research.remote_runs", "leaderboard.runs.job_runs"),
    ("runner.tasks", "leaderboard.models"),
    ("leaderboard.web.views", "leaderboard.runs.submission"),
    ("leaderboard.grading.report", "leaderboard.competitions.medals"),
    ("leaderboard.runs.submission", "leaderboard.runs.artifacts"),
    ("leaderboard.grading.metrics.rle", "leaderboard.grading.validation"),
    ("runner.api_v1.claims", "runner.jobs.attempts"),
    ("runner.jobs.registry", "runner.agents.importer"),
])
def test_an_allowed_import_passes(importer, imported):
    assert allowed(importer, imported)


# --- circles -------------------------------------------------------------------------------------

CYCLES_FILE = Path(__file__).with_name("import_cycles.json")


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    path: str
    line: int
    in_function: bool

    def __str__(self) -> str:
        where = " (inside a function)" if self.in_function else ""
        return f"{self.path}:{self.line}: {self.importer} -> {self.imported}{where}"


class _ImportSites(ast.NodeVisitor):
    """Every import with its line and whether it sits inside a function; imports under
    `if TYPE_CHECKING:` are left out, since they never run."""

    def __init__(self, package: str):
        self.package, self.depth, self.found = package, 0, []

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING":
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found += [(node.lineno, alias.name, self.depth > 0) for alias in node.names]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            parts = self.package.split(".")
            base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
        self.found += [(node.lineno, f"{base}.{alias.name}", self.depth > 0) for alias in node.names]


@functools.cache
def import_graph() -> dict[str, list[Edge]]:
    """Module -> its imports of other project modules. `from a.b import c` points at a.b.c when that
    is a module, else at a.b; the packages above the module named (whose __init__ also runs) are not
    counted, so a circle is made of imports someone wrote."""
    modules = {module: (path, is_package) for path, module, is_package in project_modules()}
    graph: dict[str, list[Edge]] = defaultdict(list)
    for module, (path, is_package) in modules.items():
        sites = _ImportSites(module if is_package else module.rpartition(".")[0])
        sites.visit(ast.parse(path.read_text()))
        for line, name, in_function in sites.found:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].append(Edge(module, name, str(path.relative_to(ROOT)), line, in_function))
    return graph


def circles(graph: dict[str, list[Edge]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, edges = work[-1]
            edge = next(edges, None)
            if edge is not None:
                if edge.imported not in index:
                    index[edge.imported] = low[edge.imported] = len(index)
                    stack.append(edge.imported)
                    work.append((edge.imported, iter(graph.get(edge.imported, ()))))
                elif edge.imported in stack:
                    low[node] = min(low[node], index[edge.imported])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = stack[stack.index(node):]
                del stack[stack.index(node):]
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def edges_within(graph: dict[str, list[Edge]], circle: list[str]) -> list[Edge]:
    members = set(circle)  # a set: `from m import a, b` is one import of m
    return sorted({e for m in circle for e in graph.get(m, ()) if e.imported in members},
                  key=lambda e: (e.path, e.line, e.imported))


def described(graph: dict[str, list[Edge]]) -> list[dict]:
    """The circles as import_cycles.json lists them: the modules, and how many pairs of them import
    one another (a pair counts once however many lines import)."""
    return [{"modules": circle, "imports": len({(e.importer, e.imported) for e in edges_within(graph, circle)})}
            for circle in circles(graph)]


def circle_problems(graph: dict[str, list[Edge]], known: list[dict]) -> tuple[list[str], list[str]]:
    """(new or grown circles with their imports, listed circles that shrank or are gone)."""
    grown, shrunk = [], []
    now = described(graph)
    for circle in now:
        home = next((k for k in known if set(circle["modules"]) <= set(k["modules"])), None)
        if home is None or circle["imports"] > home["imports"]:
            why = "a new circle" if home is None else f"a listed circle grew ({home['imports']} -> {circle['imports']})"
            lines = "\n  ".join(str(e) for e in edges_within(graph, circle["modules"]))
            grown.append(f"{why} of {len(circle['modules'])} modules:\n  {lines}")
    for k in known:
        if k not in now:
            shrunk.append(f"the circle of {k['modules'][0]} and {len(k['modules']) - 1} more shrank or is gone")
    return grown, shrunk


def test_no_new_import_circle():
    grown, _ = circle_problems(import_graph(), json.loads(CYCLES_FILE.read_text()))
    assert not grown, "\n".join(grown)


def test_the_list_of_known_circles_only_shrinks():
    _, shrunk = circle_problems(import_graph(), json.loads(CYCLES_FILE.read_text()))
    rewrite = "write the list again: python -m tests.site.test_import_rules --write-cycles"
    assert not shrunk, "\n".join([*shrunk, rewrite])


def _graph_of(sources: dict[str, str]) -> dict[str, list[Edge]]:
    graph: dict[str, list[Edge]] = defaultdict(list)
    for module, source in sources.items():
        sites = _ImportSites(module.rpartition(".")[0])
        sites.visit(ast.parse(source))
        for line, name, in_function in sites.found:
            while name and name not in sources:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].append(Edge(module, name, module.replace(".", "/") + ".py", line, in_function))
    return graph


def test_a_circle_through_an_import_inside_a_function_is_found():
    graph = _graph_of({
        "leaderboard.a": "from leaderboard.b import x\n",
        "leaderboard.b": "import os\n\ndef f():\n    from . import c\n",
        "leaderboard.c": "from leaderboard import a\n",
        "leaderboard.d": "from leaderboard.a import y\n",
    })
    assert circles(graph) == [["leaderboard.a", "leaderboard.b", "leaderboard.c"]]
    grown, _ = circle_problems(graph, [])
    assert "leaderboard/b.py:4: leaderboard.b -> leaderboard.c (inside a function)" in grown[0]


def test_an_import_for_type_checking_makes_no_circle():
    graph = _graph_of({
        "leaderboard.a": "from leaderboard.b import x\n",
        "leaderboard.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from leaderboard.a import y\n",
    })
    assert circles(graph) == []


def test_a_listed_circle_may_not_grow_and_its_listing_must_shrink():
    sources = {"leaderboard.a": "from leaderboard import b\n", "leaderboard.b": "from leaderboard import a\n"}
    listed = described(_graph_of(sources))
    assert circle_problems(_graph_of(sources), listed) == ([], [])
    bigger = {**sources, "leaderboard.b": "from leaderboard import a, c\n", "leaderboard.c": "import leaderboard.a\n"}
    grown, _ = circle_problems(_graph_of(bigger), listed)
    assert grown and "leaderboard/c.py:1: leaderboard.c -> leaderboard.a" in grown[0]
    broken = {**sources, "leaderboard.b": "import json\n"}
    gone = "the circle of leaderboard.a and 1 more shrank or is gone"
    assert circle_problems(_graph_of(broken), listed) == ([], [gone])


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-cycles"]:
        sys.exit("usage: python -m tests.site.test_import_rules --write-cycles")
    CYCLES_FILE.write_text(json.dumps(described(import_graph()), indent=1) + "\n")


# Modules that import the project below their first definition, with the reason; the list may only shrink.
# Empty: the test settings' environment, which must be set before webapp.settings is read, is its own
# module (webapp/test_environment.py) that the test settings import first.
IMPORTS_BELOW_DEFINITIONS: dict[str, str] = {}


def imports_below_definitions() -> dict[str, list[str]]:
    """file -> its module-level project imports that come after a def or class (a sign of a circle
    worked around by import order)."""
    found: dict[str, list[str]] = {}
    for path, module, is_package in project_modules():
        tree = ast.parse(path.read_text())
        defined = False
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined = True
            elif defined and isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [name for _, name in imports_of(ast.unparse(node), module, is_package)]
                if any(name.split(".")[0] in PROJECT for name in names):
                    found.setdefault(str(path.relative_to(ROOT)), []).append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_project_import_sits_below_a_definition():
    found = imports_below_definitions()
    new = {path: lines for path, lines in found.items() if path not in IMPORTS_BELOW_DEFINITIONS}
    assert not new, f"imports below a module's first definition (move them to the top; a circle is its own fix): {new}"
    gone = set(IMPORTS_BELOW_DEFINITIONS) - set(found)
    assert not gone, f"no longer below a definition, take them off IMPORTS_BELOW_DEFINITIONS: {sorted(gone)}"


def test_an_import_below_a_definition_is_found(tmp_path, monkeypatch):
    module = tmp_path / "leaderboard" / "late.py"
    module.parent.mkdir()
    module.write_text("import os\n\n\ndef f():\n    pass\n\n\nfrom leaderboard.models import Run\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "project_modules", lambda: [(module, "leaderboard.late", False)])
    assert imports_below_definitions() == {"leaderboard/late.py": ["line 8: from leaderboard.models import Run"]}

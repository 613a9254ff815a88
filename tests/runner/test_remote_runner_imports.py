"""A remote runner holds no database: the code it runs (runner.remote, runner.client and every project
module they import, inside functions too) imports nothing of leaderboard, of the runner's models or
of the site's settings, so it cannot reach the ORM even by accident. The LLM gateway is among them: a
remote runner starts it (runner.remote.llm)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STARTS = ("runner.remote", "runner.client")
FORBIDDEN = (
    "leaderboard",
    "runner.models",
    "runner.jobs",
    "runner.web",
    "webapp",
    "django.db.models",
)


def module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports_of(path: Path, package: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            module = node.module if node.level == 0 else f"{package.rsplit('.', node.level)[0]}.{node.module}"
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names if module_file(f"{module}.{alias.name}")}
    return found


def reachable() -> dict[str, str]:
    """Every project module the remote runner's code imports, with one importer each."""
    seen: dict[str, str] = {}
    todo = [(name, "") for name in STARTS]
    for folder in STARTS:
        todo += [
            (".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"), folder)
            for p in ROOT.joinpath(*folder.split(".")).rglob("*.py")
        ]
    while todo:
        name, by = todo.pop()
        if name in seen:
            continue
        seen[name] = by
        path = module_file(name)
        if path is None or not name.startswith(("runner", "leaderboard", "webapp")):
            continue
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        todo += [(imported, name) for imported in imports_of(path, package)]
    return seen


def test_the_remote_runner_imports_nothing_of_the_site():
    bad = {name: by for name, by in reachable().items() if name.startswith(FORBIDDEN)}
    assert not bad, "\n".join(f"{by} imports {name}" for name, by in sorted(bad.items()))

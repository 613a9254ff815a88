"""One agents folder per agent id: an import never mixes two folders' variants silently.

Two folders may define the same ids (a copy, a fork, another checkout). Importing the second over the
first would replace the variants it defines and leave the first folder's others, so `aide` could come
from one folder and `aide/dev` from another. The import is refused, naming both folders, unless it
replaces: then the folder's agents replace those ids, and the earlier folder's other agents go too
(those that jobs used stay, since jobs keep the agent they ran, and the report names them).
"""

from __future__ import annotations

from collections import defaultdict

from runner.agents.mlebench import FORMAT, AgentFormatError, Variant
from runner.models import AgentDefinition


def other_folders(variants: list[Variant]) -> dict[str, list[str]]:
    """The folders other than this import's that stored agents with its ids: folder -> those ids."""
    if not variants:
        return {}
    folder = variants[0].source_dir
    rows = AgentDefinition.objects.filter(package_format=FORMAT, name__in=[v.id for v in variants])
    clashes: dict[str, list[str]] = defaultdict(list)
    for name, package in rows.values_list("name", "package"):
        source = str((package or {}).get("source_dir") or "")
        if source != folder:
            clashes[source].append(name)
    return dict(clashes)


def check_one_folder(variants: list[Variant], *, replace: bool) -> dict[str, list[str]]:
    """AgentFormatError when another folder's agents have these ids, unless `replace`; the clashes."""
    clashes = other_folders(variants)
    if clashes and not replace:
        folder = variants[0].source_dir
        named = "; ".join(f"{', '.join(sorted(ids))} from {source or 'an unknown folder'}"
                          for source, ids in sorted(clashes.items()))
        raise AgentFormatError(
            f"{folder} defines agent ids already imported from another folder ({named}); importing it would "
            f"mix the two folders' variants. Import it with --replace to take every agent of those ids from "
            f"{folder} (the other folder's remaining agents are removed), or rename the ids in one folder")
    return clashes


def remove_replaced(clashes: dict[str, list[str]], variants: list[Variant]) -> tuple[list[str], list[str]]:
    """The replaced folders' agents this import does not define: removed, unless a job used them.
    (removed ids, kept ids)."""
    ours = {v.id for v in variants}
    rows = [row for row in AgentDefinition.objects.filter(package_format=FORMAT).exclude(name__in=ours)
            if str((row.package or {}).get("source_dir") or "") in clashes]
    kept = sorted(row.name for row in rows if row.jobs.exists())
    removed = sorted(row.name for row in rows if row.name not in kept)
    AgentDefinition.objects.filter(package_format=FORMAT, name__in=removed).delete()
    return removed, kept

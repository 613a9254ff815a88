"""Store a folder of MLE-bench agents as AgentDefinition rows, one per agent id.

    report = import_agents("agents/", build=True)

Everything is read and checked first, then (unless `build=False`) every image is built on this Docker
host, and only then are the rows written, in one transaction: a bad folder stores nothing. An agent
that is `privileged` where the site does not allow it, or whose Dockerfile is refused, is left out
(ImportReport.refused says why) and the folder's other agents are imported. An agent whose image
fails to build is stored with the failure (ImportReport.unbuilt; its row's package holds
`build_error`: the step, the cause, the last lines), so a job naming it says why; the folder's other
agents are built and stored all the same. Re-importing the same content changes nothing; a changed
folder gives its agents a new version (and image tag). Jobs keep the version they were made with (Job.agent_version).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction

from runner.agents import folders
from runner.agents.mlebench import FORMAT, AgentFormatError, Limits, Variant, read_agents
from runner.models import AgentDefinition


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    images: list[dict] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # agent id -> why it was not imported
    unbuilt: dict[str, str] = field(default_factory=dict)  # agent id -> why its image did not build (stored)
    removed: list[str] = field(default_factory=list)  # a replaced folder's other agents (runner.agents.folders)
    kept: list[str] = field(default_factory=list)  # ... those jobs used, which stay

    def summary(self) -> list[str]:
        """Lines for the operator: what was refused or not built, and what to do."""
        lines = [f"not imported: {reason}" for reason in self.refused.values()]
        lines += [f"imported but not built: {reason}" for reason in dict.fromkeys(self.unbuilt.values())]
        if self.refused or self.unbuilt:
            names = sorted({*self.refused, *self.unbuilt})
            lines.append(f"{len(self.refused)} refused, {len(self.unbuilt)} not built ({', '.join(names)}). Agents "
                         "that are not built are stored: jobs naming them are refused with the reason until "
                         "`python manage.py build_agent_images ID` builds them; --no-build imports without "
                         "building at all.")
        return lines


def limits() -> Limits:
    return Limits(max_bytes=settings.AGENTS_MAX_FOLDER_BYTES, max_files=settings.AGENTS_MAX_FILES,
                  allow_privileged=settings.AGENTS_ALLOW_PRIVILEGED)


def import_agents(path: Path | str, *, build: bool = True, force_build: bool = False, replace: bool = False,
                  log=print) -> ImportReport:
    """`replace`: take these ids from this folder though another folder's agents have them."""
    report = ImportReport()
    variants = read_agents(path, limits(), refused=report.refused)
    _refuse_site_agents(variants)
    clashes = folders.check_one_folder(variants, replace=replace)
    failures: dict[str, dict] = {}
    if build:
        report.images = build_images(variants, force=force_build, log=log, failures=failures)
        report.unbuilt = {agent: failure["error"] for agent, failure in failures.items()}
    with transaction.atomic():
        report.removed, report.kept = folders.remove_replaced(clashes, variants) if clashes else ([], [])
        for variant in variants:
            getattr(report, _store(variant, failures.get(variant.id))).append(variant.id)
    return report


def build_images(variants: list[Variant], *, force: bool = False, log=print,
                 failures: dict[str, dict] | None = None) -> list[dict]:
    """Each distinct image once (variants of one folder and Dockerfile share theirs). A failed build
    raises, unless `failures` is given: then each variant of that image gets the failure's record
    (AgentBuildError.as_record) under its id, and the other images are built."""
    from runner.agents.images import AgentBuildError, build_image

    by_tag: dict[str, list[Variant]] = {}
    for variant in sorted(variants, key=lambda v: v.id):
        by_tag.setdefault(variant.image, []).append(variant)
    images = []
    for tag, sharing in by_tag.items():
        try:
            images.append(build_image(sharing[0], force=force, log=log))
        except AgentBuildError as exc:
            if failures is None:
                raise
            ids = ", ".join(v.id for v in sharing)
            log(f"the image of {ids} did not build: {exc}")
            record = exc.as_record()
            for variant in sharing:
                failures[variant.id] = {**record, "error": f"the image {tag} (of {ids}) did not build: {exc}"}
    return images


def _refuse_site_agents(variants: list[Variant]) -> None:
    taken = set(AgentDefinition.objects.filter(name__in=[v.id for v in variants])
                .exclude(package_format=FORMAT).values_list("name", flat=True))
    if taken:
        raise AgentFormatError(f"agent ids already used by agents defined on the site: {', '.join(sorted(taken))}")


def _store(variant: Variant, build_error: dict | None = None) -> str:
    package = {**variant.as_config(), **({"build_error": build_error} if build_error else {})}
    values = {
        "image": variant.image, "command": variant.command(), "env_vars": variant.secret_names(),
        "builtin": False, "package_format": FORMAT, "version": variant.version, "package": package,
        "description": f"MLE-bench agent {variant.id} from {variant.config_file}",
    }
    current = AgentDefinition.objects.filter(name=variant.id).first()
    if current is None:
        AgentDefinition.objects.create(name=variant.id, **values)
        return "created"
    if current.version == variant.version and current.package == values["package"]:
        return "unchanged"
    AgentDefinition.objects.filter(pk=current.pk).update(**values)
    return "updated"


def record_builds(variants: list[Variant], failures: dict[str, dict]) -> None:
    """After a build on a runner: each variant's row keeps its new failure, or loses its old one."""
    with transaction.atomic():
        for row in AgentDefinition.objects.select_for_update().filter(name__in=[v.id for v in variants],
                                                                       package_format=FORMAT):
            package = {key: value for key, value in row.package.items() if key != "build_error"}
            if row.name in failures:
                package["build_error"] = failures[row.name]
            if package != row.package:
                AgentDefinition.objects.filter(pk=row.pk).update(package=package)


def packaged_variants(ids: list[str] | None = None) -> list[Variant]:
    """The imported agents (these ids, or all), read again from their folders, which must still hold
    the imported version: a runner builds exactly what the jobs will run."""
    rows = AgentDefinition.objects.filter(package_format=FORMAT)
    if ids:
        known = set(rows.filter(name__in=ids).values_list("name", flat=True))
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise AgentFormatError(f"not imported MLE-bench agents: {', '.join(unknown)}")
        rows = rows.filter(name__in=ids)
    variants = []
    for row in rows:
        variant = Variant.from_config(row.package)
        refused: dict[str, str] = {}
        found = {v.id: v for v in read_agents(variant.source_dir, limits(), refused=refused)}.get(row.name)
        if row.name in refused:
            raise AgentFormatError(refused[row.name])
        if found is None or found.version != row.version:
            raise AgentFormatError(f"{row.name}: {variant.source_dir} no longer holds the imported version "
                                   f"{row.version[:16]}; run `python manage.py import_agents {variant.source_dir}`")
        variants.append(found)
    return variants

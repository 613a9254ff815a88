"""Experiments: one per owner and configuration (agent, model, hardware, time limit, settings, internet and
test-set signal used). `ExperimentSpec` is that configuration as one value: every door a run comes in
through (the form, the API, the CLI, the demo, a runner's job) builds one, and `submit_run` and
`get_or_create_experiment` take it whole instead of a dozen loose arguments."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from leaderboard.models import Agent, Experiment, LanguageModel, Team, owner_key
from leaderboard.runs.artifacts import UploadError
from leaderboard.trust.disclosures import DisclosureError, Disclosures, annotate

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass(frozen=True)
class ExperimentSpec:
    """What a run says about the experiment it belongs to. `gpu_count` None: not disclosed;
    `disclosed_by`: who gave the hardware and internet fields (a runner, or the uploader when they
    stated any). Names are stripped of surrounding blanks."""

    agent_name: str
    model_name: str
    agent_version: str = ""
    hardware: str = ""
    gpu_type: str = ""
    gpu_count: int | None = None
    cpu_count: int | None = None
    memory_gb: float | None = None
    time_limit_hours: float | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    disclosures: Disclosures = field(default_factory=Disclosures)
    disclosed_by: str = Experiment.DisclosedBy.UPLOADER

    def __post_init__(self) -> None:
        for name in ("agent_name", "model_name", "agent_version", "hardware", "gpu_type"):
            object.__setattr__(self, name, (getattr(self, name) or "").strip())
        object.__setattr__(self, "settings", self.settings or {})

    # The keys the form, the API, the CLI and a stored upload intake name these fields by.
    FIELD_NAMES = ("agent_name", "model_name", "agent_version", "hardware", "gpu_type", "gpu_count", "cpu_count",
                   "memory_gb", "time_limit_hours", "experiment_settings", "disclosures")

    @classmethod
    def split(cls, values: dict[str, Any]) -> tuple[ExperimentSpec, dict[str, Any]]:
        """The spec named by a mapping of those keys (`disclosures` a mapping of stated fields), and
        the mapping's other keys. UploadError, with the reason, if a disclosure cannot be taken."""
        rest = {name: value for name, value in values.items() if name not in cls.FIELD_NAMES}
        given = {name: values[name] for name in cls.FIELD_NAMES if name in values}
        settings = given.pop("experiment_settings", None)
        disclosures = given.pop("disclosures", None)
        try:
            stated = Disclosures.of(disclosures or {})
        except DisclosureError as exc:
            raise UploadError(str(exc)) from None
        return cls(**{"agent_name": "", "model_name": "", **given}, settings=settings or {}, disclosures=stated), rest

    def identity(self) -> dict[str, Any]:
        """The fields an upload's content hash takes (the same names and values it always has, so
        repeats of uploads made before stay repeats)."""
        key = {"agent": self.agent_name, "agent_version": self.agent_version, "model": self.model_name,
               "hardware": self.hardware, "gpu_type": self.gpu_type, "gpu_count": self.gpu_count or 0,
               "time_limit_hours": self.time_limit_hours, "settings": self.settings}
        if self.disclosures.stated():
            key["disclosures"] = self.disclosures.stated()
        return key


def get_or_create_experiment(spec: ExperimentSpec, *, owner: User | Team | None = None) -> Experiment:
    """The owner's experiment of this configuration: a user, a team, or None (catalogue, demo and
    published data). Two owners with the same agent and model names never share one."""
    disclosures = spec.disclosures
    agent, _ = Agent.objects.get_or_create(name=spec.agent_name, version=spec.agent_version)
    model, _ = LanguageModel.objects.get_or_create(name=spec.model_name)
    hardware = spec.hardware or describe_hardware(spec.gpu_type, spec.gpu_count, spec.cpu_count, spec.memory_gb)
    stated = bool(hardware or spec.gpu_count is not None or disclosures.internet)
    runner = Experiment.DisclosedBy.RUNNER
    experiment, created = Experiment.objects.get_or_create(
        agent=agent, model=model, hardware=hardware, time_limit_hours=spec.time_limit_hours,
        settings_hash=settings_hash(spec.settings), owner_key=owner_key(owner), reproduces=None,
        **disclosures.identity(),
        defaults={
            "gpu_type": spec.gpu_type, "gpu_count": spec.gpu_count, "cpu_count": spec.cpu_count,
            "memory_gb": spec.memory_gb, "settings": spec.settings,
            "team": owner if isinstance(owner, Team) else None,
            "owner": None if owner is None or isinstance(owner, Team) else owner,
            "disclosed_by": spec.disclosed_by if stated or spec.disclosed_by == runner else "",
            **disclosures.annotations(),
        },
    )
    if not created:
        # Saving an experiment raises the leaderboard's cache version, whose row lock the upload's
        # transaction then holds to its commit: only when a statement changes it (rare).
        annotate(experiment, disclosures)
    return experiment


def describe_hardware(gpu_type: str, gpu_count: int | None, cpu_count: int | None, memory_gb: float | None) -> str:
    parts = []
    if gpu_count:
        parts.append(f"{gpu_count}x {gpu_type or 'GPU'}")
    if cpu_count:
        parts.append(f"{cpu_count} vCPU")
    if memory_gb:
        parts.append(f"{memory_gb:g} GB")
    return ", ".join(parts)


def settings_hash(experiment_settings: dict[str, Any] | None) -> str:
    if not experiment_settings:
        return ""
    canonical = json.dumps(experiment_settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


IDENTITY = ("agent_id", "hardware", "time_limit_hours", "settings_hash", "internet", "test_signal", "owner_key")
NOT_COPIED = {"id", "model_id", "reproduces_id", "created_at", "name", *IDENTITY}


def with_model(experiment: Experiment, model_name: str) -> Experiment:
    """The owner's experiment of the same configuration with another model: where a job's run goes
    once the LLM calls it made say which model it used."""
    model, _ = LanguageModel.objects.get_or_create(name=model_name.strip())
    identity = {name: getattr(experiment, name) for name in IDENTITY}
    copied = {field.attname: getattr(experiment, field.attname)
              for field in Experiment._meta.concrete_fields if field.attname not in NOT_COPIED}
    found, _ = Experiment.objects.get_or_create(model=model, reproduces=None, **identity, defaults=copied)
    return found

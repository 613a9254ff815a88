"""Experiments: one per owner and configuration (agent, model, hardware, time limit, settings, internet and
test-set signal used)."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from leaderboard.models import Agent, Experiment, LanguageModel, Team, owner_key
from leaderboard.trust.disclosures import Disclosures, annotate

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def get_or_create_experiment(
    *, agent_name: str, agent_version: str, model_name: str, hardware: str, gpu_type: str = "",
    gpu_count: int | None = None, cpu_count: int | None = None, memory_gb: float | None = None,
    time_limit_hours: float | None = None, experiment_settings: dict[str, Any] | None = None,
    owner: User | Team | None = None, disclosures: Disclosures | None = None,
    disclosed_by: str = Experiment.DisclosedBy.UPLOADER,
) -> Experiment:
    """The owner's experiment of this configuration: a user, a team, or None (catalogue, demo and
    published data). Two owners with the same agent and model names never share one.
    `gpu_count` None: not disclosed; `disclosed_by`: who gave the hardware and internet fields (a
    runner, or the uploader when they stated any)."""
    disclosures = disclosures or Disclosures()
    agent, _ = Agent.objects.get_or_create(name=agent_name, version=agent_version)
    model, _ = LanguageModel.objects.get_or_create(name=model_name)
    hardware = hardware.strip() or describe_hardware(gpu_type, gpu_count, cpu_count, memory_gb)
    stated = bool(hardware or gpu_count is not None or disclosures.internet)
    experiment, created = Experiment.objects.get_or_create(
        agent=agent, model=model, hardware=hardware, time_limit_hours=time_limit_hours,
        settings_hash=settings_hash(experiment_settings), owner_key=owner_key(owner), reproduces=None,
        **disclosures.identity(),
        defaults={
            "gpu_type": gpu_type, "gpu_count": gpu_count, "cpu_count": cpu_count,
            "memory_gb": memory_gb, "settings": experiment_settings or {},
            "team": owner if isinstance(owner, Team) else None,
            "owner": None if owner is None or isinstance(owner, Team) else owner,
            "disclosed_by": disclosed_by if stated or disclosed_by == Experiment.DisclosedBy.RUNNER else "",
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

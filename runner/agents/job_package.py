"""What the sandbox of an MLE-bench agent gets, as the site describes it from the job: MLE-bench's
container contract (runner.agents.contract, which the runner applies), for the job's agent.

The job's own snapshot of the agent (Job.agent_package) is used, so a re-import after the job was
made does not change what it runs.
"""

from __future__ import annotations

from django.conf import settings

from runner.agents.contract import adapt_variant
from runner.agents.mlebench import FORMAT, Variant
from runner.backends import SandboxSpec
from runner.models import Job, JobTask


def package_of(job: Job) -> dict:
    return job.agent_package or job.agent.package or {}


def is_packaged(job: Job) -> bool:
    return package_of(job).get("format") == FORMAT


def adapt(spec: SandboxSpec, *, job: Job, task: JobTask, backend, paths, secrets: dict | None = None) -> SandboxSpec:
    """`spec` as the job's agent needs it; unchanged for the site's own agents. `secrets` are the
    job's as the sandbox may see them (provider keys already replaced by the gateway's token)."""
    if not is_packaged(job):
        return spec
    return adapt_variant(spec, Variant.from_config(package_of(job)), name=job.agent.name,
                         competition=task.competition.slug, backend=backend, paths=paths,
                         secrets=job.secrets() if secrets is None else secrets,
                         allow_privileged=settings.AGENTS_ALLOW_PRIVILEGED)

"""Which Celery queue a task goes to, and which queues a runner's hardware can serve.

A task needing no GPU goes to `jobs.cpu`; one needing N GPUs of any type to `jobs.gpu.N`; N GPUs of
a given type to `jobs.gpu.<type-slug>.N` (e.g. `jobs.gpu.a10.1`). A runner consumes every queue it
could serve alone: `jobs.cpu`, `jobs.gpu.1` .. `jobs.gpu.<its GPU count>`, and for each name its
GPUs answer to, present k times, `jobs.gpu.<slug>.1` .. `jobs.gpu.<slug>.k`. A GPU answers to every
run of consecutive words of its model name, so "NVIDIA A10" serves requests for "A10", "nvidia-a10"
and "NVIDIA A10"; "NVIDIA H100 80GB HBM3" serves "H100" and "H100 80GB".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django.utils.text import slugify

CPU_QUEUE = "jobs.cpu"
GRADING_QUEUE = "celery"  # Celery's default queue: grading and the other leaderboard tasks


def gpu_slug(gpu_type: str) -> str:
    """'NVIDIA A10' and 'nvidia-a10' name the same type."""
    return slugify(gpu_type.replace("_", " ").replace(".", "-"))


def queue_for(*, gpus: int, gpu_type: str = "") -> str:
    if gpus <= 0:
        return CPU_QUEUE
    if gpu_type.strip():
        return f"jobs.gpu.{gpu_slug(gpu_type)}.{gpus}"
    return f"jobs.gpu.{gpus}"


def type_aliases(gpu_name: str) -> set[str]:
    words = gpu_slug(gpu_name).split("-")
    return {"-".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)} - {""}


def queues_for_hardware(gpu_names: Iterable[str]) -> list[str]:
    names = list(gpu_names)
    queues = [CPU_QUEUE] + [f"jobs.gpu.{n}" for n in range(1, len(names) + 1)]
    counts = Counter(alias for name in names for alias in type_aliases(name))
    for slug, count in sorted(counts.items()):
        queues += [f"jobs.gpu.{slug}.{n}" for n in range(1, count + 1)]
    return queues


def gpu_type_matches(requested: str, gpu_name: str) -> bool:
    """Whether a GPU called `gpu_name` serves a request for `requested` (empty: any GPU)."""
    return not requested.strip() or gpu_slug(requested) in type_aliases(gpu_name)

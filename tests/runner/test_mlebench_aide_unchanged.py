"""MLE-bench's own `agents/aide` directory, read from an MLE-bench checkout named by MEDALBOARD_MLEBENCH_DIR
(checked byte for byte against mle-bench 783b15a: nothing of it is copied into this project), built and run
unchanged (marker docker).

Its Dockerfile runs `apt-get install ffmpeg libsm6 libxext6` and `pip install -r requirements.txt`,
which names `git+https://github.com/thesofakillers/aideml@v6.3.3`. The build gets the `registries`
mode (Debian's mirror and PyPI, through the site's proxy) and a git mirror on this host's loopback
holding a repository at `thesofakillers/aideml`: not MLE-bench's fork (GitHub is out of reach here)
but a stand-in built from aideml 0.2.2's source on PyPI (tests/aideml_standin.py says what it changes
so that it behaves where the fork's start.sh expects). Then one job of `aide/dev` runs through the
loopback runner against the scripted upstream (tests/aide_upstream.py) behind the LLM gateway, to a
graded run. Needs Debian's mirror and PyPI (about 150 MB of packages on a first build)."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

from leaderboard.models import Run
from runner.agents import build_network
from runner.agents.importer import import_agents
from runner.backends.docker import DockerBackend
from runner.jobs.services import create_job
from runner.models import AgentDefinition, JobTask
from tests import aideml_standin
from tests.aide_upstream import BEST, AideUpstream
from tests.git_mirror_support import bare_repository, served
from tests.job_support import COMPETITION, needs_agent_tools

pytestmark = [pytest.mark.docker, needs_agent_tools]
MLEBENCH = os.environ.get("MEDALBOARD_MLEBENCH_DIR", "")
SHA256 = {  # MLE-bench 783b15a, agents/aide
    "Dockerfile": "f8645460f03c040ecdc81e119acf7caf1b0ac3e12fe98054fa1afc6bed122942",
    "additional_notes.txt": "0dbd723720145e77d671bbb8b0c9ba684aa565f99634b6f50b47a50b72915595",
    "config.yaml": "b40e0e1dd07bfbfb8140507f887bb99230d542a41030632ff757d498559e0e55",
    "requirements.txt": "0af6f47febc28fdbba036ff3941654e6084e9aea18822ae005687c7ab64033dc",
    "start.sh": "38b106593621f46a5a990d19ce05dc205de13743f02c81ffe7b38ba33dc4e66d",
}
REAL_KEY = "sk-real-upstream-key-mlebench-aide"


@pytest.fixture
def mlebench_checkout() -> Path:
    if not MLEBENCH or not (Path(MLEBENCH) / "agents" / "aide").is_dir():
        pytest.skip("MEDALBOARD_MLEBENCH_DIR does not name an MLE-bench checkout (.ci/run sets it from a local mirror)")
    return Path(MLEBENCH)


@pytest.fixture
def mirrored_build(settings, tmp_path):
    """The registries mode on a network of this test's own, and the git mirror with the stand-in."""
    import docker

    try:
        sdist = aideml_standin.fetch_sdist(Path(settings.BASE_DIR) / "var" / "aideml-sdist")
    except Exception as exc:  # noqa: BLE001 - any failure to fetch means no package index here
        pytest.skip(f"aideml {aideml_standin.VERSION}'s source could not be fetched: {exc}")
    root = tmp_path / "mirror"
    bare_repository(root, "thesofakillers/aideml", aideml_standin.files(sdist), tag=aideml_standin.TAG)
    settings.AGENTS_BUILD_NETWORK = "registries"
    settings.AGENTS_BUILD_REGISTRIES = ["deb.debian.org", "pypi.org", "files.pythonhosted.org"]
    settings.AGENTS_BUILD_REGISTRIES_NETWORK = f"medalboard-test-aide-{tmp_path.name[-8:]}"
    with served(root) as (url, asked):
        settings.AGENTS_GIT_MIRROR = url
        yield asked
    client = docker.from_env()
    build_network.remove_network(client, settings.AGENTS_BUILD_REGISTRIES_NETWORK)


def test_mlebench_aide_builds_from_a_git_mirror_and_runs_unchanged_to_a_graded_run(
    mlebench_checkout,
    alice,
    loopback,
    mlebench_env,
    mirrored_build,
    tmp_path,
    settings,
):
    agents = tmp_path / "agents"
    shutil.copytree(mlebench_checkout / "agents" / "aide", agents / "aide")
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (agents / "aide").iterdir()} == SHA256

    started = time.monotonic()
    report = import_agents(agents, build=True, log=print)
    print(f"MLE-bench aide: imported and built in {time.monotonic() - started:.0f} s")
    assert not report.unbuilt and not report.refused, (report.unbuilt, report.refused)
    assert {"aide", "aide/dev"} <= set(report.created)
    if report.images[0]["built"]:  # else kept from an earlier run of this test: same folder, same base
        assert "/thesofakillers/aideml/info/refs?service=git-upload-pack" in mirrored_build

    with AideUpstream() as upstream:
        settings.LLM_UPSTREAMS = {"openai": upstream.url}
        job = create_job(
            user=alice,
            agent="aide/dev",
            competitions=[COMPETITION],
            time_limit_minutes=10,
            env={"OPENAI_API_KEY": REAL_KEY},
        )
        task = job.tasks.get()
        started = time.monotonic()
        outcome = loopback.run_graded(task.pk, DockerBackend(), timeout_s=1200)
        print(f"MLE-bench aide/dev run: {time.monotonic() - started:.0f} s, {len(upstream.calls)} model calls")
    task.refresh_from_db()
    assert outcome.status == JobTask.Status.SUCCEEDED, (outcome.error, task.log_tail)
    assert job.agent_image == AgentDefinition.objects.get(name="aide/dev").image
    assert upstream.calls and set(upstream.credentials) == {f"Bearer {REAL_KEY}"}, task.log_tail

    run = Run.objects.get(pk=task.run_id)
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None
    names = set(run.artifacts.values_list("name", flat=True))
    assert {"logs/journal.json", "submission/submission.csv"} <= names
    with run.artifacts.get(name="submission/submission.csv").file.open("rb") as handle:
        assert handle.read().decode().count("True") == BEST  # the best node's, kept by the fork's habit

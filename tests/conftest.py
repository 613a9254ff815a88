"""Shared fixtures: the real catalogue, personas, service availability and the browser.

Tests that need a service carry a marker (postgres, redis, docker, browser). On a bare machine a
missing service skips them; with MEDALBOARD_REQUIRE_SERVICES=1 (set by .ci/run) a missing service
fails them instead, so CI can never pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
from django.conf import settings

SHARED_DIR = Path(settings.SHARED_DIR)
CATALOGUE_DIR = SHARED_DIR / "data" / "mle-bench"
TRAJECTORIES_DIR = SHARED_DIR / "data" / "trajectories"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
REQUIRE_SERVICES = os.environ.get("MEDALBOARD_REQUIRE_SERVICES", "").lower() in ("1", "true", "yes")


def _missing_service(marker: str) -> str | None:
    if marker == "postgres":
        engine = settings.DATABASES["default"]["ENGINE"]
        return None if "postgresql" in engine else "DATABASE_URL does not point at PostgreSQL"
    if marker == "redis":
        url = settings.CELERY_BROKER_URL
        return None if url.startswith(("redis://", "rediss://")) else "CELERY_BROKER_URL is not a Redis URL"
    if marker == "docker":
        try:
            import docker

            docker.from_env().ping()
        except Exception as exc:  # noqa: BLE001 - any failure means no usable engine
            return f"no Docker engine ({exc.__class__.__name__})"
        return None
    if marker == "browser":
        if not Path(CHROMIUM).exists():
            return f"{CHROMIUM} not installed"
        try:
            import playwright  # noqa: F401
        except ImportError:
            return "playwright not installed"
        return None
    return None


@pytest.hookimpl(tryfirst=True)  # before `-m "not serial"` deselects
def pytest_collection_modifyitems(config, items):
    # Docker tests share the daemon and its images: `make test` runs them one at a time beside the parallel
    # workers, with the other tests marked serial; those marked alone run last, with nothing beside them.
    for item in items:
        if (item.get_closest_marker("docker") or item.get_closest_marker("alone")) and not item.get_closest_marker(
                "serial"):
            item.add_marker(pytest.mark.serial)
    _write_serial_files(items)


def _write_serial_files(items) -> None:
    """`make test`'s parallel part names the files holding serial tests (MEDALBOARD_SERIAL_FILES), so
    its serial part collects those files only, not every module again (half a minute on 2 cores).
    Every worker collects the same items and writes the same list, each by an atomic replace."""
    target = os.environ.get("MEDALBOARD_SERIAL_FILES")
    if not target:
        return
    files = sorted({item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("serial")})
    partial = Path(f"{target}.{os.getpid()}")
    partial.write_text("".join(f"{name}\n" for name in files))
    partial.replace(target)


def pytest_runtest_setup(item):
    for marker in ("postgres", "redis", "docker", "browser"):
        if item.get_closest_marker(marker) is None:
            continue
        reason = _missing_service(marker)
        if reason is None:
            continue
        if REQUIRE_SERVICES:
            pytest.fail(f"service test needs {marker}: {reason} (MEDALBOARD_REQUIRE_SERVICES is set)")
        pytest.skip(f"needs {marker}: {reason}")


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache: throttle counters, and cached leaderboards whose version
    numbers another test's database reused (leaderboard.analysis.page_cache)."""
    from django.core.cache import cache

    cache.clear()


CATALOGUE_ROWS = pytest.StashKey[dict]()


@pytest.fixture
def catalogue(db, request):
    """The real MLE-bench catalogue from ../shared, imported once per session; a transactional test's
    flush removes it, and the next test that asks for it gets the session's rows back (tests/catalogue_rows.py)."""
    from leaderboard.competitions.catalogue import import_catalogue
    from leaderboard.models import Competition
    from tests import catalogue_rows

    if not Competition.objects.filter(benchmark__slug="mle-bench").exists():
        rows = request.config.stash.get(CATALOGUE_ROWS, None)
        if rows:
            catalogue_rows.restore(rows)
        else:
            import_catalogue(CATALOGUE_DIR)
    return Competition.objects.all()


@pytest.fixture(scope="session")
def _test_db_from_template(request, django_db_modify_db_settings, django_db_use_migrations,
                           django_db_blocker) -> str | None:
    """This session's test database is a copy of one built once, migrated and with the catalogue
    imported (tests/db_template.py), unless the developer asked pytest-django to reuse the database or
    skip migrations or create it anew. The database's name outside the tests, to restore after, or None."""
    if request.config.getvalue("reuse_db") or request.config.getvalue("create_db") or not django_db_use_migrations:
        return None
    from django.db import connection

    from tests import db_template

    with django_db_blocker.unblock():
        db_template.clone(CATALOGUE_DIR)
    return connection.settings_dict["NAME"]


@pytest.fixture(scope="session")
def django_db_keepdb(request, _test_db_from_template) -> bool:
    # A copied database is kept by Django's setup (migrate finds nothing to do); django_db_setup drops it.
    return _test_db_from_template is not None or request.config.getvalue("reuse_db")


@pytest.fixture(scope="session")
def django_db_setup(request, django_db_setup, django_db_blocker, _test_db_from_template):
    # The catalogue is imported once for the whole session (in the template); transactional tests that
    # flush it get its rows back through the `catalogue` fixture.
    from django.db import connections

    from leaderboard.competitions.catalogue import import_catalogue
    from tests import catalogue_rows

    with django_db_blocker.unblock():
        if _test_db_from_template is None:
            import_catalogue(CATALOGUE_DIR)
        request.config.stash[CATALOGUE_ROWS] = catalogue_rows.snapshot()
    yield
    if _test_db_from_template is not None:
        with django_db_blocker.unblock():
            connections["default"].creation.destroy_test_db(_test_db_from_template, verbosity=0)


@pytest.fixture(scope="session")
def demo_agent_runs() -> Path:
    """Where seed_demo keeps the baseline agent's run folders: made once on this machine and shared by every
    test process and later sessions (each folder is keyed by the agent's code, the task and the budget, so a
    change runs it anew). The first process makes them under a lock; the others wait, then import them."""
    import fcntl

    from leaderboard.management import demo_agent
    from leaderboard.management.commands.seed_demo import DEMO_COMPETITIONS, HARDWARE, SEEDS

    root = Path(os.environ.get("MEDALBOARD_TEST_DEMO_RUNS_DIR", "/var/cache/medalboard/demo-agent-runs"))
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        demo_agent.run_all([make(slug) for slug, make in DEMO_COMPETITIONS.items()], HARDWARE, SEEDS, root,
                           say=lambda line: None)
    return root


@pytest.fixture
def demo_site(settings, tmp_path, catalogue, demo_agent_runs) -> str:
    """The demo content `make run` loads (seed_demo) in this test's database; what the command printed."""
    from io import StringIO

    from django.core.management import call_command

    settings.VAR_DIR = tmp_path
    out = StringIO()
    call_command("seed_demo", "--agent-runs", str(demo_agent_runs), stdout=out)
    return out.getvalue()


@pytest.fixture
def alice(db, django_user_model):
    return django_user_model.objects.create_user("alice", "alice@example.org", "alice-password-1")


@pytest.fixture
def bob(db, django_user_model):
    return django_user_model.objects.create_user("bob", "bob@example.org", "bob-password-1")


@pytest.fixture
def staff(db, django_user_model):
    return django_user_model.objects.create_user("staff", "staff@example.org", "staff-password-1", is_staff=True)


@pytest.fixture(scope="session")
def mlebench_env():
    """The base image of MLE-bench agents, built once and kept (the tag and the recipe's revision are
    the cache), as CI builds it."""
    from runner.agents import base_image
    from runner.host.agent_image import ImageBuildError, build

    try:
        build(tag=base_image.TAG, recipe=base_image.RECIPE, log=lambda *a: None)
    except ImageBuildError as exc:
        message = f"{base_image.TAG} could not be built: {exc}"
        pytest.fail(message) if REQUIRE_SERVICES else pytest.skip(message)
    return base_image.TAG


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests make around
    # it are still synchronous, so Django's async-safety guard does not apply.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    reason = _missing_service("browser")
    if reason:
        if REQUIRE_SERVICES:
            pytest.fail(f"browser: {reason}")
        pytest.skip(reason)
    with sync_playwright() as p:
        instance = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield instance
        instance.close()


@pytest.fixture
def page(browser, live_server, catalogue):
    """A browser tab on the live server. Every test using it fails on what a visitor's console would
    show: a JavaScript error, a console error, a request answered 4xx/5xx (a missing favicon included).
    A test that asks for an error page on purpose names its URL in `tab.expected_problems`."""
    # Playwright's wait_for_function and evaluate run their strings with eval, which the site's
    # Content-Security-Policy forbids; tests/web/test_browser_csp.py checks the pages under the policy.
    context = browser.new_context(bypass_csp=True)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.problems = watch_console_and_responses(tab)
    again_when_the_network_changed(tab)
    tab.expected_problems = []
    tab.base_url = live_server.url
    tab.js_errors = errors
    yield tab
    context.close()
    unexpected = [p for p in [*tab.problems, *errors] if not any(e in p for e in tab.expected_problems)]
    if unexpected:
        pytest.fail("the page showed errors in the browser console:\n" + "\n".join(unexpected))


NETWORK_CHANGED = "net::ERR_NETWORK_CHANGED"
NAVIGATIONS = 3


def again_when_the_network_changed(tab) -> None:
    """Chromium drops the requests in flight with ERR_NETWORK_CHANGED when a network interface of the
    machine comes or goes, as the serial tests running beside the browser ones make them (network
    namespaces, Docker's networks): the page then lacks a script or a style sheet (a replay page
    never got ready, CI, 2026-12-07). `tab.goto` and `tab.reload` load the page again when one of its
    requests was lost so, at most NAVIGATIONS times; every other failed request stays a failure."""
    lost: list[str] = []
    tab.on("requestfailed", lambda r: NETWORK_CHANGED in (r.failure or "") and lost.append(r.url))

    def retried(navigate):
        def navigation(*args, **kwargs):
            for _ in range(NAVIGATIONS):
                lost.clear()
                response = navigate(*args, **kwargs)
                if not lost:
                    return response
            return response

        return navigation

    tab.goto, tab.reload = retried(tab.goto), retried(tab.reload)


def watch_console_and_responses(tab) -> list[str]:
    """A list that fills with the tab's console errors and its requests answered with an HTTP error
    (not a request Chromium dropped because the network changed: again_when_the_network_changed)."""
    problems: list[str] = []

    def on_console(message) -> None:
        if message.type == "error" and NETWORK_CHANGED not in message.text:
            problems.append(f"console error: {message.text} ({(message.location or {}).get('url', '')})")

    tab.on("console", on_console)
    tab.on("response", lambda r: r.status >= 400 and problems.append(f"HTTP {r.status} {r.request.method} {r.url}"))
    return problems


@pytest.fixture
def tmp_catalogue(tmp_path):
    """A writable copy of a few catalogue folders, for tests that corrupt files."""
    target = tmp_path / "catalogue"
    for name in ("spaceship-titanic", "aerial-cactus-identification", "siim-isic-melanoma-classification"):
        shutil.copytree(CATALOGUE_DIR / "competitions" / name, target / "competitions" / name)
    (target / "splits").mkdir()
    (target / "splits" / "low.txt").write_text("aerial-cactus-identification\n")
    (target / "splits" / "dev.txt").write_text("spaceship-titanic\n")
    return target


@pytest.fixture
def fast_jobs(settings, tmp_path):
    settings.JOB_POLL_S = 0.2
    settings.JOB_LEASE_S = 5
    settings.JOB_STOP_GRACE_S = 1
    settings.RUNNER_WORK_DIR = tmp_path / "work"
    return settings


@pytest.fixture
def job_world(catalogue, tmp_path, monkeypatch, fast_jobs):
    """spaceship-titanic with registered answers and public data, a local runner, the scripted agent."""
    import sys

    from django.utils import timezone

    from leaderboard.models import Competition
    from runner.models import AgentDefinition, Runner
    from tests.job_support import COMPETITION, SCRIPTED_AGENT, public_data
    from tests.runs.test_submission import answers_for

    answers_for(tmp_path, catalogue)
    data = public_data(tmp_path)
    if "public_data_dir" not in {f.name for f in Competition._meta.get_fields()}:
        monkeypatch.setattr(Competition, "public_data_dir", str(data), raising=False)
    else:
        Competition.objects.filter(slug=COMPETITION).update(public_data_dir=str(data))
    runner = Runner.objects.create(name="test-runner", backend="local", images=["*"], cpu_count=2,
                                   last_heartbeat=timezone.now(), queues=["jobs.cpu"])
    AgentDefinition.objects.update_or_create(name="scripted", defaults={
        "command": [sys.executable, str(SCRIPTED_AGENT)], "image": ""})
    return runner


@pytest.fixture(scope="session")
def smoke_root(tmp_path_factory):
    """The smoke competitions' files (leaderboard/competitions/smoke.py), built once per session; import them per test
    with import_catalogue(smoke_root, data_dir=smoke_root / "data")."""
    from leaderboard.competitions import smoke

    root = tmp_path_factory.mktemp("smoke")
    smoke.build(root)
    return root


@pytest.fixture(params=["runc", "runsc"])
def docker_backend(request, job_world):
    """The Docker backend under each OCI runtime: runc, and gVisor's runsc, with the agent image and
    the scripted agent (inline: the image has Debian's python3, the test folder is not mounted)."""
    from django.conf import settings

    from runner.backends import StartFailed
    from runner.backends.docker import DockerBackend
    from runner.models import AgentDefinition
    from tests.job_support import SCRIPTED_AGENT

    # A name of this test's own: the Docker daemon is shared (by test sessions running side by side,
    # and by the tests of one session), and a runner's clean-up removes every sandbox of its name.
    backend = DockerBackend(runner_name=f"test-runner-{uuid.uuid4().hex[:8]}", runtime=request.param)
    try:
        backend.check()
    except StartFailed as exc:
        pytest.fail(str(exc)) if REQUIRE_SERVICES else pytest.skip(str(exc))
    if not backend.image_exists(settings.MEDALBOARD_AGENT_IMAGE):
        message = f"agent image {settings.MEDALBOARD_AGENT_IMAGE} not built (python manage.py build_agent_image)"
        pytest.fail(message) if REQUIRE_SERVICES else pytest.skip(message)
    AgentDefinition.objects.filter(name="scripted").update(command=["python3", "-c", SCRIPTED_AGENT.read_text()])
    yield backend
    left = backend.remove_stale()  # a job's sandbox outliving its job is a runner bug
    assert left == 0, f"{left} sandbox(es) of this test's runner were left behind"

"""Helpers for the tests of runners attached by URL and token: the runner process (with nothing of
the site's in its environment), a TCP proxy in front of the live server that a test can cut, and a
network namespace whose only way out is a veth pair to that proxy's port."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

RUNNER_ENV = {
    "PATH",
    "HOME",
    "MEDALBOARD_SITE_URL",
    "MEDALBOARD_RUNNER_TOKEN",
    "MEDALBOARD_RUNNER_WORK_DIR",
    "MEDALBOARD_RUNNER_LOST_SITE_S",
    "MEDALBOARD_LLM_UPSTREAMS",  # the runner operator's own: where its LLM gateway may reach
    "MEDALBOARD_RUNNER_SLOTS",
}


def new_token(name: str) -> str:
    from django.core.management import call_command

    out = io.StringIO()
    call_command("create_runner", name, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip().splitlines()[-1]


class RemoteRunner:
    """`manage.py runner` with the URL and the token in its environment and nothing of the site's;
    `prefix` runs it inside something (`ip netns exec NAME`). Every one started is in `started` until
    `stop_all()`, which tests/runner/conftest.py calls after each test: a test that fails before it waits
    for its runner leaves no runner claiming from the next test's site."""

    started: list[RemoteRunner] = []

    def __init__(
        self,
        url: str,
        token: str,
        folder: Path,
        *args: str,
        prefix: tuple[str, ...] = (),
        name: str = "remote-test",
        lost_site_s: float = 60,
        llm_upstreams: str = "",
        slots: str = "",
    ) -> None:
        from django.conf import settings

        path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"  # the agents' Python: scikit-learn and all
        self.env = {
            "PATH": path,
            "HOME": str(folder),
            "MEDALBOARD_SITE_URL": url,
            "MEDALBOARD_RUNNER_TOKEN": token,
            "MEDALBOARD_RUNNER_WORK_DIR": str(folder / "work"),
            "MEDALBOARD_RUNNER_LOST_SITE_S": str(lost_site_s),
            **({"MEDALBOARD_LLM_UPSTREAMS": llm_upstreams} if llm_upstreams else {}),
            **({"MEDALBOARD_RUNNER_SLOTS": slots} if slots else {}),
        }
        assert set(self.env) <= RUNNER_ENV
        self.work = folder / "work"
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "runner.log"
        self.log = open(self.log_path, "ab")  # noqa: SIM115 - closed in wait()
        argv = [
            *prefix,
            "env",
            "-i",
            *(f"{k}={v}" for k, v in self.env.items()),
            sys.executable,
            "manage.py",
            "runner",
            "--name",
            "remote-test",
            *args,
        ]
        self.process = subprocess.Popen(
            argv, cwd=settings.BASE_DIR, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        RemoteRunner.started.append(self)

    @classmethod
    def stop_all(cls) -> None:
        """Kill every runner still running (its process group: the agents it started too)."""
        while cls.started:
            runner = cls.started.pop()
            if runner.process.poll() is None:
                try:
                    os.killpg(runner.process.pid, 9)
                except ProcessLookupError:
                    pass
                runner.process.wait()
            runner.log.close()

    def kill9(self) -> None:
        """kill -9 of the runner and everything it started (its sandboxes on the local backend too)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait()

    def wait(self, timeout: float) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, 9)
                self.process.wait()
            self.log.close()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]


class Proxy:
    """Forwards connections from (host, port) to the site; `cut_once_after(n)` cuts every connection
    once one of them has carried n bytes towards the site, and refuses new ones for `down_s`."""

    def __init__(self, host: str, target: tuple[str, int]) -> None:
        self.target, self.cut_at, self.down_s = target, 0, 0.0
        self.cuts, self.up = 0, threading.Event()
        self.up.set()
        self.listener = socket.create_server((host, 0))
        self.port = self.listener.getsockname()[1]
        self.open: set[socket.socket] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_once_after(self, n_bytes: int, down_s: float) -> None:
        self.cut_at, self.down_s = n_bytes, down_s

    def close(self) -> None:
        self.listener.close()
        self._cut_all()

    def outage(self, seconds: float) -> None:
        """Cut every connection now and refuse new ones for `seconds` (in the background)."""
        self.down_s = seconds
        threading.Thread(target=self._outage, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up.is_set():
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            self.open |= {client, upstream}
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, towards_site: bool) -> None:
        carried = 0
        try:
            while block := source.recv(65536):
                sink.sendall(block)
                carried += len(block)
                if towards_site and self.cut_at and carried > self.cut_at:
                    self.cut_at = 0
                    self.cuts += 1
                    threading.Thread(target=self._outage, daemon=True).start()
                    return
        except OSError:
            pass
        finally:
            for end in (source, sink):
                _close(end)

    def _outage(self) -> None:
        self.up.clear()
        self._cut_all()
        threading.Event().wait(self.down_s)
        self.up.set()

    def _cut_all(self) -> None:
        for end in list(self.open):
            _close(end)
        self.open.clear()


def _close(end: socket.socket) -> None:
    try:
        end.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    end.close()


def can_make_netns() -> bool:
    return os.geteuid() == 0 and shutil.which("ip") is not None and shutil.which("iptables") is not None


class Netns:
    """A network namespace joined to this host by one veth pair, where the host side accepts only
    TCP to `port` (iptables), so a process inside reaches the site's HTTP port and nothing else."""

    def __init__(self, tag: int, port_of) -> None:
        self.name, n = f"remote-t{tag}", tag % 250
        self.host_if, self.ns_if = f"rmh{tag}", f"rmn{tag}"
        self.host_ip, self.ns_ip = f"10.231.{n}.1", f"10.231.{n}.2"
        self.rules: list[list[str]] = []
        for argv in (
            ["ip", "netns", "add", self.name],
            ["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if],
            ["ip", "link", "set", self.ns_if, "netns", self.name],
            ["ip", "addr", "add", f"{self.host_ip}/30", "dev", self.host_if],
            ["ip", "link", "set", self.host_if, "up"],
            [*self.exec, "ip", "addr", "add", f"{self.ns_ip}/30", "dev", self.ns_if],
            [*self.exec, "ip", "link", "set", self.ns_if, "up"],
            [*self.exec, "ip", "link", "set", "lo", "up"],
        ):
            subprocess.run(argv, check=True, capture_output=True)
        self.port = port_of(self.host_ip)
        for rule in (
            ["INPUT", "-i", self.host_if, "-j", "DROP"],
            ["INPUT", "-i", self.host_if, "-p", "tcp", "--dport", str(self.port), "-j", "ACCEPT"],
        ):
            subprocess.run(["iptables", "-I", *rule], check=True, capture_output=True)
            self.rules.append(rule)

    @property
    def exec(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]

    def reaches(self, host: str, port: int) -> bool:
        probe = f"import socket; socket.create_connection(({host!r}, {port}), timeout=2); print('open')"
        done = subprocess.run([*self.exec, sys.executable, "-c", probe], capture_output=True, text=True, timeout=30)
        return "open" in done.stdout

    def delete(self) -> None:
        for rule in self.rules:
            subprocess.run(["iptables", "-D", *rule], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True)


class LoopRunner:
    """A remote runner's own loop (runner.remote.serve.serve) in a thread of this process, given the site's
    URL and a token and nothing else of the site's: what it knows of a task comes in the claim, what it
    leaves goes through the runner API, the site grades. `run_one(backend)` serves the next queued task
    and gives the runner's outcome. The hostile-agent tests run their tasks here
    (tests/runner/test_hostile_agents.py, `runs_on`). Being in this process, it sees the test's
    monkeypatches of the runner's code; its settings are the site's, which runner.remote reads none of
    (the limits, the quota and the timing come in the claim); `manage.py runner` in a process of its
    own with nothing but the URL and the token is RemoteRunner (tests/runner/test_remote_runner_*.py)."""

    def __init__(self, url: str, token: str, work_dir: Path, *, lost_site_s: float = 30) -> None:
        self.url, self.token, self.work_dir, self.lost_site_s = url, token, work_dir, lost_site_s

    def run_one(self, backend, timeout_s: float, slots: int = 1):
        from unittest import mock

        from runner.remote import serve as loop

        outcomes: list = []
        failures: list[BaseException] = []
        real = loop.run_task

        def recorded(*args, **kwargs):
            try:
                outcomes.append(real(*args, **kwargs))
            except BaseException as exc:  # the loop abandons the task on it: the test says why
                failures.append(exc)
                raise
            return outcomes[-1]

        with mock.patch.object(loop, "run_task", recorded), self.serving(backend, tasks=1, slots=slots) as ended:
            deadline = time.monotonic() + timeout_s
            while not ended and time.monotonic() < deadline:
                time.sleep(0.1)
            timed_out = not ended  # leaving the block stops the runner, which then ends "stopped"
        if timed_out:
            raise AssertionError(f"the remote runner served no task within {timeout_s:g} s")
        failures += [e for e in ended if isinstance(e, BaseException)]  # the runner died of it
        if failures:
            raise AssertionError(f"the remote runner abandoned its task: {failures[0]!r}") from failures[0]
        assert ended == ["stopped"] and outcomes, (ended, outcomes)
        return outcomes[0]

    @contextlib.contextmanager
    def serving(self, backend, tasks: int = 0, slots: int = 1):
        """The runner's loop in a thread while the block runs (`tasks`: it ends once it served so many);
        yields a list that gets how it ended ("stopped", "revoked") or the exception it died of."""
        from runner.client import SiteClient
        from runner.remote import serve as loop

        client = SiteClient(self.url, self.token, lost_site_s=self.lost_site_s)
        stop, ended = threading.Event(), []

        def serve() -> None:
            try:
                ended.append(
                    loop.serve(
                        client,
                        backend,
                        work_dir=self.work_dir,
                        cache_dir=self.work_dir / "cache",
                        stop=stop,
                        tasks=tasks,
                    )
                )
            except BaseException as exc:  # noqa: BLE001 - the runner died of it: the test says so
                ended.append(exc)

        thread = threading.Thread(target=serve, name="remote-runner", daemon=True)
        thread.start()
        try:
            yield ended
        finally:
            stop.set()
            thread.join(60)

    def register(self, backend=None, slots: int = 1) -> str:
        """Register with the site as `manage.py runner --site` does at its start (hardware, images), so a
        job can be made for it before it serves; the runner's name."""
        from runner.backends.local import LocalBackend
        from runner.client import SiteClient
        from runner.remote import serve as loop

        client = SiteClient(self.url, self.token, lost_site_s=self.lost_site_s)
        return loop.register(client, backend or LocalBackend(), slots)["runner"]

    def run_graded(self, task_id: int, backend=None, timeout_s: float = 180, slots: int = 1):
        """Serve the next queued task (`task_id`, which the site must hear the end of), then grade its run
        as the site's grading worker would: the runner's outcome."""
        from runner.backends.local import LocalBackend
        from runner.models import JobTask

        outcome = self.run_one(backend or LocalBackend(), timeout_s=timeout_s, slots=slots)
        task = JobTask.objects.get(pk=task_id)
        assert task.status == outcome.status, (task.status, outcome.status, task.error)  # the site heard its end
        graded_as_the_site_does(task.run_id)
        return outcome


def graded_as_the_site_does(run_id: int | None) -> None:
    """A remote runner's run is graded by the site's grading worker (the task the finish queued: a research
    run's eval.py on the research grading side), here in this process as that worker runs it; snapshots
    stay pending, as they do until their worker runs."""
    from leaderboard.models import Run
    from webapp import queue

    run = Run.objects.filter(pk=run_id).select_related("competition").first()
    if run is None or run.status != Run.Status.PENDING:
        return
    assert run.grading_enqueued_at is not None, "the site did not queue the run's grading"
    if run.competition.kind == run.competition.Kind.RESEARCH:  # scored by its eval.py on the research side
        from runner.backends.local import LocalBackend
        from runner.research.traces import score_trace

        score_trace(run_id, backend=LocalBackend())  # what that worker's runner.tasks.score_trace runs
    else:
        queue.run_here(queue.GRADE_RUN, [run_id]).get()


def loop_runner(request, work_dir: Path, name: str = "loopback-test") -> LoopRunner:
    """A LoopRunner against the live server of a transactional test (`request`: the fixture's)."""
    from runner.api_v1 import tokens

    live_server = request.getfixturevalue("live_server")
    live_server._live_server_modified_settings.enable()  # as pytest-django does for a test that names it
    request.addfinalizer(live_server._live_server_modified_settings.disable)
    _, token = tokens.issue(name)
    loop = LoopRunner(live_server.url, token, work_dir)
    loop.register()
    return loop

"""The slots' loop on its own (runner.remote.serve.Slots), with a site faked in this process: `--tasks`
counts tasks across slots, and an error that kills one slot ends the others and is raised."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from runner.remote import serve as loop


class Site:
    """Registers the runner; each claim answers the next of `answers` (an exception is raised), then
    nothing, as a long poll would after a short wait."""

    def __init__(self, *answers) -> None:
        self.answers, self.claims, self.idle = list(answers), 0, threading.Event()
        self.lock = threading.Lock()

    def register(self, hardware: dict) -> dict:
        return {"runner": "fake"}

    def pool(self, connections: int) -> None:
        pass

    def claim(self, wait_s: float):
        with self.lock:
            self.claims += 1
            answer = self.answers.pop(0) if self.answers else None
        if isinstance(answer, BaseException):
            raise answer
        if answer is None:
            self.idle.wait(0.05)
        return answer


def serve_in_a_thread(site: Site, tmp_path, monkeypatch, ran: list, **options) -> tuple[list, threading.Thread]:
    monkeypatch.setattr(
        loop.hardware, "detect", lambda: SimpleNamespace(hostname="h", gpus_json=lambda: [], cpu_count=2, memory_gb=1.0)
    )
    monkeypatch.setattr(
        loop,
        "run_task",
        lambda client, claim, *a, **k: ran.append(claim["task"]) or SimpleNamespace(status="succeeded"),
    )
    backend = SimpleNamespace(name="local", remove_stale=lambda: 0, check=lambda: None)
    ended: list = []

    def target() -> None:
        try:
            ended.append(
                loop.serve(
                    site, backend, work_dir=tmp_path, cache_dir=tmp_path / "cache", stop=threading.Event(), **options
                )
            )
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            ended.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(30)
    return ended, thread


def claimed(task: int) -> dict:
    return {"task": task, "competition": "c", "seed": 0}


def test_tasks_counts_the_tasks_of_every_slot(tmp_path, monkeypatch):
    ran: list = []
    site = Site(*[claimed(n) for n in range(1, 6)])
    ended, thread = serve_in_a_thread(site, tmp_path, monkeypatch, ran, tasks=3, slots=2)
    assert not thread.is_alive() and ended == ["stopped"]
    assert sorted(ran) == [1, 2, 3]  # three tasks in all, whichever slot ran them


def test_an_error_that_kills_one_slot_ends_the_others_and_is_raised(tmp_path, monkeypatch):
    site = Site(RuntimeError("a bug in the loop"))
    ended, thread = serve_in_a_thread(site, tmp_path, monkeypatch, [], slots=2)
    assert not thread.is_alive(), "the other slot kept claiming"
    assert len(ended) == 1 and isinstance(ended[0], RuntimeError) and str(ended[0]) == "a bug in the loop"


def test_a_runner_a_failed_test_did_not_wait_for_is_killed_after_it(tmp_path):
    """tests/runner/conftest.py's clean-up: a runner left running (here, one waiting for a site that is
    not there) is gone after stop_all, with its process group."""
    from tests.remote_runner_support import RemoteRunner

    runner = RemoteRunner("http://127.0.0.1:9", "no-token", tmp_path, "--tasks", "1")
    assert runner.process.poll() is None and runner in RemoteRunner.started
    RemoteRunner.stop_all()
    assert runner.process.poll() is not None and RemoteRunner.started == []

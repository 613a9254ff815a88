"""Stand-ins for the broker at webapp.queue's one seam (`send`), for tests of what is sent and when."""

from __future__ import annotations

from webapp import queue


def record_sends(monkeypatch, task_name: str) -> list:
    """Record the first argument of each send of `task_name` (the row's id) instead of sending it;
    sends of other tasks are dropped."""
    sent: list = []

    def send(name, args, **options):
        if name == task_name:
            sent.append(args[0])
        return object()

    monkeypatch.setattr(queue, "send", send)
    return sent


def broker_down(monkeypatch) -> None:
    """Every send fails as it does while the broker cannot be reached."""

    def send(name, args, **options):
        raise ConnectionError("Error 111 connecting to the broker")

    monkeypatch.setattr(queue, "send", send)

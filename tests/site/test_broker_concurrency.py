"""The embedded broker under many publishers and competing consumers: no half-written message is
ever read (kombu's filesystem transport wrote in place and readers raised JSONDecodeError, which
stopped the worker), none is lost, none delivered twice, and a bad file never stops a reader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kombu import Connection

from webapp import broker

TRANSPORT = "webapp.broker:Transport"
ROOT = Path(__file__).resolve().parents[2]

# One process: publish N messages. Each is serialised slowly, after its file was opened (as kombu's
# transport does): a publisher descheduled there on a loaded machine, every time.
PUBLISHER = """
import sys, time
import kombu.transport.filesystem as stock
from kombu import Connection
from webapp import broker
real_dumps = stock.dumps
def slow_dumps(payload):
    time.sleep(0.02)
    return real_dumps(payload)
stock.dumps = broker.dumps = slow_dumps
folder, transport, who, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
options = {"data_folder_in": folder + "/queue", "data_folder_out": folder + "/queue",
           "control_folder": folder + "/control"}
with Connection("filesystem://", transport=transport or None, transport_options=options) as c:
    q = c.SimpleQueue("medalboard-test")
    for i in range(n):
        q.put({"who": who, "i": i, "pad": "x" * 1000})
"""

# One process: take messages until the publishers are done and the queue stays empty; print each.
CONSUMER = """
import json, os, sys, time
from queue import Empty
from kombu import Connection
folder, transport = sys.argv[1], sys.argv[2]
options = {"data_folder_in": folder + "/queue", "data_folder_out": folder + "/queue",
           "control_folder": folder + "/control", "polling_interval": 0.01}
with Connection("filesystem://", transport=transport or None, transport_options=options) as c:
    q = c.SimpleQueue("medalboard-test")
    idle_since = None
    while True:
        try:
            m = q.get(block=True, timeout=0.05)
        except Empty:
            if os.path.exists(folder + "/published"):
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since > 1.0:
                    break
            continue
        idle_since = None
        print(json.dumps([m.payload["who"], m.payload["i"], len(m.payload["pad"])]), flush=True)
        m.ack()
"""


def _options(folder: Path) -> dict:
    for name in ("queue", "control"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    return {"data_folder_in": str(folder / "queue"), "data_folder_out": str(folder / "queue"),
            "control_folder": str(folder / "control"), "polling_interval": 0.01}


def _python(code: str, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def exchange_many(folder: Path, transport: str, *, publishers: int = 4, each: int = 30, consumers: int = 2):
    """Run the publishers and consumers side by side: (what each consumer printed, their stderr)."""
    _options(folder)
    readers = [_python(CONSUMER, folder, transport) for _ in range(consumers)]
    writers = [_python(PUBLISHER, folder, transport, f"p{n}", each) for n in range(publishers)]
    for w in writers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    (folder / "published").touch()
    results = [r.communicate(timeout=120) for r in readers]
    return [json.loads(line) for out, _ in results for line in out.splitlines()], [err for _, err in results]


def test_many_publishers_and_competing_consumers_lose_nothing_and_read_no_partial_message(tmp_path):
    received, errors = exchange_many(tmp_path, TRANSPORT)
    assert not [e for e in errors if e.strip()], errors
    sent = {(f"p{n}", i) for n in range(4) for i in range(30)}
    assert sorted((who, i) for who, i, _ in received) == sorted(sent)  # each exactly once
    assert {size for _, _, size in received} == {1000}
    assert not [p for p in os.listdir(tmp_path / "queue")], "no message, part or claim left behind"


def test_a_message_written_in_place_is_read_whole(tmp_path):
    """A publisher of kombu's own kind (writes under the final name, holding its lock) is waited for."""
    options = _options(tmp_path)
    name = tmp_path / "queue" / f"{int(time.monotonic() * 1000)}_slow.medalboard-test.msg"
    body = json.dumps({"body": "x", "headers": {}, "properties": {}, "content-type": "application/json",
                       "content-encoding": "utf-8", "pad": "y" * 100_000}).encode()

    def write_slowly():
        with open(name, "wb", buffering=0) as f:
            broker.filesystem.lock(f, broker.filesystem.LOCK_EX)
            f.write(body[:10])
            time.sleep(0.3)
            f.write(body[10:])
            broker.filesystem.unlock(f)

    with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as c:
        writer = threading.Thread(target=write_slowly)
        writer.start()
        time.sleep(0.05)
        payload = c.default_channel._get("medalboard-test")
        writer.join()
    assert len(payload["pad"]) == 100_000


def test_a_message_that_never_decodes_is_set_aside_and_the_next_one_is_read(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(broker, "DECODE_WAIT_S", 0.1)
    options = _options(tmp_path)
    (tmp_path / "queue" / "1_broken.medalboard-test.msg").write_text('{"half')
    with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as c:
        c.default_channel._put("medalboard-test", {"fine": True})
        assert c.default_channel._get("medalboard-test") == {"fine": True}
        with pytest.raises(broker.Empty):
            c.default_channel._get("medalboard-test")
    left = os.listdir(tmp_path / "queue")
    assert len(left) == 1 and left[0].endswith(broker.BAD_SUFFIX), left
    assert "does not decode" in caplog.text


def test_a_message_another_reader_took_is_skipped(tmp_path, monkeypatch):
    options = _options(tmp_path)
    with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as c:
        channel = c.default_channel
        channel._put("medalboard-test", {"n": 1})
        real_listdir = os.listdir

        def listdir_then_lose(path):
            names = real_listdir(path)
            for name in names:  # another worker takes the message between listing and claiming
                os.remove(os.path.join(path, name))
            return names

        monkeypatch.setattr(broker.os, "listdir", listdir_then_lose)
        with pytest.raises(broker.Empty):
            channel._get("medalboard-test")


def test_the_site_uses_the_safe_transport_on_the_embedded_broker():
    from tests.site.test_settings import _manage

    code = ("from webapp.celery import app\nwith app.connection_for_write() as c:\n"
            "    print(type(c.transport).__module__)")
    result = _manage("shell", "-c", code, env={"DEBUG": "true", "CELERY_BROKER_URL": ""})
    assert result.stdout.strip().splitlines()[-1] == "webapp.broker", result.stderr

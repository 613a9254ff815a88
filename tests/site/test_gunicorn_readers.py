"""gunicorn as the repository configures it (gunicorn.conf.py) keeps answering readers while uploads
hold their connections: bodies that trickle in, as many as there are worker processes. With one
request per process (sync workers) a GET / waited behind them for seconds (the 7.1 s of the attack;
benchmarks/load.py measures it under load)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest
import requests
from django.conf import settings

from tests.job_support import database_url, wait_until
from tests.redis_support import free_port

pytestmark = pytest.mark.django_db(transaction=True)
WORKERS = 2
TRICKLE_S = 6.0
READER_BOUND_S = 1.0


def _trickle(port: int, token: str, stop: threading.Event) -> None:
    """An upload (by a user, so the site reads its body) whose multipart body arrives a few bytes at a
    time until `stop`."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"POST /api/runs/ HTTP/1.1\r\nHost: localhost\r\nAuthorization: Token " + token.encode()
                     + b"\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 10000000\r\n\r\n"
                     b'--b\r\nContent-Disposition: form-data; name="notes"\r\n\r\n')
        while not stop.wait(0.2):
            sock.sendall(b"x" * 16)


@pytest.fixture
def site(catalogue, tmp_path):
    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.test_settings", "DATABASE_URL": database_url()}
    log = open(tmp_path / "gunicorn.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "-w", str(WORKERS), "-b", f"127.0.0.1:{port}",
         "webapp.wsgi"],
        cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"

    def answers() -> bool:
        try:
            return requests.get(url, timeout=2).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_until(answers, 60, f"gunicorn answering ({(tmp_path / 'gunicorn.log').read_text(errors='replace')})")
        yield port, url
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)
        log.close()


def test_readers_are_answered_while_uploads_trickle_in(site, alice):
    from rest_framework.authtoken.models import Token

    port, url = site
    token = Token.objects.create(user=alice).key
    stop = threading.Event()
    uploads = [threading.Thread(target=_trickle, args=(port, token, stop), daemon=True) for _ in range(WORKERS)]
    for upload in uploads:
        upload.start()
    try:
        time.sleep(1.0)  # each upload is being read by a worker now
        waits = []
        deadline = time.monotonic() + TRICKLE_S - 2
        while time.monotonic() < deadline:
            started = time.monotonic()
            assert requests.get(url, timeout=TRICKLE_S * 2).status_code == 200
            waits.append(time.monotonic() - started)
        assert all(upload.is_alive() for upload in uploads)  # still trickling while the readers were answered
    finally:
        stop.set()
        for upload in uploads:
            upload.join(timeout=10)
    assert len(waits) >= 3 and max(waits) < READER_BOUND_S, waits

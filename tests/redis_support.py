"""A throwaway redis-server on a free port, for tests that stop and restart a broker or cache
(never the machine's own Redis on 6379)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    def __init__(self, port: int | None = None, data_dir: Path | None = None) -> None:
        """With data_dir, an append-only file keeps the queues across a restart, as a production
        broker's persistence does."""
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed")
        self.port = port or free_port()
        self.data_dir = data_dir
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        persistence = (["--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.data_dir)]
                       if self.data_dir else ["--appendonly", "no"])
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *persistence],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

"""Concurrent HTTP readers for the load benchmarks: threads with http.client, one connection per
request (gunicorn's sync workers close each one), timing each request on the client side."""

from __future__ import annotations

import http.client
import itertools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass
class Result:
    seconds: float
    latencies: list[float] = field(default_factory=list)  # ms, answered with 2xx/3xx
    statuses: Counter = field(default_factory=Counter)  # status code, or the exception's name

    @property
    def ok(self) -> int:
        return len(self.latencies)

    @property
    def errors(self) -> int:
        return sum(self.statuses.values()) - self.ok

    def rate(self) -> float:
        return self.ok / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def line(self) -> str:
        bad = {k: v for k, v in self.statuses.items() if not (isinstance(k, int) and k < 400)}
        return (f"{self.rate():7.1f} req/s  p50 {self.pct(0.5):7.0f} ms  p99 {self.pct(0.99):7.0f} ms  "
                f"{self.ok:6d} ok  {self.errors} errors{' ' + str(dict(bad)) if bad else ''}")


def fetch(base: str, path: str, timeout: float = 60.0) -> tuple[int | str, float]:
    parts = urlsplit(base)
    began = time.perf_counter()
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
        response = conn.getresponse()
        response.read()
        return response.status, (time.perf_counter() - began) * 1000
    except (OSError, http.client.HTTPException) as exc:
        return type(exc).__name__, (time.perf_counter() - began) * 1000
    finally:
        conn.close()


def readers(base: str, paths: list[str], *, clients: int, seconds: float) -> dict[str, Result]:
    """`clients` threads, each requesting the paths in turn (client k starts at path k) for `seconds`;
    one Result per path."""
    results = {path: Result(seconds) for path in paths}
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(k: int) -> None:
        for path in itertools.islice(itertools.cycle(paths), k % len(paths), None):
            if time.monotonic() >= deadline:
                return
            status, ms = fetch(base, path)
            with lock:
                results[path].statuses[status] += 1
                if isinstance(status, int) and status < 400:
                    results[path].latencies.append(ms)

    began = time.monotonic()
    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for result in results.values():
        result.seconds = time.monotonic() - began  # requests in flight at the deadline count too
    return results

"""The one client a runner talks to its site through (the runner API, /api/runner/v1/).

    client = SiteClient("https://board.example", token)
    claim = client.claim(wait_s=20)

Every call is retried after a dropped connection, a timeout or a 5xx with a growing wait (BACKOFF_S),
for at most `lost_site_s` in all, then SiteLost; the site's answers that retrying cannot change are
exceptions of their own: Revoked (401: stop), Forbidden (403: not this runner's task), Fenced (409:
the task was handed on: write nothing more). Every write is idempotent on the site, so a retry after
a connection that dropped once the site had acted changes nothing twice.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from pathlib import Path
from urllib.parse import quote

import requests

log = logging.getLogger(__name__)
API = "/api/runner/v1/"
BACKOFF_S = (0.5, 1, 2, 5, 10, 30)
CHUNK_BYTES = 4 << 20
TIMEOUT_S = 60.0


class ApiError(Exception):
    def __init__(self, status: int, detail: str, body: dict | None = None) -> None:
        super().__init__(f"{status}: {detail}")
        self.status, self.detail, self.body = status, detail, body or {}


class Revoked(ApiError):
    """The token is unknown or revoked: the runner stops."""


class Forbidden(ApiError):
    """Not this runner's task."""


class Fenced(ApiError):
    """The task's lease was handed on: this attempt writes nothing more."""


class SiteLost(Exception):
    """The site did not answer for `lost_site_s`."""


class SiteClient:
    def __init__(self, site: str, token: str, *, lost_site_s: float = 300.0, session: requests.Session | None = None):
        self.base = site.rstrip("/") + API
        self.lost_site_s = lost_site_s
        self.http = session or requests.Session()
        self.http.headers["Authorization"] = f"Runner {token}"
        self.retries = 0  # calls sent again after a failure, for the logs and the benchmarks

    def pool(self, connections: int) -> None:
        """Keep up to `connections` connections open to the site: one per slot calling at once."""
        adapter = requests.adapters.HTTPAdapter(pool_maxsize=max(connections, 10))
        for scheme in ("http://", "https://"):
            self.http.mount(scheme, adapter)

    # --- the runner ---------------------------------------------------------------------------

    def register(self, hardware: dict) -> dict:
        return self._call("POST", "register/", json=hardware)

    def claim(self, wait_s: float = 20.0) -> dict | None:
        """The next task this runner can serve, or None after `wait_s` without one."""
        return self._call("POST", "claim/", json={"wait_s": wait_s}, timeout=wait_s + TIMEOUT_S) or None

    # --- its task -----------------------------------------------------------------------------

    def renew(self, task: dict, log_tail: str | None = None) -> dict:
        body = {"lease": task["lease"], **({"log_tail": log_tail} if log_tail is not None else {})}
        return self._call("POST", f"tasks/{task['task']}/lease/", json=body)

    def start(self, task: dict, recipe: dict) -> dict:
        return self._call("POST", f"tasks/{task['task']}/start/", json={"lease": task["lease"], "recipe": recipe})

    def steps(self, task: dict, agent: list[tuple[int, bytes]], gateway: list[tuple[int, bytes]] | None = None) -> dict:
        def text(lines):
            return [[n, line.decode("utf-8", "replace")] for n, line in lines or ()]

        return self._call(
            "POST",
            f"tasks/{task['task']}/steps/",
            json={"lease": task["lease"], "agent": text(agent), "gateway": text(gateway)},
        )

    def upload(self, task: dict, key: str, path: Path, *, name: str, kind: str, chunk: int = CHUNK_BYTES) -> dict:
        """Send the file in chunks, from wherever the site's copy ends (a resumed upload sends only the
        rest); the site checks its sha256 once it has every byte."""
        size, sha256 = os.path.getsize(path), file_sha256(path)
        url = f"tasks/{task['task']}/uploads/{key}/"
        headers = {
            "X-Lease-Owner": task["lease"]["owner"],
            "X-Lease-Attempt": str(task["lease"]["attempt"]),
            "Upload-Length": str(size),
            "Upload-Sha256": sha256,
            "Upload-Name": quote(name),
            "Upload-Kind": kind,
        }
        state = _upload_state(self._call("GET", url, headers=headers), name)
        offset = state["received"]
        with open(path, "rb") as f:
            while not state["complete"]:
                f.seek(offset)
                body = f.read(chunk)
                try:
                    answer = self._call("PUT", url, data=body, headers={**headers, "Upload-Offset": str(offset)})
                except ApiError as exc:
                    if exc.status != 409 or "received" not in exc.body:
                        raise
                    answer = {"received": exc.body["received"], "complete": False}
                state = _upload_state(answer, name)
                offset = state["received"]
        return state

    def snapshot(self, task: dict, key: str, seconds: float) -> dict:
        return self._call(
            "POST", f"tasks/{task['task']}/snapshots/", json={"lease": task["lease"], "key": key, "seconds": seconds}
        )

    def finish(self, task: dict, report: dict) -> dict:
        return self._call("POST", f"tasks/{task['task']}/finish/", json={"lease": task["lease"], **report})

    def release(self, task: dict, error: str) -> dict:
        """Hand the task back before its agent started: its status then, "queued" or "failed"."""
        return self._call("POST", f"tasks/{task['task']}/release/", json={"lease": task["lease"], "error": error})

    def fetch(self, task: dict, sha256: str, target: Path, what: str = "data") -> None:
        """A public data file (`what`: or "agent", a file of the task's packaged agent) by its hash
        into `target`, verified (a wrong hash is never kept)."""
        partial = part_of(target)

        def download() -> requests.Response:
            url = self.base + f"tasks/{task['task']}/{what}/{sha256}/"
            response = self.http.get(url, stream=True, timeout=TIMEOUT_S)
            self._raise_for(response)
            digest = hashlib.sha256()
            with open(partial, "wb") as out:
                for block in response.iter_content(1 << 20):
                    digest.update(block)
                    out.write(block)
            if digest.hexdigest() != sha256:
                raise ApiError(502, f"{what} file {sha256}: the content does not match its hash")
            return response

        try:
            self._retrying(download)
            partial.rename(target)
        finally:
            partial.unlink(missing_ok=True)

    # --- the wire -----------------------------------------------------------------------------

    def _call(self, method: str, path: str, *, timeout: float = TIMEOUT_S, **kwargs) -> dict:
        def send() -> requests.Response:
            response = self.http.request(method, self.base + path, timeout=timeout, **kwargs)
            self._raise_for(response)
            return response

        response = self._retrying(send)
        return response.json() if response.content else {}

    def _retrying(self, send):
        started = time.monotonic()
        for attempt in range(1_000_000):
            try:
                return send()
            except (requests.ConnectionError, requests.Timeout, _ServerError) as exc:
                wait = BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)]
                if time.monotonic() - started + wait > self.lost_site_s:
                    raise SiteLost(f"the site did not answer for {self.lost_site_s:g} s: {exc}") from exc
                log.warning("site unreachable (%s); again in %s s", exc.__class__.__name__, wait)
                self.retries += 1
                time.sleep(wait)
        raise AssertionError("unreachable")

    @staticmethod
    def _raise_for(response: requests.Response) -> None:
        if response.status_code < 400:
            return
        if response.status_code >= 500:
            raise _ServerError(f"{response.status_code} from the site")
        try:
            body = response.json()
        except ValueError:
            body = {"detail": response.text[:500]}
        detail = str(body.get("detail", ""))
        kind = {401: Revoked, 403: Forbidden}.get(response.status_code, ApiError)
        if response.status_code == 409 and body.get("fenced"):
            kind = Fenced
        raise kind(response.status_code, detail, body)


class _ServerError(Exception):
    pass


def _upload_state(answer: dict, name: str) -> dict:
    """The site's upload state, or ApiError for anything else (an answer cut short, empty, or stood in for
    by something between the runner and the site): the task is then abandoned, never the runner."""
    received, complete = answer.get("received"), answer.get("complete", False)
    if isinstance(received, bool) or not isinstance(received, int) or received < 0 or not isinstance(complete, bool):
        raise ApiError(0, f"the site's answer to the upload of {name} holds no upload state", answer)
    return answer


def part_of(target: Path) -> Path:
    """A partial file beside `target`, of this writer alone: two slots fetching the same file at once
    never write into each other's, and each renames a whole file over `target`."""
    return target.with_name(f"{target.name}.{os.getpid()}-{threading.get_ident()}.part")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

"""An operator's git mirror, as tests serve it: bare repositories at the paths GitHub would have them
(`thesofakillers/aideml`), over git's dumb HTTP protocol (`git update-server-info` and a static file
server) on this host's loopback. A build reaches it only through the build proxy."""

from __future__ import annotations

import functools
import subprocess
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "mirror",
    "GIT_AUTHOR_EMAIL": "mirror@example.org",
    "GIT_COMMITTER_NAME": "mirror",
    "GIT_COMMITTER_EMAIL": "mirror@example.org",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "PATH": "/usr/bin:/bin",
}


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def bare_repository(root: Path, path: str, files: dict[str, str | bytes], *, tag: str) -> Path:
    """`root/<path>`: a bare repository of one commit holding `files`, tagged `tag`, ready for dumb HTTP."""
    work = root.parent / f"{root.name}-work" / path
    for name, content in files.items():
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    _git("init", "-q", "-b", "main", cwd=work)
    _git("add", "-A", cwd=work)
    _git("commit", "-q", "-m", f"{path} at {tag}", cwd=work)
    _git("tag", tag, cwd=work)
    bare = root / path
    bare.parent.mkdir(parents=True, exist_ok=True)
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=root)
    _git("update-server-info", cwd=bare)
    return bare


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def served(root: Path):
    """A static HTTP server of `root` on 127.0.0.1; yields its URL (the mirror's, for GitHub's paths)
    and the list of paths it was asked for."""
    asked: list[str] = []

    class Handler(_Quiet):
        def do_GET(self):  # noqa: N802 (http.server's name)
            asked.append(self.path)
            super().do_GET()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}", asked
    finally:
        httpd.shutdown()
        httpd.server_close()

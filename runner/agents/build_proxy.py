"""The HTTP(S) proxy an agent image build reaches the operator's registries through, and nothing else.

A build in the `registries` mode (runner.agents.build_network) runs on a Docker network with no way
out but this proxy, and gets it as its `http_proxy`/`https_proxy`. It forwards plain HTTP requests
(apt's Debian mirror) and tunnels CONNECT (pip's index, git's mirror over HTTPS) only to the host
names it was given; anything else is answered `403 Not an allowed registry` and remembered, so a
failed build can name the host it reached for. Names are resolved here, on the building host, never
by the build: the build network has no DNS.

    with FilteringProxy(["pypi.org", "deb.debian.org:80"], bind="172.17.0.1") as proxy:
        proxy.url, proxy.refused
"""

from __future__ import annotations

import select
import socket
import socketserver
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

REFUSED = "Not an allowed registry"
CONNECT_TIMEOUT_S = 30
IDLE_TIMEOUT_S = 300
CHUNK = 64 * 1024
HOP_HEADERS = {"host", "proxy-connection", "connection", "keep-alive", "proxy-authorization"}


def parse_allowed(entries) -> set[tuple[str, int | None]]:
    """`host` (any port) or `host:port`, lower case; blanks dropped."""
    allowed: set[tuple[str, int | None]] = set()
    for entry in entries:
        entry = entry.strip().lower()
        if not entry:
            continue
        host, sep, port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        allowed.add((host, int(port)) if sep and port.isdigit() else (entry, None))
    return allowed


class FilteringProxy:
    """A threaded proxy on `bind` (an ephemeral port unless `port`), allowing only `allowed` hosts."""

    def __init__(self, allowed, *, bind: str = "127.0.0.1", port: int = 0):
        self.allowed = parse_allowed(allowed)
        self.refused: list[str] = []
        self._server = _Server((bind, port), _Handler)
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="build-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self._server.server_address[0]!s}:{self.port}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def allows(self, host: str, port: int) -> bool:
        host = host.strip("[]").lower().rstrip(".")
        return (host, None) in self.allowed or (host, port) in self.allowed

    def refuse(self, target: str) -> None:
        if target not in self.refused:
            self.refused.append(target)

    def __enter__(self) -> FilteringProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    proxy: FilteringProxy


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def do_CONNECT(self):
        host, _, port = self.path.rpartition(":")
        if not port.isdigit() or not self.server.proxy.allows(host, int(port)):
            return self._refuse(self.path)
        upstream = self._connect(host.strip("[]"), int(port))
        if upstream is None:
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        _pipe(self.connection, upstream)
        self.close_connection = True

    def _forward(self):
        """A plain HTTP request in absolute form, sent on as origin form with `Connection: close`."""
        url = urlsplit(self.path)
        port = url.port or 80
        if url.scheme != "http" or not url.hostname:
            return self._refuse(self.path, status=400)
        if not self.server.proxy.allows(url.hostname, port):
            return self._refuse(f"{url.hostname}:{port}")
        upstream = self._connect(url.hostname, port)
        if upstream is None:
            return
        target = (url.path or "/") + (f"?{url.query}" if url.query else "")
        # The Host header is the allowed host's own: a CDN that serves several sites from one address
        # would otherwise route by a Host the build chose (domain fronting).
        headers = [f"{k}: {v}" for k, v in self.headers.items() if k.lower() not in HOP_HEADERS]
        host = f"Host: {url.hostname}" + (f":{url.port}" if url.port else "")
        head = "\r\n".join([f"{self.command} {target} HTTP/1.1", host, *headers, "Connection: close", "", ""])
        upstream.sendall(head.encode("latin-1"))
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            upstream.sendall(self.rfile.read(length))
        _pipe(self.connection, upstream)
        self.close_connection = True

    do_GET = do_HEAD = do_POST = do_PUT = do_OPTIONS = _forward

    def _connect(self, host: str, port: int) -> socket.socket | None:
        try:
            return socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
        except OSError as exc:
            self.send_error(502, f"Cannot reach {host}:{port}: {exc}")
            return None

    def _refuse(self, target: str, status: int = 403):
        self.server.proxy.refuse(target)
        body = f"medalboard build proxy: {target} is not among the registries this build may reach\n".encode()
        self.send_response(status, REFUSED)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True


def _pipe(client: socket.socket, upstream: socket.socket) -> None:
    """Bytes both ways until either side closes (or both stay idle too long)."""
    sockets = [client, upstream]
    try:
        while True:
            readable, _, broken = select.select(sockets, [], sockets, IDLE_TIMEOUT_S)
            if broken or not readable:
                return
            for source in readable:
                data = source.recv(CHUNK)
                if not data:
                    return
                (upstream if source is client else client).sendall(data)
    except OSError:
        return
    finally:
        upstream.close()

"""The build proxy of the `registries` build mode: plain HTTP and CONNECT reach only the named hosts;
anything else is answered 403 and remembered (no Docker needed: a client on this host talks to it)."""

from __future__ import annotations

import http.client
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from runner.agents.build_proxy import REFUSED, FilteringProxy, parse_allowed


@pytest.fixture
def origin():
    """A registry stand-in on the loopback that says which path it was asked for."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            body = f"served {self.path} for {self.headers['Host']}\n".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_port
    httpd.shutdown()
    httpd.server_close()


def _get_through(proxy: FilteringProxy, url: str) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    connection.request("GET", url)
    response = connection.getresponse()
    return response.status, response.reason, response.read()


def test_plain_http_is_sent_with_the_allowed_hosts_own_host_header(origin):
    """A build cannot name another site on an allowed address (a CDN routes by Host)."""
    with FilteringProxy([f"127.0.0.1:{origin}"]) as proxy:
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
        connection.request("GET", f"http://127.0.0.1:{origin}/x", headers={"Host": "elsewhere.example"})
        assert connection.getresponse().read() == f"served /x for 127.0.0.1:{origin}\n".encode()


def _connect_through(proxy: FilteringProxy, target: str) -> tuple[str, socket.socket]:
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return head.split(b"\r\n", 1)[0].decode(), sock


def test_plain_http_reaches_an_allowed_host_only(origin):
    with FilteringProxy([f"127.0.0.1:{origin}"]) as proxy:
        assert _get_through(proxy, f"http://127.0.0.1:{origin}/debian/dists/bookworm/Release") == (
            200,
            "OK",
            f"served /debian/dists/bookworm/Release for 127.0.0.1:{origin}\n".encode(),
        )
        status, reason, body = _get_through(proxy, f"http://localhost:{origin}/simple/")  # the same server, unnamed
    assert (status, reason) == (403, REFUSED) and b"not among the registries" in body
    assert proxy.refused == [f"localhost:{origin}"]


def test_connect_tunnels_to_an_allowed_host_and_refuses_any_other(origin):
    with FilteringProxy(["127.0.0.1"]) as proxy:
        status, sock = _connect_through(proxy, f"127.0.0.1:{origin}")
        with sock:
            sock.sendall(b"GET /simple/pip/ HTTP/1.0\r\nHost: pypi.org\r\n\r\n")
            answer = b"".join(iter(lambda: sock.recv(4096), b""))
        refused, other = _connect_through(proxy, f"pypi.example:{origin}")
        other.close()
    assert status == "HTTP/1.1 200 Connection established"
    assert answer.endswith(b"served /simple/pip/ for pypi.org\n")
    assert refused == f"HTTP/1.1 403 {REFUSED}" and proxy.refused == [f"pypi.example:{origin}"]


def test_a_port_named_allows_that_port_only(origin):
    with FilteringProxy([f"127.0.0.1:{origin + 1}"]) as proxy:
        status, reason, _ = _get_through(proxy, f"http://127.0.0.1:{origin}/")
    assert (status, reason) == (403, REFUSED)


def test_allowed_entries_are_host_names_with_an_optional_port():
    assert parse_allowed(["PyPI.org", " deb.debian.org:80 ", "", "git.internal:8443"]) == {
        ("pypi.org", None),
        ("deb.debian.org", 80),
        ("git.internal", 8443),
    }

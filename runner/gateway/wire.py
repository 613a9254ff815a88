"""The gateway's HTTP/1.1 plumbing on asyncio streams (h11 does the parsing and framing), and its
Unix socket."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
from pathlib import Path

import h11
import orjson


async def next_event(conn: h11.Connection, reader: asyncio.StreamReader, timeout: float):
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        data = await asyncio.wait_for(reader.read(65536), timeout)
        conn.receive_data(data)


def json_body(body: bytes) -> dict | None:
    if not body or body[:1] not in (b"{", b" ", b"\n", b"\t", b"\r"):
        return None
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


async def send(conn: h11.Connection, writer: asyncio.StreamWriter, event) -> None:
    writer.write(conn.send(event))
    await writer.drain()


async def write(writer: asyncio.StreamWriter, parts: list[bytes]) -> None:
    """`parts` (framed by h11) in one write, then emptied."""
    if parts:
        writer.write(b"".join(parts))
        parts.clear()
        await writer.drain()


async def send_json(conn: h11.Connection, writer, status: int, message: str, kind: str) -> None:
    body = orjson.dumps({"error": {"message": message, "type": kind}})
    headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
    if conn.their_state is not h11.DONE:  # the request was not read to its end: answer, then close
        headers.append(("connection", "close"))
    await write(writer, [conn.send(h11.Response(status_code=status, headers=headers)),
                         conn.send(h11.Data(data=body)), conn.send(h11.EndOfMessage())])


async def bad_request(conn: h11.Connection, writer, exc: h11.RemoteProtocolError) -> None:
    if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
        return
    with contextlib.suppress(Exception):
        await send_json(conn, writer, exc.error_status_hint, f"bad HTTP request: {exc}", "medalboard_gateway")


def listen_unix(path: Path) -> socket.socket:
    """A listening Unix socket at `path`, connectable by the sandbox's user (the run's token is what
    authenticates). A long path is bound through /proc/self/fd, past the 107-byte limit of sun_path."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise FileExistsError(f"{path} exists and is not a socket")
        os.unlink(path)  # a socket left by an earlier attempt of this task
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if len(os.fsencode(path)) < 100:
        sock.bind(os.fspath(path))
    else:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            sock.bind(f"/proc/self/fd/{folder}/{path.name}")
        finally:
            os.close(folder)
    os.chmod(path, 0o666)
    sock.listen(1024)
    sock.setblocking(False)
    return sock

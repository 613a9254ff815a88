"""Offers the runner's LLM gateway inside a sandbox that has no network: listens on 127.0.0.1:PORT
(loopback works under Docker's network `none`) and forwards each connection's bytes, both ways, to
the gateway's Unix socket bind-mounted into the sandbox. Standard library only (Python 3.11+).

    python gateway_forwarder.py --port 8787 --socket /run/medalboard/gateway.sock            # serve
    python gateway_forwarder.py --port 8787 --socket /run/medalboard/gateway.sock -- CMD ...  # serve while CMD runs

With a command it runs it once listening, passes SIGTERM and SIGINT on to it, and exits with its
exit code (a signal N as 128 + N), so it can wrap an agent's command. It prints one line,
`gateway forwarder listening on 127.0.0.1:PORT`, to stderr once the port is open.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import threading


class Relay(asyncio.Protocol):
    """One side of a forwarded connection: what it receives is written to the other side's transport
    as it comes (protocol callbacks, no stream objects or awaits per chunk: the relay is on every LLM
    call's path). A side whose peer cannot keep up stops reading until the peer has drained; an EOF is
    passed on as a half-close, since the other side may still answer; a side that closes closes both."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.peer: Relay | None = None
        self.pending: list[bytes] = []  # received before the peer was connected
        self.eof = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def attach(self, peer: Relay) -> None:
        self.peer, peer.peer = peer, self
        if self.pending:
            peer.transport.write(b"".join(self.pending))
            self.pending = []
        if self.eof:
            peer.pass_eof()

    def data_received(self, data: bytes) -> None:
        if self.peer is None:
            self.pending.append(data)
        else:
            self.peer.transport.write(data)

    def eof_received(self) -> bool:
        self.eof = True
        if self.peer is not None:
            self.peer.pass_eof()
        return True  # keep our writing side open for the answer

    def pass_eof(self) -> None:
        if self.transport.can_write_eof():
            self.transport.write_eof()

    def pause_writing(self) -> None:  # our transport's buffer is full: stop the peer reading
        if self.peer is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None:
            self.peer.transport.resume_reading()

    def connection_lost(self, exc) -> None:
        if self.peer is not None and not self.peer.transport.is_closing():
            self.peer.transport.close()  # after what it still has to write


def accept(socket_path: str) -> Relay:
    """The client's side; the gateway's side is connected to it once the Unix socket answers."""
    client = Relay()

    async def connect() -> None:
        loop = asyncio.get_running_loop()
        try:
            _, gateway = await loop.create_unix_connection(Relay, socket_path)
        except OSError as exc:
            print(f"gateway forwarder: cannot reach {socket_path}: {exc}", file=sys.stderr, flush=True)
            client.transport.close()
            return
        if client.transport.is_closing():
            gateway.transport.close()
            return
        client.attach(gateway)

    asyncio.get_running_loop().create_task(connect())
    return client


async def serve(port: int, socket_path: str, host: str, started: threading.Event | None = None) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: accept(socket_path), host, port, backlog=1024)
    print(f"gateway forwarder listening on {host}:{server.sockets[0].getsockname()[1]}", file=sys.stderr, flush=True)
    if started is not None:
        started.set()
    async with server:
        await server.serve_forever()


def run_command(command: list[str], port: int, socket_path: str, host: str) -> int:
    started = threading.Event()
    thread = threading.Thread(target=asyncio.run, args=(serve(port, socket_path, host, started),), daemon=True)
    thread.start()
    if not started.wait(30):
        print("gateway forwarder: could not start listening", file=sys.stderr, flush=True)
        return 1
    child = subprocess.Popen(command)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda number, frame: child.send_signal(number))
    code = child.wait()
    return 128 - code if code < 0 else code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--socket", default="/run/medalboard/gateway.sock")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ...: run CMD while forwarding")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if command:
        return run_command(command, args.port, args.socket, args.host)
    try:
        asyncio.run(serve(args.port, args.socket, args.host))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

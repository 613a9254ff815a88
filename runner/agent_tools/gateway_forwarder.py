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

CHUNK = 65536


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()  # half-close: the other side still answers
    except (ConnectionError, OSError):
        writer.close()


async def forward(client_reader, client_writer, socket_path: str) -> None:
    try:
        upstream_reader, upstream_writer = await asyncio.open_unix_connection(socket_path)
    except OSError as exc:
        print(f"gateway forwarder: cannot reach {socket_path}: {exc}", file=sys.stderr, flush=True)
        client_writer.close()
        return
    try:
        await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))
    finally:
        upstream_writer.close()
        client_writer.close()


async def serve(port: int, socket_path: str, host: str, started: threading.Event | None = None) -> None:
    server = await asyncio.start_server(lambda r, w: forward(r, w, socket_path), host, port, backlog=1024)
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

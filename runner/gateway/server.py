"""The gateway: an HTTP/1.1 server (h11 on asyncio, in a thread of its own) in front of the LLM upstreams.

One per task. It listens on a Unix socket in the runner's own folder for the task (bind-mounted into
the sandbox, where runner/agent_tools/gateway_forwarder.py offers it on 127.0.0.1), and/or on TCP
127.0.0.1 (the local backend, tests). Each request is routed (runner.gateway.routing), admitted
against the job's limits (runner.gateway.limits), sent upstream with the real key (httpx, one pool
per gateway), and its reply passed back as it arrives, chunk by chunk, while runner.gateway.observe
reads the usage from it. Then the call is recorded (runner.gateway.record). The HTTP/1.1 plumbing
and the socket are runner.gateway.wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import h11
import httpx
import orjson
from django.conf import settings

from runner.gateway.config import configured_upstreams
from runner.gateway.keys import RunKeys, Scrubber
from runner.gateway.limits import Limits, Meter, Totals
from runner.gateway.observe import EventFilter, Observer
from runner.gateway.prices import Price, PriceTable
from runner.gateway.record import FLUSH_S, Recorder, Step, bounded_prompt, bounded_text, digest
from runner.gateway.routing import Refused, Route, downstream_headers, route, upstream_headers
from runner.gateway.wire import bad_request, json_body, listen_unix, next_event, send, send_json, write

log = logging.getLogger(__name__)
MAX_REQUEST_BYTES = 32 << 20  # a prompt with images fits; a flood does not
# What the sandbox can make the runner hold at once: connections (each with its upstream one) and
# request bodies being read or sent. Past either, new work is refused rather than the runner starved.
MAX_CONNECTIONS = 256
BODY_BUDGET_BYTES = 256 << 20
MAX_HEADER_BYTES = 64 << 10
IDLE_S = 300.0  # a kept-alive connection with no new request is closed after this
READ_S = 120.0  # the longest pause while a request is being sent
STOP_S = 10.0
WRITE_BYTES = 1 << 20  # a reply that is not an event stream is passed on in writes of about this size


@dataclass
class Call:
    route: Route
    model: str
    body: dict | None
    began: float = field(default_factory=time.perf_counter)
    status: int = 0
    observer: Observer | None = None
    prepared: bool = False  # the gateway changed the request (e.g. asked for a stream's usage)
    error: str = ""
    disconnected: bool = False
    recorded: bool = False


class Gateway:
    """    gateway = Gateway(keys=keys, prices=load_prices(), limits=Limits.from_settings(job.settings),
                          steps_path=runner_dir / "llm.jsonl", on_step=callback)
        gateway.start(unix_path=runner_dir / "gateway.sock")   # and/or tcp_port=0
        ...
        gateway.stop(); gateway.totals()
    """

    def __init__(self, *, keys: RunKeys, upstreams: dict[str, str] | None = None,
                 prices: dict[str, Price] | None = None, limits: Limits | None = None, steps_path: Path | None = None,
                 on_step: Callable[[Step], None] | None = None, started_at: float | None = None,
                 timeout_s: float | None = None) -> None:
        self.keys = keys
        self.upstreams = configured_upstreams() if upstreams is None else dict(upstreams)
        self.meter = Meter(limits or Limits(), PriceTable(prices))
        self.recorder = Recorder(steps_path, on_step, started_at)
        self.timeout_s = timeout_s or getattr(settings, "LLM_TIMEOUT_S", 600.0)
        self.real_keys = keys.real_keys()
        self.port: int | None = None
        self.unix_path: Path | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: list[asyncio.AbstractServer] = []
        self._connections: set[asyncio.Task] = set()
        self._body_bytes = 0  # request bytes held by all connections now
        self._transport: httpx.AsyncHTTPTransport | None = None
        self._timeouts: dict = {}
        self._flush_due: asyncio.TimerHandle | None = None

    # --- the runner's side ----------------------------------------------------------------------

    def start(self, *, unix_path: Path | None = None, tcp_port: int | None = None) -> Gateway:
        """Listen (on the socket, on 127.0.0.1:tcp_port, 0 for any free port) and return once listening."""
        if unix_path is None and tcp_port is None:
            raise ValueError("the gateway needs a Unix socket path or a TCP port to listen on")
        ready, failure = threading.Event(), []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, args=(unix_path, tcp_port, ready, failure),
                                        name="llm-gateway", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is None or self._thread is None or not self._thread.is_alive():
            self.recorder.close()
            return
        future = asyncio.run_coroutine_threadsafe(self._close(), self._loop)
        with contextlib.suppress(Exception):
            future.result(STOP_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STOP_S)
        self.recorder.close()

    def totals(self) -> Totals:
        return self.meter.totals()

    def status(self) -> str:
        """What the job page should say about the LLMs of this run ("" when all the job's keys can be used)."""
        if not self.upstreams:
            return "no LLM is reachable from this runner (it has no MEDALBOARD_LLM_UPSTREAMS)"
        unusable = sorted(f"{name} ({provider})" for provider, (name, _) in self.keys.by_provider.items()
                          if provider not in self.upstreams)
        return f"no LLM upstream on this runner for {', '.join(unusable)}" if unusable else ""

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- the loop's thread ------------------------------------------------------------------------

    def _run(self, unix_path, tcp_port, ready: threading.Event, failure: list) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._open(unix_path, tcp_port))
        except Exception as exc:  # noqa: BLE001 - handed to start(), which raises it in the runner's thread
            failure.append(exc)
            self._loop.run_until_complete(self._close())
            self._loop.close()
            ready.set()
            return
        ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def _open(self, unix_path: Path | None, tcp_port: int | None) -> None:
        # The transport without a client around it: no cookies, redirects or auth to handle, and a
        # third less work per call (the client's layers were most of the gateway's own CPU time).
        self._transport = httpx.AsyncHTTPTransport(
            trust_env=False, limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=64))
        self._timeouts = httpx.Timeout(self.timeout_s, connect=15.0).as_dict()
        if unix_path is not None:
            sock = listen_unix(Path(unix_path))
            self._servers.append(await asyncio.start_unix_server(self._connection, sock=sock, limit=MAX_HEADER_BYTES))
            self.unix_path = Path(unix_path)
        if tcp_port is not None:
            server = await asyncio.start_server(self._connection, "127.0.0.1", tcp_port, backlog=1024)
            self._servers.append(server)
            self.port = server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        if self._transport is not None:
            await self._transport.aclose()
        if self.unix_path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.unix_path)

    # --- one connection ---------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._connections) >= MAX_CONNECTIONS:
            self.meter.refused()
            writer.close()
            return
        self._connections.add(asyncio.current_task())
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADER_BYTES)
        try:
            while True:
                event = await next_event(conn, reader, IDLE_S)
                if not isinstance(event, h11.Request):
                    break
                await self._exchange(conn, reader, writer, event)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break
                conn.start_next_cycle()
        except h11.RemoteProtocolError as exc:
            await bad_request(conn, writer, exc)
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError, h11.LocalProtocolError):
            pass
        finally:
            self._connections.discard(asyncio.current_task())
            writer.close()

    async def _exchange(self, conn: h11.Connection, reader, writer, request: h11.Request) -> None:
        held = [0]
        try:
            body = await self._body(conn, reader, writer, held)
            target = route(request, self.keys, self.upstreams)
            await self._call(conn, writer, request, target, body)
        except Refused as refusal:
            await self._refuse(conn, writer, refusal)
        finally:
            self._body_bytes -= held[0]

    async def _body(self, conn: h11.Connection, reader, writer, held: list[int]) -> bytes:
        """The request body, counted against the gateway's budget while it is held (`held[0]` bytes)."""
        if conn.they_are_waiting_for_100_continue:
            await send(conn, writer, h11.InformationalResponse(status_code=100, headers=[]))
        parts = []
        while True:
            event = await next_event(conn, reader, READ_S)
            if isinstance(event, h11.EndOfMessage):
                return b"".join(parts)
            if not isinstance(event, h11.Data):
                raise ConnectionError("the client closed the connection mid-request")
            held[0] += len(event.data)
            self._body_bytes += len(event.data)
            if held[0] > MAX_REQUEST_BYTES:
                raise Refused(413, f"the request body passes the gateway's {MAX_REQUEST_BYTES >> 20} MiB limit")
            if self._body_bytes > BODY_BUDGET_BYTES:
                raise Refused(503, "the gateway holds too many large requests at once; retry shortly",
                              kind="medalboard_busy")
            parts.append(event.data)

    async def _call(self, conn: h11.Connection, writer, request: h11.Request, target: Route, body: bytes) -> None:
        obj = json_body(body)
        prepared = obj is not None and target.provider.prepare(target.path, obj)
        if prepared:
            body = orjson.dumps(obj)
        call = Call(target, target.provider.model(target.path, obj), obj, prepared=prepared)
        limit = self.meter.admit(call.model)
        if limit is not None:
            await self._refuse(conn, writer, Refused(429, limit[1], "medalboard_limit", limit=limit[0]), call)
            return
        try:
            await self._forward(conn, writer, request, body, call)
        finally:
            if not call.recorded:
                self._record(call)

    async def _forward(self, conn: h11.Connection, writer, request: h11.Request, body: bytes, call: Call) -> None:
        provider = call.route.provider
        upstream = httpx.Request(request.method.decode("latin-1"), call.route.url, content=body,
                                 headers=upstream_headers(request, provider, self.keys.for_provider(provider.name)),
                                 extensions={"timeout": self._timeouts})
        try:
            response = await self._transport.handle_async_request(upstream)
            response.request = upstream
        except httpx.HTTPError as exc:
            call.status = 504 if isinstance(exc, httpx.TimeoutException) else 502
            call.error = f"the {provider.name} upstream could not be reached: {exc.__class__.__name__}"
            await send_json(conn, writer, call.status, call.error, "medalboard_upstream")
            return
        try:
            await self._relay(conn, writer, response, call)
        except httpx.HTTPError as exc:
            call.error = f"the {provider.name} upstream failed mid-reply: {exc.__class__.__name__}"
            raise ConnectionError(call.error) from exc  # the reply is cut: the connection must end
        except ConnectionError:
            call.disconnected = True
            raise
        finally:
            await response.aclose()

    async def _relay(self, conn: h11.Connection, writer, response: httpx.Response, call: Call) -> None:
        call.status = response.status_code
        headers = [(name.lower(), value) for name, value in response.headers.multi_items()]
        call.observer = Observer(call.route.provider, response.headers.get("content-type", "").startswith(
            "text/event-stream"))
        scrubber = Scrubber(self.real_keys)
        hide = EventFilter(call.route.provider) if call.prepared and call.observer.event_stream else None
        # The head goes with the first bytes of the body, and a reply that is not an event stream in one
        # write with its end (up to WRITE_BYTES): one send and one wake-up of the client, not three.
        out = [conn.send(h11.Response(status_code=response.status_code, reason=response.reason_phrase,
                                      headers=downstream_headers(headers, self.real_keys)))]
        held = 0
        async for chunk in response.aiter_bytes():
            held += self._pass(conn, out, scrubber.feed(chunk), call.observer, hide)
            if call.observer.event_stream or held > WRITE_BYTES:
                held = 0
                await write(writer, out)
        self._pass(conn, out, scrubber.flush(), call.observer, hide)
        if hide is not None:
            self._pass(conn, out, hide.flush(), None, None)
        call.observer.finish()
        self._record(call)  # before the reply ends: a client that has it finds its tokens counted and its step
        out.append(conn.send(h11.EndOfMessage()))
        await write(writer, out)

    @staticmethod
    def _pass(conn: h11.Connection, out: list[bytes], data: bytes, observer: Observer | None,
              hide: EventFilter | None) -> int:
        """Bytes on to the client (framed into `out`): the observer reads them all, the client gets them
        less what `hide` drops. How many bytes went into `out`."""
        if observer is not None and data:
            observer.feed(data)
        if hide is not None:
            data = hide.feed(data)
        if not data:
            return 0
        out.append(conn.send(h11.Data(data=data)))
        return len(data)

    async def _refuse(self, conn: h11.Connection, writer, refusal: Refused, call: Call | None = None) -> None:
        if refusal.kind != "medalboard_limit":  # the meter counted its own refusal
            self.meter.refused()
        if refusal.record:
            self.recorder.error(refusal.message, {
                "type": refusal.kind, "status": refusal.status, "limit": refusal.limit or None,
                "provider": call.route.provider.name if call else None, "model": call.model if call else None,
                "totals": self.meter.totals().as_dict()})
            self._flush_soon()
        await send_json(conn, writer, refusal.status, refusal.message, refusal.kind)

    def _record(self, call: Call) -> None:
        call.recorded = True
        observer = call.observer
        usage = observer.usage if observer else None
        tokens_in, tokens_out = (usage.tokens_in, usage.tokens_out) if usage else (None, None)
        cost = self.meter.finish(call.model, tokens_in, tokens_out)
        messages = call.route.provider.prompt(call.body)
        kept, omitted = bounded_prompt(messages)
        reply, cut = bounded_text(observer.reply_text if observer else "")
        data = {
            "provider": call.route.provider.name, "model": call.model, "path": call.route.path,
            "status": call.status, "stream": bool(observer and observer.event_stream),
            "tokens_in": tokens_in, "tokens_out": tokens_out, "cost": cost,
            "latency_s": round(time.perf_counter() - call.began, 4),
            "messages_sha256": digest(messages), "messages": kept, "messages_omitted": omitted,
            "reply": reply, "reply_truncated": cut or bool(observer and observer.reply_cut),
            "totals": self.meter.totals().as_dict(),
        }
        if call.error:
            data["error"] = call.error
        if call.disconnected:
            data["client_disconnected"] = True
        if usage is not None and not usage.known:
            data["usage_missing"] = True
        self.recorder.llm(data)
        self._flush_soon()

    def _flush_soon(self) -> None:
        if self._flush_due is None:
            self._flush_due = self._loop.call_later(FLUSH_S, self._flush)

    def _flush(self) -> None:
        self._flush_due = None
        self.recorder.flush()

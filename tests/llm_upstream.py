"""A scripted LLM upstream for the gateway's tests and benchmark: OpenAI-style chat completions,
Anthropic-style messages and Gemini-style generateContent on 127.0.0.1, with fixed replies and fixed
usage numbers, streamed or not. It records what it received and when it sent each stream chunk.

Model names script it: "slow" answers after SLOW_S; "huge" replies with HUGE_CHARS of text; "leaky"
echoes the credential it got in a header and in the reply, as a careless upstream might (streamed:
in one event whose bytes come in two chunks, split in the middle of the key).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPENAI_USAGE = (11, 7)
ANTHROPIC_USAGE = (13, 5)  # input_tokens, output_tokens
ANTHROPIC_CACHED = 4  # cache_read_input_tokens, counted as input too
GEMINI_USAGE = (17, 3)
REPLY = ["Hel", "lo ", "there"]
SLOW_S = 0.5
HUGE_CHARS = 9 << 20  # past what the gateway keeps of a reply whole


class ScriptedUpstream:
    def __init__(self, chunk_pause_s: float = 0.0, reply: str | None = None) -> None:
        self.chunk_pause_s = chunk_pause_s
        self.reply = reply  # the text of a non-streamed chat completion; REPLY's when None
        self.requests: list[dict] = []
        self.chunk_sent_at: list[float] = []
        self.received = threading.Event()
        self.server = _Server(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> ScriptedUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self) -> None:
        self.requests.clear()
        self.chunk_sent_at.clear()
        self.received.clear()


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # the default 5 would refuse a burst of concurrent calls


def _handler(upstream: ScriptedUpstream):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two sends: Nagle would hold the body for an ACK

        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            upstream.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
            upstream.received.set()
            model = body.get("model", "")
            if model == "slow":
                time.sleep(SLOW_S)
            credential = self.headers.get("authorization") or self.headers.get("x-api-key") \
                or self.headers.get("x-goog-api-key") or ""
            leak = credential.removeprefix("Bearer ") if model == "leaky" else ""
            if self.path == "/v1/chat/completions":
                self._openai(body, leak)
            elif self.path == "/v1/messages":
                self._anthropic(body, leak)
            elif self.path.startswith("/v1beta/models/"):
                self._gemini(leak)
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def _openai(self, body: dict, leak: str) -> None:
            model = body.get("model", "")
            if not body.get("stream"):
                text = "x" * HUGE_CHARS if model == "huge" else (upstream.reply or "".join(REPLY)) + leak
                message = {"role": "assistant", "content": text}
                self._json(200, {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": model,
                                 "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                                 "usage": _openai_usage()}, leak)
                return
            events = [_chunk(model, {"content": piece}) for piece in _pieces(leak)]
            events.append(_chunk(model, {}, finish="stop"))
            if (body.get("stream_options") or {}).get("include_usage"):
                events.append({"id": "cmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model,
                               "choices": [], "usage": _openai_usage()})
            self._stream([f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"], leak)

        def _anthropic(self, body: dict, leak: str) -> None:
            tokens_in, tokens_out = ANTHROPIC_USAGE
            usage = {"input_tokens": tokens_in, "cache_read_input_tokens": ANTHROPIC_CACHED,
                     "output_tokens": tokens_out}
            if not body.get("stream"):
                self._json(200, {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model"),
                                 "content": [{"type": "text", "text": "".join(REPLY) + leak}],
                                 "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}, leak)
                return
            start = {"type": "message_start", "message": {
                "id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model"), "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}}
            events = [("message_start", start),
                      ("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {"type": "text", "text": ""}})]
            events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": piece}})
                       for piece in _pieces(leak)]
            events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
                       ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                          "usage": {"output_tokens": tokens_out}}),
                       ("message_stop", {"type": "message_stop"})]
            self._stream([f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events], leak)

        def _gemini(self, leak: str) -> None:
            tokens_in, tokens_out = GEMINI_USAGE
            self._json(200, {"candidates": [{"content": {"role": "model", "parts": [{"text": "".join(REPLY) + leak}]}}],
                             "usageMetadata": {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out}},
                       leak)

        def _json(self, status: int, obj: dict, leak: str = "") -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            if leak:
                self.send_header("x-debug-credential", leak)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, events: list[str], leak: str) -> None:
            try:
                self._send_events(events, leak)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the gateway hung up, as it does when its client left

        def _send_events(self, events: list[str], leak: str) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            if leak:
                self.send_header("x-debug-credential", leak)
            self.end_headers()
            for i, event in enumerate(events):
                if i and upstream.chunk_pause_s:
                    time.sleep(upstream.chunk_pause_s)
                data = event.encode()
                cut = data.find(leak.encode()) + len(leak) // 2 if leak and leak in event else len(data)
                parts = [data[:cut], data[cut:]] if cut < len(data) else [data]
                for part in parts:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.flush()
                    if len(parts) > 1:
                        time.sleep(0.01)  # two sends, so the gateway reads them as two chunks
                upstream.chunk_sent_at.append(time.monotonic())
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler


def _pieces(leak: str) -> list[str]:
    return [*REPLY, leak] if leak else REPLY


def _chunk(model: str, delta: dict, finish: str | None = None) -> dict:
    return {"id": "cmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _openai_usage() -> dict:
    tokens_in, tokens_out = OPENAI_USAGE
    return {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out}

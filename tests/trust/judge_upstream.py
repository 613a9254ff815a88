"""A scripted OpenAI-compatible judge for the LLM judge's tests (no tests here): it answers each of
MLE-bench's questions "yes" when the log or code it is shown holds that question's tell-tale, naming
the step, else "no"; a log holding UNSURE gets an answer with no verdict, one holding ECHO a "yes"
that quotes every line of the log with a comma (as a careless judge quotes what it read)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TELLS = {"submission file itself": "cat > /home/submission/submission.csv",
         "external LLM API": "api.openai.com", "beyond what it was given": "/private/"}


def verdict(content: str, question: str) -> str:
    if "UNSURE" in content:
        return "I cannot tell from this log."
    for phrase, tell in TELLS.items():
        if phrase in question:
            if tell in content:
                step = _step_of(content, tell)
                quoted = "\n".join(line for line in content.splitlines() if "," in line) if "ECHO" in content else ""
                return f"At step {step} the agent does it.\n{quoted}\nThe final answer is yes."
            return "Nothing of the kind happens. The final answer is no."
    return "Unknown question. The final answer is no."


def _step_of(content: str, tell: str) -> str:
    before = content[:content.index(tell)]
    found = re.findall(r"step (\d+)", before)
    return found[-1] if found else "0"


class JudgeUpstream:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> JudgeUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(upstream: JudgeUpstream):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            upstream.requests.append({"path": self.path, "body": body, "auth": self.headers.get("authorization")})
            messages = body["messages"]
            answer = verdict(messages[1]["content"], messages[2]["content"])
            reply = json.dumps({"id": "judge", "object": "chat.completion", "model": body["model"],
                                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                                             "finish_reason": "stop"}],
                                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
            data = reply.encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    return Handler

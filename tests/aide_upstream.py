"""A scripted OpenAI-compatible upstream that plays the model AIDE (aideml 0.2.2) talks to, on
127.0.0.1, for end-to-end tests.

AIDE asks for two things, through the Responses API for OpenAI's own model names (`/v1/responses`)
and chat completions for others (`/v1/chat/completions`): a plan and a solution in markdown (draft,
improve, debug, and the final report), and a review of a solution's output through the function
`submit_review`, forced by `tool_choice`. Each solution is a real script for spaceship-titanic that
AIDE runs in its workspace: it reads ./input/sample_submission.csv (and train.csv when there is
one), writes ./submission/submission.csv and prints a validation accuracy. The review reads that
number back from the output AIDE shows it, so the tree's metrics are what the code printed; output
without it is reviewed as a bug. Every reply carries USAGE.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USAGE = (1000, 200)  # input, output tokens of every reply
REVIEW_TOOL = "submit_review"
METRIC = re.compile(r"Validation accuracy: ([0-9.]+)")

# The k-th solution AIDE asks for predicts the majority class (False here: the public folder has no
# train.csv) but flips the first k passengers, so each node's submission is told apart by its count
# of True, and prints ACCURACIES[k] as its hold-out accuracy: the best is node 1, not the last.
ACCURACIES = (0.51, 0.58, 0.53, 0.55, 0.52, 0.54, 0.56, 0.57)
BEST = ACCURACIES.index(max(ACCURACIES))

SOLUTION = '''\
import os

import pandas as pd

sample = pd.read_csv("./input/sample_submission.csv")
majority = False
if os.path.exists("./input/train.csv"):
    majority = bool(pd.read_csv("./input/train.csv")["Transported"].mode().iloc[0])
sample["Transported"] = majority
sample.loc[sample.index < {flipped}, "Transported"] = not majority
os.makedirs("./submission", exist_ok=True)
sample.to_csv("./submission/submission.csv", index=False)
accuracy = {accuracy}
print(f"Validation accuracy: {{accuracy:.4f}}")
'''

PLAN = ("Predict the majority class of `Transported`, flipping the first {flipped} passengers; its hold-out "
        "accuracy is printed.")


def reply(k: int) -> str:
    """The plan and code of the k-th solution."""
    code = SOLUTION.format(flipped=k, accuracy=ACCURACIES[k % len(ACCURACIES)])
    return f"{PLAN.format(flipped=k)}\n\n```python\n{code}```\n"


class AideUpstream:
    """`with AideUpstream() as up:` serves on `up.url`; `up.calls` lists (path, model, kind) per call,
    `up.credentials` the Authorization header of each."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []
        self.credentials: list[str | None] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> AideUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def review(prompt: str) -> dict:
    """What the reviewer says of a solution, from the output AIDE put in its prompt."""
    found = METRIC.findall(prompt)
    if not found:
        return {"is_bug": True, "summary": "The script printed no validation accuracy.", "metric": None,
                "lower_is_better": False}
    return {"is_bug": False, "summary": f"The script ran and scored {found[-1]} on the hold-out set.",
            "metric": float(found[-1]), "lower_is_better": False}


def _text(messages) -> str:
    """All the text of a chat or Responses API input, whatever its shape."""
    if isinstance(messages, str):
        return messages
    if isinstance(messages, list):
        return "\n".join(_text(m) for m in messages)
    if isinstance(messages, dict):
        return "\n".join(_text(messages.get(key)) for key in ("content", "text") if messages.get(key))
    return ""


def _wants_review(body: dict) -> bool:
    return any((tool.get("name") or (tool.get("function") or {}).get("name")) == REVIEW_TOOL
               for tool in body.get("tools") or [])


def _responses_reply(body: dict, k: int) -> dict:
    prompt = _text(body.get("input"))
    if _wants_review(body):
        item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": REVIEW_TOOL,
                "arguments": json.dumps(review(prompt)), "status": "completed"}
    else:
        item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": reply(k), "annotations": []}]}
    tokens_in, tokens_out = USAGE
    return {"id": "resp_1", "object": "response", "created_at": 0, "status": "completed",
            "model": body.get("model"), "output": [item], "parallel_tool_calls": False, "tools": [],
            "tool_choice": "auto",
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out,
                      "total_tokens": tokens_in + tokens_out, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def _chat_reply(body: dict, k: int) -> dict:
    prompt = _text(body.get("messages"))
    if _wants_review(body):
        call = {"id": "call_1", "type": "function",
                "function": {"name": REVIEW_TOOL, "arguments": json.dumps(review(prompt))}}
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": reply(k)}, "stop"
    tokens_in, tokens_out = USAGE
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                      "total_tokens": tokens_in + tokens_out}}


ROUTES = {"/v1/responses": _responses_reply, "/v1/chat/completions": _chat_reply}


def _handler(upstream: AideUpstream):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            route = ROUTES.get(self.path)
            if route is None:
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            upstream.credentials.append(self.headers.get("authorization"))
            with upstream.lock:
                k = sum(1 for _, _, kind in upstream.calls if kind == "code")
                upstream.calls.append((self.path, body.get("model", ""), "review" if _wants_review(body) else "code"))
            self._json(200, route(body, k))

        def _json(self, status: int, obj: dict) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler

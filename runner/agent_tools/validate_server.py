#!/usr/bin/env python3
"""MLE-bench's submission checker, inside the sandbox: http://127.0.0.1:5000/validate and /health.

    POST /validate  (multipart form, the file in the field `file`, as `curl -F file=@submission.csv`)
        200 {"result": "Submission is valid."}  or  {"result": "Submission invalid! <why>"}
    GET /health     200 {"status": "running"}

The answer comes from the FORMAT check of check_submission.py against the competition's sample
submission in the public data: it never sees answers and never gives a score. Standard library only;
sandbox_init.py starts it before the agent.
"""

from __future__ import annotations

import argparse
import email.parser
import email.policy
import json
import os
import sys
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_submission import CheckError, check  # noqa: E402

VALID = "Submission is valid."
MAX_BYTES = int(os.environ.get("MEDALBOARD_VALIDATE_MAX_BYTES", str(256 << 20)))


def sample_submission(data_dir: Path) -> Path:
    """sample_submission.csv, or the one CSV in the data folder whose name says it is a sample."""
    exact = data_dir / "sample_submission.csv"
    if exact.is_file():
        return exact
    found = sorted(p for p in data_dir.glob("*.csv") if "sample" in p.name.lower() and "submission" in p.name.lower())
    return found[0] if found else exact


def verdict(submission: Path, data_dir: Path) -> str:
    result = check(str(submission), str(sample_submission(data_dir)))
    if result["valid"]:
        return VALID
    return "Submission invalid! " + "; ".join(result["errors"])


def uploaded_file(content_type: str, body: bytes) -> bytes | None:
    """The `file` field of a multipart/form-data body (None if there is none)."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    if not message.is_multipart():
        return None
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True) or b""
    return None


class Handler(BaseHTTPRequestHandler):
    data_dir = Path("/home/data")

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.split("?")[0] == "/health":
            return self.answer(200, {"status": "running"})
        self.answer(404, {"error": "not found: GET /health or POST /validate"})

    def do_POST(self) -> None:  # noqa: N802
        if self.path.split("?")[0] != "/validate":
            return self.answer(404, {"error": "not found: POST /validate"})
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            return self.answer(411, {"error": "a Content-Length is needed"})
        if int(length) > MAX_BYTES:
            return self.answer(413, {"error": f"the submission is larger than {MAX_BYTES} bytes"})
        content = uploaded_file(self.headers.get("Content-Type", ""), self.rfile.read(int(length)))
        if content is None:
            return self.answer(400, {"error": "send the submission as the form field `file` "
                                              "(curl -X POST -F file=@submission.csv ...)"})
        self.answer(*self.validate(content))

    def validate(self, content: bytes) -> tuple[int, dict]:
        with tempfile.NamedTemporaryFile(suffix=".csv", prefix="submission_to_validate-") as handle:
            handle.write(content)
            handle.flush()
            try:
                return 200, {"result": verdict(Path(handle.name), self.data_dir)}
            except CheckError as exc:
                return 500, {"error": "An unexpected error occurred.", "details": str(exc)}

    def answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args) -> None:  # noqa: A002 - quiet: the agent's output is its own
        return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--data", default=os.environ.get("DATA_DIR", "/home/data"))
    args = parser.parse_args(argv)
    Handler.data_dir = Path(args.data)
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())

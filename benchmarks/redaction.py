"""Redacting a job's secrets from a large agent log (a benchmark, not a test).

    .venv/bin/python benchmarks/redaction.py [--mb 50] [--secrets 3] [--repeat 3]

Builds a log of about --mb megabytes from the lines agents print (pip and training progress, JSON
steps, URLs with percent-escapes, hex digests, base64 blobs wrapped at 76 characters, tracebacks),
with each secret planted a few times in each encoding the redactor covers, and streams it through
runner.host.secrets.Redactor in 1 MiB chunks, as runner.host.outputs stores a file. The baseline, measured in
the same run on the same log, is one compiled alternation of the encodings spelled out literally
(the value, quote(safe=""), JSON, lower and upper hex, unwrapped base64 at each alignment, reversed):
what the redactor did before it matched any safe set, either hex case and wrapped base64. Prints the
MB/s of each and the redactor / baseline time ratio; checks that no planted encoding survives.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote, quote_plus

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runner.host.secrets import REPLACEMENT, Redactor, _forms  # noqa: E402

CHUNK = 1 << 20


def encodings(secret: str) -> list[bytes]:
    raw = secret.encode()
    return [raw, quote(secret).encode(), quote_plus(secret).encode(), quote(secret, safe="").encode(),
            "".join(f"%{b:02x}" for b in raw).encode(), raw.hex().encode(), raw.hex().upper().encode(),
            base64.encodebytes(b"key=" + raw * 3), base64.urlsafe_b64encode(b"k:" + raw), json.dumps(secret).encode()]


def log_lines(rng: random.Random) -> list[bytes]:
    words = "loss epoch step train valid accuracy model fold lr batch saving checkpoint warning".split()
    blob = base64.encodebytes(rng.randbytes(600)).decode()
    return [f"epoch {rng.randint(0, 99)} step {rng.randint(0, 9999)} loss={rng.random():.5f} "
            f"{' '.join(rng.choices(words, k=6))}\n".encode() for _ in range(400)] + [
        json.dumps({"kind": "observation", "text": " ".join(rng.choices(words, k=20))}).encode() + b"\n",
        f"GET https://huggingface.co/api/models/{quote('org/model name+v2', safe='')}?rev=%2Fmain 200\n".encode(),
        f"sha256:{rng.randbytes(32).hex()}\n".encode(), blob.encode(),
        b"Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\nValueError: bad\n",
        b"Collecting torch==2.3.0\n  Downloading torch-2.3.0-cp311-cp311-manylinux1_x86_64.whl (779.1 MB)\n"]


def build_log(mb: int, secrets: list[str], seed: int = 7) -> bytes:
    rng = random.Random(seed)
    lines, plants = log_lines(rng), [form for secret in secrets for form in encodings(secret)]
    out, size = [], 0
    while size < mb << 20:
        line = rng.choice(plants) + b"\n" if rng.random() < 0.0005 else rng.choice(lines)
        out.append(line)
        size += len(line)
    return b"".join(out)


def literal_baseline(secrets: list[str]) -> re.Pattern:
    forms = sorted({form for secret in secrets for form in _forms(secret.encode())}, key=len, reverse=True)
    return re.compile(b"|".join(re.escape(form) for form in forms))


def timed(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--secrets", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    secrets = [f"sk-{i}-{random.Random(i).randbytes(18).hex()}/+ é" for i in range(args.secrets)]
    data = build_log(args.mb, secrets)
    chunks = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]
    redactor, baseline = Redactor(secrets), literal_baseline(secrets)
    redacted = b"".join(redactor.stream(iter(chunks)))
    left = [form for secret in secrets for form in encodings(secret) if form in redacted]
    assert not left and redacted.count(REPLACEMENT) > 0, left
    new = timed(lambda: b"".join(redactor.stream(iter(chunks))), args.repeat)
    old = timed(lambda: [baseline.sub(REPLACEMENT, chunk) for chunk in chunks], args.repeat)
    mb = len(data) / (1 << 20)
    print(f"log: {mb:.0f} MiB, {len(secrets)} secrets, {redacted.count(REPLACEMENT):,} replaced")
    print(f"literal forms (baseline): {old:.2f} s, {mb / old:.0f} MiB/s")
    print(f"redactor:                 {new:.2f} s, {mb / new:.0f} MiB/s")
    print(f"redactor / baseline: {new / old:.2f}x the time")


if __name__ == "__main__":
    main()

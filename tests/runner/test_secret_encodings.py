"""The redactor replaces a secret in every encoding it promises (runner.host.secrets.Redactor): URL-quoted
with any safe set, in either hex case, every byte percent-encoded, hex, JSON, reversed, and base64 or
URL-safe base64 at any alignment, unwrapped or wrapped at MIME's or PEM's width; in one piece of text
and streamed in chunks cut anywhere. Ordinary log text (URLs, digests, base64 blobs) is left as it is.
A hostile agent in Docker that prints them all leaves none in anything the run stores or shows."""

from __future__ import annotations

import base64
import hashlib

import pytest

from leaderboard.models import Run
from runner.host.secrets import REPLACEMENT, Redactor
from runner.models import JobTask
from tests.job_support import needs_agent_tools
from tests.runner import test_hostile_agents
from tests.runner.secret_forms import ENCODINGS_SOURCE, every_encoding, leaks
from tests.runner.test_hostile_agents import assert_no_scratch_left, everything_about, hostile_job, run_task

SECRETS = [
    "tok-live-7Hq2ZpXw9LmN4rT8vKd3",  # a key as most providers make them
    "tok/live+7Hq2 ZpXw9:LmN4~rT8vKd3/abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",  # long, every quote case
    "pässwörd/with spaces & more=yes",  # not ASCII
    "a/b:c@d+e f?g&h",  # no run of characters quote keeps longer than one
]
ENCODINGS = list(every_encoding(SECRETS[0]))
runs_on = test_hostile_agents.runs_on  # the fixture: the loopback runner


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_encoding_is_replaced(secret, encoding):
    text = every_encoding(secret)[encoding]
    out = Redactor([secret]).bytes(b"GET /api?key=" + text.encode() + b"&next=1 HTTP/1.1\n")
    assert REPLACEMENT in out
    assert leaks(out, secret) == [], out
    assert out.startswith(b"GET /api?key=") and out.endswith(b"&next=1 HTTP/1.1\n")


@pytest.mark.parametrize("secret", SECRETS[:2])
def test_every_encoding_is_replaced_when_streamed_in_chunks_cut_anywhere(secret):
    data = b"".join(b"line %d: %s\n" % (n, text.encode()) for n, text in enumerate(every_encoding(secret).values()))
    redactor = Redactor([secret])
    for size in (7, 64, 1000, 4093):
        chunks = [data[i:i + size] for i in range(0, len(data), size)]
        out = b"".join(redactor.stream(iter(chunks)))
        assert leaks(out, secret) == [], size
        assert out.count(REPLACEMENT) >= len(ENCODINGS)


@pytest.mark.parametrize("secret", SECRETS[:2])
def test_every_encoding_cut_anywhere_at_a_log_edge_leaves_no_piece(secret):
    """A log's tail (or a kept head) cut inside an encoding: the piece at the edge is replaced, a
    wrapped base64 form cut in one of its lines or inside a line break (\\r|\\n, an escaped \\\\n) too.
    The CI run of 2026-12-06 stored the second line of a PEM-wrapped key this way in a job's log tail."""
    redactor = Redactor([secret])
    for name, text in every_encoding(secret).items():
        data = f"line {name}: {text}\nnext line\n".encode()
        for cut in range(1, len(data)):
            tail = redactor.text(data[cut:].decode("utf-8", "ignore"), cut_start=True).encode()
            head = b"".join(redactor.stream([data[:cut]], cut_end=True))
            assert leaks(tail, secret) == [] and leaks(head, secret) == [], (name, cut)


@pytest.mark.parametrize("secret", SECRETS)
def test_a_wrapped_form_with_other_lines_between_its_lines_leaves_no_piece(secret):
    """stdout and stderr interleaved line by line in one log: a PEM- or MIME-wrapped value's lines stand
    apart, each between foreign lines. A make test of 2026-12-06 stored a whole 64-character line so."""
    redactor = Redactor([secret])
    for name, text in every_encoding(secret).items():
        lines = text.encode().splitlines(keepends=True)
        for foreign in (b"epoch 3 loss=0.25\n", b"QUFBQUFB", b"x"):
            data = foreign.join(lines)
            out = redactor.bytes(b"> " + data + b" <\n")
            assert leaks(out, secret) == [], (name, foreign, out)
            assert out.startswith(b"> ") and out.endswith(b" <\n")


@pytest.mark.parametrize("secret", SECRETS[:2])
def test_any_piece_of_sixteen_base64_characters_is_replaced_and_shorter_ones_are_not(secret):
    for text in (every_encoding(secret)["base64, offset 1"], every_encoding(secret)["urlsafe base64"]):
        core = text.encode()[2:-4]
        for size, start in ((16, 0), (16, len(core) - 16), (17, 5), (40, 3), (15, 4)):
            piece = core[start:start + size]
            out = Redactor([secret]).bytes(b"log: " + piece + b" end")
            expected = REPLACEMENT if size >= 16 else piece
            assert out == b"log: " + expected + b" end", (size, start)


def test_ordinary_log_text_is_left_as_it_is():
    secret = SECRETS[1]
    log = b"".join([
        b"GET https://huggingface.co/api/models/org%2Fmodel%20name?rev=%2Fmain 200\n",
        f"sha256:{hashlib.sha256(b'weights').hexdigest()}\n".encode(),
        base64.encodebytes(hashlib.sha512(b"blob").digest() * 8),
        b"epoch 3 loss=0.1234 tok/live is not the whole key\n",
    ])
    assert Redactor([secret]).bytes(log) == log


@pytest.mark.parametrize("secret", [SECRETS[0], SECRETS[3]])
def test_a_secret_among_many_similar_anchors_is_still_found(secret):
    """Anchors found everywhere (a log full of the secret's first characters) only cost time."""
    noise = secret[:len(secret) // 2].encode() * 5000
    out = Redactor([secret]).bytes(noise + every_encoding(secret)["quote safe=''"].encode() + noise)
    assert out == noise + REPLACEMENT + noise


@pytest.mark.docker
@needs_agent_tools
def test_a_hostile_agent_printing_its_secrets_in_every_encoding_stores_none(alice, client, runs_on,
                                                                            docker_backend):
    """Through the real path (a container under runc and runsc, the supervisor, the stored outputs,
    the trajectory import and every page): each encoding on stdout, stderr, in a code file and in the
    trajectory's steps."""
    env = {"LONG_TOKEN": SECRETS[1], "MY_TOKEN": SECRETS[0]}
    job = hostile_job(alice, f"""
        exec({ENCODINGS_SOURCE!r})
        steps = []
        for var in ("LONG_TOKEN", "MY_TOKEN"):
            for name, text in every_encoding(os.environ[var]).items():
                print(f"{{var}} {{name}}: {{text}}", flush=True)
                print(text, file=sys.stderr, flush=True)
                steps.append({{"kind": "observation", "text": f"{{name}}: {{text}}"}})
                steps.append({{"kind": "code", "title": name, "data": {{"content": "key = " + repr(text)}}}})
                with open(code / "leak.py", "a") as f:
                    f.write(f"# {{name}}\\n{{text}}\\n")
        (logs / "trajectory.jsonl").write_text("".join(json.dumps(step) + "\\n" for step in steps))
        valid_submission()
    """, env=env)
    outcome, run, _ = run_task(job, runs_on, docker_backend)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None
    assert run.trajectory.n_steps == 4 * len(ENCODINGS)
    assert {"code/leak.py", "logs/agent-output.log", "logs/trajectory.jsonl"} <= set(
        run.artifacts.values_list("name", flat=True))
    stored = everything_about(run, job, client)
    assert stored.count(REPLACEMENT) >= 2 * len(ENCODINGS)  # they were there to be found, and replaced
    for secret in env.values():
        assert leaks(stored, secret) == [], secret
    assert_no_scratch_left()

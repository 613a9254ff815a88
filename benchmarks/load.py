"""Readers under hostile uploads: does the site keep serving while bad files are processed?
A benchmark, not a test.

    .venv/bin/python benchmarks/load.py                          # 15 s per phase (make bench)
    .venv/bin/python benchmarks/load.py --seconds 30 --broker redis://127.0.0.1:6379/7   # the issue's run

A throwaway site (PostgreSQL database `medalboard_load`, created and dropped, when PostgreSQL answers
at 127.0.0.1:5432, else SQLite; DEBUG off) with the catalogue, the smoke competitions (answers
registered, so uploads are graded), 1k SYNTHETIC graded runs and one synthetic replay run of --steps
steps, served by gunicorn (2 workers) with a Celery worker (the embedded filesystem broker, or
--broker). --clients readers request `/`, the replay page and `/api/runs/` in turn:
  1. for --seconds with nothing else going on: the baseline, measured in the same run;
  2. for --seconds while 12 hostile uploads are posted to `POST /api/runs/` with a token (a tar.gz
     holding a 1 GiB member, 100,000 nested brackets, one --big-step-mb step, a truncated zip, a zip
     bomb, `a` and `a/b`, a path escaping the folder, an empty zip, a UTF-16 journal, tokens_in 10**30,
     and two valid ones whose bodies trickle in over 6 s) and the worker processes them.
It prints requests/s, p50/p99/max and errors per path for both phases (the max: one reader stuck
behind an upload is what a person notices, and p99 hides it), gunicorn's CPU per answer (steadier
than rates on a shared machine) and the ratios (readers are not starved when phase 2 keeps phase 1's rate
and p99), then what became of each upload: the HTTP answer (201, 202 and 400 all count as handled; 5xx or
no answer do not) and the run's final state. --intake-wait sets how long an upload request waits for its
import before answering (MEDALBOARD_INTAKE_WAIT_S): a sync worker that waits serves no reader.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import io
import json
import os
import subprocess
import sys
import tarfile
import time
import uuid
import zipfile
import zlib
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import http_load, site  # noqa: E402

POSTGRES = "postgres://postgres@127.0.0.1:5432/medalboard_load"
COMPETITION = "smoke-wine"
FINAL = {"graded", "failed", "waiting"}
TRICKLE_S = 6.0  # two uploads whose bodies arrive this slowly: as many as gunicorn has worker processes


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", help=f"default {POSTGRES} when PostgreSQL answers, else SQLite")
    parser.add_argument("--broker", help="e.g. redis://127.0.0.1:6379/7; default the embedded filesystem broker")
    parser.add_argument("--seconds", type=float, default=15, help="length of each phase (the issue: 30)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--steps", type=int, default=10_000, help="steps of the replay run")
    parser.add_argument("--big-step-mb", type=int, default=32, help="size of the one huge step")
    parser.add_argument("--settle-seconds", type=float, default=180, help="how long to wait for uploads to end")
    parser.add_argument("--intake-wait", help="MEDALBOARD_INTAKE_WAIT_S for the site: how long an upload request "
                        "waits for its import before answering 202 (the site's default when not given)")
    parser.add_argument("--keep", action="store_true")
    return parser.parse_args()


def default_database() -> str | None:
    try:
        import psycopg2

        psycopg2.connect(POSTGRES.rsplit("/", 1)[0] + "/postgres", connect_timeout=3).close()
        return POSTGRES
    except Exception:  # noqa: BLE001 - any failure means "no PostgreSQL here"
        print("PostgreSQL is not reachable at 127.0.0.1:5432: using SQLite")
        return None


# --- the site's content -----------------------------------------------------------------------------


def populate(var: Path, steps: int) -> tuple[int, str]:
    """Smoke competitions, 1k synthetic runs, a replay run; returns (replay run id, an API token)."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token
    from support import synthetic

    call_command("make_smoke_competitions", root=str(var / "smoke"), stdout=open(os.devnull, "w"))
    synthetic.add_runs(experiments=range(5), seeds=range(3))
    site.rebuild_aggregates()
    replay = synthetic.add_replay_run(steps)
    user = get_user_model().objects.create_user("synthetic-uploader", "uploader@example.org", "not-used")
    return replay, Token.objects.create(user=user).key


# --- hostile files ----------------------------------------------------------------------------------


def tar_gz_with_huge_member(size: int = 1 << 30) -> bytes:
    """A tar.gz whose one member inflates to `size` zero bytes (about 1 MB per GiB on the wire)."""
    header = tarfile.TarInfo("submission/submission.csv")
    header.size = size
    packer, block = zlib.compressobj(9, zlib.DEFLATED, 31), bytes(1 << 20)  # wbits 31: a gzip stream
    out = [packer.compress(header.tobuf(format=tarfile.USTAR_FORMAT))]
    out += [packer.compress(block) for _ in range(size >> 20)]
    out += [packer.compress(bytes(1024)), packer.flush()]  # the end-of-archive blocks
    return b"".join(out)


def zip_of(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def zip_bomb(size: int = 1 << 30) -> bytes:
    """A zip holding one member of `size` zero bytes (about 1 MB on the wire)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        info = zipfile.ZipInfo("logs/huge.log")
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as member:
            block = bytes(1 << 20)
            for _ in range(size >> 20):
                member.write(block)
    return buffer.getvalue()


def jsonl(*lines: dict) -> bytes:
    head = {"format": "medalboard-trajectory", "version": 1, "task": COMPETITION, "agent": "synthetic-hostile"}
    return "\n".join(json.dumps(line) for line in (head, *lines)).encode() + b"\n"


def hostile_uploads(sample: bytes, big_step_mb: int) -> list[tuple[str, dict[str, tuple[str, bytes]]]]:
    """(label, files) for the 12 hostile uploads; every one carries a valid submission except where
    the archive is the submission."""
    good = ("submission.csv", sample)
    nested = b"[" * 100_000 + b"]" * 100_000
    big = jsonl({"index": 0, "kind": "observation", "t": 0, "text": "x" * (big_step_mb << 20)})
    journal_utf16 = json.dumps({"nodes": [{"step": 0, "code": "print(1)", "plan": "p"}]}).encode("utf-16")
    return [
        ("tar.gz with a 1 GiB member", {"submission": ("run.tar.gz", tar_gz_with_huge_member())}),
        ("100,000 nested brackets", {"submission": good, "trajectory_files": ("journal.json", nested)}),
        (f"one {big_step_mb} MB step", {"submission": good, "trajectory_files": ("trajectory.jsonl", big)}),
        ("truncated zip", {"submission": ("run.zip", zip_of({"submission/submission.csv": sample})[:-40])}),
        ("zip bomb (1 GiB member)", {"submission": ("run.zip", zip_bomb())}),
        ("zip with a and a/b", {"submission": ("run.zip", zip_of({"a": b"x", "a/b": b"y",
                                                                  "submission/submission.csv": sample}))}),
        ("zip escaping its folder", {"submission": ("run.zip", zip_of({"../../escape.csv": sample}))}),
        ("empty zip", {"submission": ("run.zip", zip_of({}))}),
        ("UTF-16 journal", {"submission": good, "trajectory_files": ("journal.json", journal_utf16)}),
        ("tokens_in 10**30", {"submission": good, "trajectory_files": (
            "trajectory.jsonl", jsonl({"index": 0, "kind": "llm", "t": 1, "data": {"tokens_in": 10**30}}))}),
        *[(f"body sent over {TRICKLE_S:g} s ({n})", {"submission": good}) for n in (1, 2)],
    ]


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[str, bytes]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, (filename, data) in files.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return f"multipart/form-data; boundary={boundary}", b"".join(parts)


def send_slowly(conn: http.client.HTTPConnection, headers: dict, body: bytes, seconds: float) -> None:
    """The request with its body trickled in over `seconds` (a client on a slow link, or one that
    holds a connection on purpose): the server's request handler waits on it all that time."""
    conn.putrequest("POST", "/api/runs/")
    for name, value in {**headers, "Content-Length": str(len(body))}.items():
        conn.putheader(name, value)
    conn.endheaders()
    chunks = 20
    for k in range(chunks):
        conn.send(body[k * len(body) // chunks:(k + 1) * len(body) // chunks])
        time.sleep(seconds / chunks)


def post_upload(base: str, token: str, seed: int, files: dict, trickle_s: float = 0) -> tuple[int | str, float, dict]:
    fields = {"competition": COMPETITION, "agent": "synthetic-hostile", "model": "synthetic-model-hostile",
              "seed": str(seed), "notes": "synthetic: a hostile upload made by benchmarks/load.py"}
    content_type, body = multipart(fields, files)
    parts = urlsplit(base)
    began = time.perf_counter()
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    headers = {"Content-Type": content_type, "Authorization": f"Token {token}", "Accept": "application/json"}
    try:
        try:
            if trickle_s:
                send_slowly(conn, headers, body, trickle_s)
            else:
                conn.request("POST", "/api/runs/", body=body, headers=headers)
        except BrokenPipeError:
            pass  # the server answered before reading the whole body (a refusal): read that answer
        response = conn.getresponse()
        raw = response.read()
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = {"body": raw[:200].decode(errors="replace")}
        return response.status, time.perf_counter() - began, payload
    except (OSError, http.client.HTTPException) as exc:
        return type(exc).__name__, time.perf_counter() - began, {}
    finally:
        conn.close()


def get_json(base: str, path: str, token: str) -> dict:
    server = urlsplit(base)
    conn = http.client.HTTPConnection(server.hostname, server.port, timeout=30)
    try:
        conn.request("GET", path, headers={"Accept": "application/json", "Authorization": f"Token {token}"})
        return json.loads(conn.getresponse().read() or b"{}")
    except (OSError, ValueError, http.client.HTTPException) as exc:
        return {"status": type(exc).__name__}
    finally:
        conn.close()


def outcome(base: str, token: str, payload: dict) -> tuple[str, bool]:
    """(what became of an accepted upload, whether that is final): a 202 names an intake to follow
    (imported into a run, or failed with a reason), a 201 the run itself."""
    if "status_url" in payload:
        intake = get_json(base, urlsplit(payload["status_url"]).path, token)
        if not intake.get("done"):
            return f"intake {intake.get('status', '?')}", False
        if intake.get("run") is None:
            return f"import {intake.get('status')}: {intake.get('error', '')}", True
        payload = {"id": intake["run"]}
    if "id" not in payload:
        return "", True
    status = str(get_json(base, f"/api/runs/{payload['id']}/", token).get("status", ""))
    return status, status in FINAL


# --- processes --------------------------------------------------------------------------------------


def start_worker(var: Path) -> subprocess.Popen:
    """A Celery worker, returned once it says it is ready (its start-up is not part of phase 1)."""
    log = var / "worker.log"
    with open(log, "ab") as out:
        worker = subprocess.Popen([str(site.BIN / "celery"), "-A", "webapp", "worker", "--loglevel", "INFO",
                                   "--concurrency", "2"], cwd=site.ROOT, env=os.environ.copy(), stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while b" ready." not in log.read_bytes():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the Celery worker did not start: see {log}")
        time.sleep(0.5)
    return worker


# --- the two phases ---------------------------------------------------------------------------------


def report(title: str, results: dict[str, http_load.Result], labels: dict[str, str], cpu: float) -> None:
    answered = sum(result.ok for result in results.values())
    print(f"\n{title} (gunicorn used {cpu:.1f} s of CPU: {cpu * 1000 / max(answered, 1):.1f} ms per answer)")
    for path, result in results.items():
        print(f"  {labels[path]:14} {result.line()}  max {result.pct(1.0):6.0f} ms")


def compare(quiet: dict[str, http_load.Result], busy: dict[str, http_load.Result], labels: dict[str, str]) -> None:
    print("\nWith uploads / without (requests/s ratio, p99 ratio):")
    for path in quiet:
        q, b = quiet[path], busy[path]
        print(f"  {labels[path]:14} rate {b.rate() / q.rate():.2f}x  p99 {b.pct(0.99) / q.pct(0.99):.2f}x  "
              f"max {b.pct(1.0) / q.pct(1.0):.2f}x  (p99 {b.pct(0.99):.0f} ms, max {b.pct(1.0):.0f} ms with uploads)")


def settle(base: str, token: str, answers: list, deadline: float) -> list[str]:
    """Follow every accepted upload until it is final (or the deadline); the last state of each."""
    states = [(str(payload.get("detail") or payload)[:110], status not in (201, 202))
              for status, _, payload in answers]
    while not all(done for _, done in states) and time.monotonic() < deadline:
        states = [(state, True) if done else outcome(base, token, payload)
                  for (state, done), (_, _, payload) in zip(states, answers, strict=True)]
        time.sleep(1)
    return [state if done else f"{state} (not final after the wait)" for state, done in states]


def main() -> None:
    args = parse_args()
    database = args.database or default_database()
    var, url = site.configure(database, prefix="load")
    if args.broker:
        os.environ["CELERY_BROKER_URL"] = args.broker
    if args.intake_wait:
        os.environ["MEDALBOARD_INTAKE_WAIT_S"] = args.intake_wait
    import django

    django.setup()
    from django.db import connection, connections

    worker = None
    try:
        site.build_site()
        replay, token = populate(var, args.steps)
        sample = (var / "smoke" / "data" / COMPETITION / "prepared" / "public" / "sample_submission.csv").read_bytes()
        uploads = hostile_uploads(sample, args.big_step_mb)
        connections.close_all()
        print(f"site on {connection.vendor}, broker {os.environ.get('CELERY_BROKER_URL', 'filesystem://')}, "
              f"replay run of {args.steps:,} steps; {args.clients} readers, {args.seconds:g} s per phase")
        worker = start_worker(var)
        paths = ["/", f"/runs/{replay}/", "/api/runs/"]
        labels = dict(zip(paths, ["/", "replay page", "/api/runs/"], strict=True))
        with site.gunicorn(workers=2, log=var / "gunicorn.log") as server:
            base = server.base
            for path in paths:
                http_load.fetch(base, path)
            began = server.cpu()
            quiet = http_load.readers(base, paths, clients=args.clients, seconds=args.seconds)
            report("1. readers alone", quiet, labels, server.cpu() - began)
            began = server.cpu()
            with concurrent.futures.ThreadPoolExecutor(len(uploads) + 1) as pool:
                posted = [pool.submit(post_upload, base, token, seed, files,
                                      TRICKLE_S if label.startswith("body sent over") else 0)
                          for seed, (label, files) in enumerate(uploads)]
                busy = http_load.readers(base, paths, clients=args.clients, seconds=args.seconds)
                answers = [f.result() for f in posted]
            report(f"2. readers while {len(uploads)} hostile uploads are posted and processed", busy, labels,
                   server.cpu() - began)
            compare(quiet, busy, labels)
            began = time.monotonic()
            states = settle(base, token, answers, began + args.settle_seconds)
            print(f"\nHostile uploads (HTTP answer, seconds to answer, final state or the reason; all settled "
                  f"{time.monotonic() - began:.0f} s after the readers stopped):")
            for (label, _), (status, seconds, _), state in zip(uploads, answers, states, strict=True):
                print(f"  {label:28} {status!s:>5} {seconds:6.1f} s  {state}")
            handled = sum(1 for status, _, _ in answers if status in (201, 202, 400, 413))
            print(f"  handled (201/202/400/413): {handled} of {len(answers)}")
    finally:
        if worker is not None:
            site.stop(worker)
        site.cleanup(var, url, keep=args.keep)


if __name__ == "__main__":
    main()

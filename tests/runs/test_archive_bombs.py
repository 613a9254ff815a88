"""Archive bombs, really generated (a small zip of a huge run of zeros), are refused by every reader
(the upload API's run folders and trajectories, the Inspect importer) with an error naming the member,
and the worker's memory stays flat: nothing of the bomb is inflated into memory."""

from __future__ import annotations

import io
import tarfile
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.lib.archives import ArchiveError, Limits, ZipArchive, open_archive
from leaderboard.models import Run
from leaderboard.trajectories.importers import TrajectoryError, detect, read_trajectories
from tests.api.test_runs import payload, token_client

GIB = 1 << 30
SAMPLE = "samples/1_epoch_1.json"
MEMORY_BOUND = 48 << 20  # what reading may allocate at its peak; the bombs below hold 1 GiB and 300 MiB


def _zeros_zip(path: Path, members: dict[str, int], small: dict[str, bytes] | None = None) -> Path:
    """A deflated zip whose members are runs of zeros of the given sizes (written in 16 MiB chunks)."""
    chunk = b"0" * (16 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name, data in (small or {}).items():
            zf.writestr(name, data)
        for name, size in members.items():
            with zf.open(name, "w", force_zip64=True) as member:
                for start in range(0, size, len(chunk)):
                    member.write(chunk[:min(len(chunk), size - start)])
    return path


@pytest.fixture(scope="session")
def eval_bomb(tmp_path_factory) -> Path:
    """A 1 MB Inspect .eval: a real header and one sample that is a GiB of zeros."""
    path = tmp_path_factory.mktemp("bombs") / "bomb.eval"
    return _zeros_zip(path, {SAMPLE: GIB}, {"header.json": b'{"eval": {"task": "t", "model": "m"}}'})


@pytest.fixture(scope="session")
def folder_bomb(tmp_path_factory) -> Path:
    """A zipped run folder whose log is 300 MiB of zeros (about 300 KB packed)."""
    path = tmp_path_factory.mktemp("bombs") / "run.zip"
    return _zeros_zip(path, {"run/logs/agent.log": 300 << 20},
                      {"run/submission/submission.csv": b"PassengerId,Transported\n0001_01,True\n"})


def peak_bytes(work) -> int:
    """The most memory Python allocated while `work` ran (its exception, if any, is kept)."""
    tracemalloc.start()
    try:
        work()
    except Exception as exc:  # noqa: BLE001 - returned to the caller's assertions
        peak_bytes.error = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_the_inspect_importer_refuses_an_eval_bomb_naming_the_member(eval_bomb):
    assert eval_bomb.stat().st_size < 2 << 20 and detect(eval_bomb) == "inspect"
    peak_bytes.error = None
    peak = peak_bytes(lambda: list(read_trajectories(eval_bomb)))
    assert isinstance(peak_bytes.error, TrajectoryError), peak_bytes.error
    assert SAMPLE in str(peak_bytes.error) and "limit for one member" in str(peak_bytes.error)
    assert peak < MEMORY_BOUND, f"{peak:,} bytes"


@pytest.mark.parametrize(("limits", "message"), [
    (Limits(total_bytes=4 * GIB, member_bytes=4 * GIB, ratio=200, members=100), "times its packed"),
    (Limits(total_bytes=64 << 20, member_bytes=4 * GIB, ratio=10**6, members=100), "the archive unpacks to more"),
])
def test_each_cap_alone_stops_the_bomb_before_it_is_inflated(eval_bomb, limits, message):
    archive = ZipArchive(eval_bomb, limits)
    peak_bytes.error = None
    peak = peak_bytes(lambda: archive.read(SAMPLE))
    assert isinstance(peak_bytes.error, ArchiveError) and message in str(peak_bytes.error), peak_bytes.error
    assert SAMPLE in str(peak_bytes.error) and peak < MEMORY_BOUND


def test_reading_counts_the_bytes_that_come_out_and_stops_at_the_cap(eval_bomb):
    """Headers can be trusted only so far: past the header checks, the stream itself stops at the cap."""
    archive = ZipArchive(eval_bomb, Limits(total_bytes=4 * GIB, member_bytes=4 * GIB, ratio=10**6, members=100))
    archive.members()
    archive.limits = archive._meter.limits = Limits(total_bytes=4 * GIB, member_bytes=8 << 20, ratio=10**6,
                                                    members=100)  # as if the header had claimed less
    read = []
    with pytest.raises(ArchiveError, match=f"{SAMPLE}.*more than 8,388,608 bytes"):
        for chunk in archive.chunks(SAMPLE):
            read.append(len(chunk))
    assert sum(read) <= 8 << 20


def test_the_upload_api_refuses_an_eval_bomb_and_a_zipped_folder_bomb(alice, catalogue, eval_bomb, folder_bomb):
    client = token_client(alice)
    for field, path, member in (("trajectory_files", eval_bomb, SAMPLE), ("submission", folder_bomb, "agent.log")):
        responses: list = []

        def post(path=path, field=field, responses=responses):
            upload = SimpleUploadedFile(path.name, path.read_bytes())
            data = payload(**{field: [upload] if field == "trajectory_files" else upload})
            responses.append(client.post("/api/runs/", data, format="multipart"))

        post()  # once to load the modules an upload uses: their import is not the bomb's memory
        peak = peak_bytes(post)
        response = responses[-1]
        assert response.status_code == 400 and member in response.json()["detail"], response.content[:500]
        assert peak < MEMORY_BOUND + 2 * path.stat().st_size, f"{path.name}: {peak:,} bytes"
    assert not Run.objects.exists()


def test_a_zip_listing_too_many_members_is_refused_before_its_directory_is_read(tmp_path, settings):
    settings.ARCHIVE_MAX_MEMBERS = 1000
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for n in range(1500):
            zf.writestr(f"f{n}", b"")
    with pytest.raises(ArchiveError, match="1,500 members"):
        open_archive(path)


def test_tar_members_are_judged_from_their_headers_and_by_ratio(tmp_path, settings):
    path = tmp_path / "bomb.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        member = tarfile.TarInfo("run/logs/zeros.log")
        member.size = 64 << 20
        tf.addfile(member, io.BytesIO(b"0" * member.size))
    with pytest.raises(ArchiveError, match="times its 6.*zeros.log.*archive bomb"), open_archive(path) as archive:
        archive.members()
    settings.ARCHIVE_MEMBER_MAX_BYTES = 1 << 20
    with pytest.raises(ArchiveError, match="'run/logs/zeros.log' unpacks to more than 1,048,576"), \
            open_archive(path) as archive:
        archive.members()


def test_compression_methods_that_inflate_a_block_at_once_are_refused(tmp_path):
    path = tmp_path / "bzip2.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as zf:
        zf.writestr("run/logs/a.log", b"0" * 1000)
    with pytest.raises(ArchiveError, match="'run/logs/a.log' is compressed with method 12"), \
            open_archive(path) as archive:
        archive.members()


def test_ordinary_archives_still_unpack(tmp_path):
    path = tmp_path / "ok.zip"
    text = "".join(f"line {n}: the agent tried another model\n" for n in range(100_000)).encode()  # ~4 MB, ~30x
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("run/logs/agent.log", text)
        zf.writestr("run/submission/submission.csv", b"id,y\n1,0\n")
    with open_archive(path) as archive:
        archive.extract_to(tmp_path / "out")
    assert (tmp_path / "out" / "run" / "logs" / "agent.log").read_bytes() == text

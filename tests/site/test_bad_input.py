"""Every bad input is a 4xx with a reason, never a server error."""

from __future__ import annotations

import errno
import io
import logging
import tarfile
import zipfile

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Run
from leaderboard.runs.artifacts import UploadError
from tests.api.test_runs import payload, token_client
from tests.runs.test_submission import submit

TOO_BIG = 2**31


def _zip(members: dict[str, bytes], name: str = "run.zip") -> ContentFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for member, content in members.items():
            zf.writestr(member, content)
    return ContentFile(buffer.getvalue(), name=name)


def test_a_non_numeric_experiment_filter_is_a_400(client, catalogue):
    response = client.get("/api/runs/?experiment=abc")
    assert response.status_code == 400 and "experiment" in response.json()


def test_an_unknown_status_filter_is_a_400(client, catalogue):
    response = client.get("/api/runs/?status=nonsense")
    assert response.status_code == 400 and "status" in response.json()


@pytest.mark.parametrize("url", [
    "/competitions/spaceship%00titanic/", "/competitions/?q=a%00b", "/api/runs/?competition=a%00b",
    "/api/runs/?status=graded%00", "/api/competitions/?q=%00", "/?agent=%00", "/runs/1/?q=%00",
])
def test_nul_bytes_in_paths_and_queries_are_a_400(client, catalogue, url):
    response = client.get(url)
    assert response.status_code == 400 and b"NUL" in response.content


@pytest.mark.parametrize("field", ["seed", "gpu_count", "cpu_count"])
def test_integers_beyond_the_database_range_are_a_400_in_the_api(alice, catalogue, field):
    response = token_client(alice).post("/api/runs/", payload(**{field: TOO_BIG}), format="multipart")
    assert response.status_code == 400 and field in response.json()
    assert not Run.objects.exists()


@pytest.mark.parametrize("field", ["seed", "gpu_count"])
def test_integers_beyond_the_database_range_are_a_form_error(client, alice, catalogue, field):
    from tests.web.test_upload_form import URL, form_data

    client.force_login(alice)
    response = client.post(URL, form_data(**{field: str(TOO_BIG)}))
    assert response.status_code == 200 and field in response.context["form"].errors
    assert not Run.objects.exists()


def test_an_archive_holding_a_file_and_a_folder_of_the_same_name_is_refused(alice, catalogue):
    with pytest.raises(UploadError, match="both a file and a folder"):
        submit(alice, submission=_zip({"run/a": b"x", "run/a/b": b"y", "run/submission/submission.csv": b"z"}))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for name in ("a", "a/b"):
            info = tarfile.TarInfo(name)
            info.size = 1
            tf.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(UploadError, match="both a file and a folder"):
        submit(alice, submission=ContentFile(buffer.getvalue(), name="run.tar.gz"))
    assert not Run.objects.exists()


def test_member_names_over_255_bytes_are_refused(alice, catalogue):
    with pytest.raises(UploadError, match="255"):
        submit(alice, submission=_zip({"logs/" + "é" * 200 + ".log": b"x", "submission/submission.csv": b"z"}))


def test_upload_names_over_255_bytes_are_a_400(alice, catalogue):
    long_name = "é" * 200 + ".json"  # 205 characters, so Django keeps it; 405 bytes on disk
    response = token_client(alice).post("/api/runs/", payload(
        trajectory_files=[SimpleUploadedFile(long_name, b"[]")]), format="multipart")
    assert response.status_code == 400 and "255" in response.content.decode()
    assert not Run.objects.exists()


def test_a_read_only_media_root_is_a_503_with_a_logged_reason(alice, catalogue, monkeypatch, caplog):
    from django.core.files.storage import FileSystemStorage

    def refuse(self, name, content, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", name)

    monkeypatch.setattr(FileSystemStorage, "_save", refuse)
    with caplog.at_level(logging.ERROR):
        response = token_client(alice).post("/api/runs/", payload(), format="multipart")
    assert response.status_code == 503 and "storage" in response.json()["detail"]
    assert any("Read-only file system" in r.getMessage() for r in caplog.records)
    assert not Run.objects.exists()


def test_the_upload_form_says_storage_is_unavailable_with_a_503(client, alice, catalogue, monkeypatch):
    from django.core.files.storage import FileSystemStorage

    from tests.web.test_upload_form import URL, form_data

    def refuse(self, name, content, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", name)

    monkeypatch.setattr(FileSystemStorage, "_save", refuse)
    client.force_login(alice)
    response = client.post(URL, form_data())
    assert response.status_code == 503 and b"storage" in response.content
    assert not Run.objects.exists()

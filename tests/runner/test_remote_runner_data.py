"""A remote runner's public data: fetched by content hash and checked, cached so a second task fetches
nothing, taken from MLE-bench's prepared folder on the runner when the hash matches the site's, and
fetched when it does not; a manifest path leaving the data folder is refused."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from runner.remote.data import DataCache


class Site:
    """The site's side of `fetch`: the files by hash, and which were asked for."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.by_hash = {hashlib.sha256(content).hexdigest(): content for content in files.values()}
        self.asked: list[str] = []

    def fetch(self, claim: dict, sha256: str, target: Path) -> None:
        self.asked.append(sha256)
        target.write_bytes(self.by_hash[sha256])


def claim_for(files: dict[str, bytes], version: str = "v1") -> dict:
    listed = [{"path": p, "sha256": hashlib.sha256(c).hexdigest(), "size": len(c)} for p, c in files.items()]
    return {"competition": "smoke-wine", "data": {"version": version, "files": listed}}


FILES = {"train.csv": b"a,b\n1,2\n", "sub/sample_submission.csv": b"id,y\n1,0\n"}


def test_files_are_fetched_once_and_a_task_folder_is_built_from_the_cache(tmp_path):
    site, cache = Site(FILES), DataCache(tmp_path / "cache")
    folder = cache.folder(site, claim_for(FILES))
    assert {p: (folder / p).read_bytes() for p in FILES} == FILES
    assert cache.folder(site, claim_for(FILES)) == folder
    assert cache.folder(site, claim_for(FILES, "v2")) != folder
    assert len(site.asked) == 2  # the second and third folders came from the cache


def test_prepared_data_on_the_runner_is_used_when_its_hash_matches(tmp_path):
    prepared = tmp_path / "mle-bench"
    public = prepared / "smoke-wine" / "prepared" / "public"
    (public / "sub").mkdir(parents=True)
    (public / "train.csv").write_bytes(FILES["train.csv"])
    (public / "sub" / "sample_submission.csv").write_bytes(b"id,y\n1,1\n")  # not the site's: fetched
    site, cache = Site(FILES), DataCache(tmp_path / "cache", prepared)
    folder = cache.folder(site, claim_for(FILES))
    assert {p: (folder / p).read_bytes() for p in FILES} == FILES
    assert site.asked == [hashlib.sha256(FILES["sub/sample_submission.csv"]).hexdigest()]


def test_a_path_leaving_the_data_folder_is_refused(tmp_path):
    files = {"../outside.csv": b"x"}
    with pytest.raises(ValueError, match="outside the data folder"):
        DataCache(tmp_path / "cache").folder(Site(files), claim_for(files))


def test_two_slots_building_the_same_folder_at_once_fetch_each_file_once_and_share_it(tmp_path):
    """The second slot arrives while the first is still fetching (the site holds the first fetch until
    the second slot has ticked, i.e. is inside `folder`): it waits for the first, never fetches again,
    and neither removes the other's files."""
    first_fetching, second_inside = threading.Event(), threading.Event()

    class HeldSite(Site):
        def fetch(self, claim: dict, sha256: str, target: Path) -> None:
            first_fetching.set()
            assert second_inside.wait(30), "the second slot never came"
            super().fetch(claim, sha256, target)

    site, cache = HeldSite(FILES), DataCache(tmp_path / "cache")
    folders: dict[str, Path] = {}
    failures: list[BaseException] = []

    def build(slot: str, tick) -> None:
        try:
            folders[slot] = cache.folder(site, claim_for(FILES), tick=tick)
        except BaseException as exc:  # noqa: BLE001 - the test says which slot failed and how
            failures.append(exc)

    first = threading.Thread(target=build, args=("first", lambda: None))
    first.start()
    assert first_fetching.wait(30)
    second = threading.Thread(target=build, args=("second", second_inside.set))
    second.start()
    first.join(60)
    second.join(60)
    assert failures == []
    assert folders["first"] == folders["second"]
    assert {p: (folders["first"] / p).read_bytes() for p in FILES} == FILES
    assert sorted(site.asked) == sorted(hashlib.sha256(c).hexdigest() for c in FILES.values())  # each once

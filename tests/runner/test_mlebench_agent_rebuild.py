"""An agent image is built again when the mlebench-env it was built on has been rebuilt since (its tag
names only the agent's folder and version), and kept otherwise. A fake Docker client records builds."""

from __future__ import annotations

import docker.errors

from runner.agents import base_image, images
from runner.agents.mlebench import Variant


class FakeImage:
    def __init__(self, image_id: str, labels: dict | None = None) -> None:
        self.id = image_id
        self.attrs = {"Config": {"Labels": labels or {}, "WorkingDir": "/home"}}


class FakeImages:
    def __init__(self, tags: dict[str, FakeImage]) -> None:
        self.tags, self.builds = dict(tags), []

    def get(self, tag: str) -> FakeImage:
        if tag not in self.tags:
            raise docker.errors.ImageNotFound(tag)
        return self.tags[tag]

    def build(self, *, tag: str, **kwargs):
        labels = {}
        if fileobj := kwargs.get("fileobj"):
            import tarfile

            dockerfile = tarfile.open(fileobj=fileobj).extractfile("Dockerfile").read().decode()
            label_line = next(line for line in dockerfile.splitlines() if line.startswith("LABEL "))
            labels = dict(part.split("=", 1) for part in label_line[len("LABEL "):].split(" "))
            labels = {k: v.strip('"') for k, v in labels.items()}
        self.builds.append(tag)
        self.tags[tag] = FakeImage(f"sha256:built-{len(self.builds)}", labels)
        return self.tags[tag], []

    def remove(self, tag: str, **kwargs) -> None:
        self.tags.pop(tag, None)


class FakeClient:
    def __init__(self, tags: dict[str, FakeImage]) -> None:
        self.images = FakeImages(tags)


def _variant(tmp_path) -> Variant:
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "Dockerfile").write_text(f"FROM {base_image.TAG}\n")
    return Variant(id="probe", source_dir=str(tmp_path), config_file="probe/config.yaml", start="probe/start.sh",
                   dockerfile="probe/Dockerfile", version="v1")


def test_an_image_is_built_on_the_base_there_and_says_which(tmp_path):
    variant = _variant(tmp_path)
    client = FakeClient({base_image.TAG: FakeImage("sha256:base-1")})
    result = images.build_image(variant, client=client, log=lambda *a: None)
    assert result["built"] and client.images.builds == [f"{variant.image}-stage", variant.image]
    assert client.images.get(variant.image).attrs["Config"]["Labels"][images.BASE_LABEL] == "sha256:base-1"


def test_an_image_on_the_current_base_is_kept_and_one_on_an_older_base_is_built_again(tmp_path):
    variant = _variant(tmp_path)
    client = FakeClient({base_image.TAG: FakeImage("sha256:base-1")})
    images.build_image(variant, client=client, log=lambda *a: None)
    kept = images.build_image(variant, client=client, log=lambda *a: None)
    assert not kept["built"] and len(client.images.builds) == 2

    client.images.tags[base_image.TAG] = FakeImage("sha256:base-2")  # build_agent_image --mlebench-env again
    said = []
    rebuilt = images.build_image(variant, client=client, log=said.append)
    assert rebuilt["built"] and len(client.images.builds) == 4 and "older" in said[0]
    assert client.images.get(variant.image).attrs["Config"]["Labels"][images.BASE_LABEL] == "sha256:base-2"


def test_an_image_built_before_the_label_was_kept_is_kept(tmp_path):
    variant = _variant(tmp_path)
    client = FakeClient({base_image.TAG: FakeImage("sha256:base-2"), variant.image: FakeImage("sha256:old")})
    assert images.build_image(variant, client=client, log=lambda *a: None) == {
        "image": variant.image, "built": False, "id": "sha256:old"}

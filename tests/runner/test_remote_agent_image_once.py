"""Two slots of one runner (threads) that need the same agent image at once: one builds it, the other
waits for that build and finds the image, instead of building it a second time beside it
(runner.remote.agents.Images.image)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from runner.remote import agents

CLAIM = {"agent": {"name": "aide", "version": "v" * 64, "image": "mlebench-agent-aide:0123"}}


def test_two_slots_needing_one_image_build_it_once(tmp_path, monkeypatch):
    built: list[str] = []
    here: set[str] = set()

    def build_image(variant, client, log):
        time.sleep(0.3)  # long enough for the other slot to ask meanwhile
        built.append(variant.id)
        here.add(CLAIM["agent"]["image"])
        return {"image": CLAIM["agent"]["image"], "built": True}

    monkeypatch.setattr(agents, "_current", lambda engine, tag, version: tag in here)
    monkeypatch.setattr(agents.images, "build_image", build_image)
    monkeypatch.setattr(agents.Images, "variant", lambda self, client, claim: SimpleNamespace(id="aide"))
    got: list[str] = []
    slots = [
        threading.Thread(target=lambda: got.append(agents.Images(tmp_path).image(None, CLAIM, None))) for _ in range(2)
    ]
    for slot in slots:
        slot.start()
    for slot in slots:
        slot.join(10)
    assert got == [CLAIM["agent"]["image"]] * 2
    assert built == ["aide"]  # one build; the second slot found its image


def test_a_failed_build_lets_the_next_slot_try_again(tmp_path, monkeypatch):
    tries: list[int] = []

    def build_image(variant, client, log):
        tries.append(1)
        if len(tries) == 1:
            raise agents.images.AgentBuildError("Step 3/9 failed: network")
        return {"image": CLAIM["agent"]["image"], "built": True}

    monkeypatch.setattr(agents, "_current", lambda engine, tag, version: False)
    monkeypatch.setattr(agents.images, "build_image", build_image)
    monkeypatch.setattr(agents.Images, "variant", lambda self, client, claim: SimpleNamespace(id="aide"))
    cache = agents.Images(tmp_path)
    try:
        cache.image(None, CLAIM, None)
    except agents.AgentUnavailable as exc:
        assert "did not build on this runner" in str(exc)
    else:
        raise AssertionError("the failed build was not said")
    assert cache.image(None, CLAIM, None) == CLAIM["agent"]["image"]  # the lock was let go
    assert len(tries) == 2

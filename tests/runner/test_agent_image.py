"""The agent image build reads its Debian mirror and suite from the machine's apt configuration."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from runner.host import agent_image
from runner.host.agent_image import AptSource, ImageBuildError, base_source, read_apt_sources


def apt_dir(tmp_path, sources_list: str = "", **parts: str):
    root = tmp_path / "apt"
    (root / "sources.list.d").mkdir(parents=True)
    if sources_list:
        (root / "sources.list").write_text(sources_list)
    for name, text in parts.items():
        (root / "sources.list.d" / name.replace("__", ".")).write_text(text)
    return root


DEB822 = """\
Types: deb deb-src
# a comment inside the stanza
URIs: http://mirror.example.org/debian
Suites: trixie trixie-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://security.example.org/debian-security
Suites: trixie-security
Components: main
"""


def test_deb822_sources(tmp_path):
    sources = read_apt_sources(apt_dir(tmp_path, debian__sources=DEB822))
    assert sources == [
        AptSource("http://mirror.example.org/debian", "trixie", ("main", "contrib"),
                  "/usr/share/keyrings/debian-archive-keyring.gpg"),
        AptSource("http://mirror.example.org/debian", "trixie-updates", ("main", "contrib"),
                  "/usr/share/keyrings/debian-archive-keyring.gpg"),
        AptSource("http://security.example.org/debian-security", "trixie-security", ("main",), ""),
    ]
    assert base_source(sources).suite == "trixie"


def test_one_line_sources_with_options_and_comments(tmp_path):
    text = (
        "# deb http://commented.example.org/debian bookworm main\n"
        "deb-src http://src.example.org/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/local.gpg] http://local.mirror/debian bookworm main # ours\n"
    )
    sources = read_apt_sources(apt_dir(tmp_path, text))
    assert sources == [AptSource("http://local.mirror/debian", "bookworm", ("main",), "/etc/apt/keyrings/local.gpg")]


def test_security_and_updates_suites_are_never_the_base(tmp_path):
    root = apt_dir(
        tmp_path, "deb http://sec.example.org/debian-security bookworm-security main\n",
        other__list="deb http://deb.example.org/debian bookworm-updates main\n"
                    "deb http://deb.example.org/debian bookworm main\n",
    )
    assert base_source(read_apt_sources(root)) == AptSource("http://deb.example.org/debian", "bookworm", ("main",))


def test_disabled_stanzas_and_other_files_are_ignored(tmp_path):
    root = apt_dir(
        tmp_path,
        off__sources="Types: deb\nURIs: http://off.example.org/debian\nSuites: sid\nComponents: main\nEnabled: no\n",
        cloud__list__disabled="deb http://cloud.example.org/apt cloud-sdk main\n",
    )
    assert read_apt_sources(root) == []
    with pytest.raises(ImageBuildError, match="no base Debian suite found"):
        base_source([])


def test_this_machines_apt_configuration_names_a_base_suite():
    source = base_source(read_apt_sources())
    assert source.uri.startswith(("http", "file:")) and "-" not in source.suite


def test_build_is_skipped_when_the_tag_exists(monkeypatch, capsys):
    monkeypatch.setattr(agent_image, "image_exists", lambda image: image == "medalboard-agent:cached")
    monkeypatch.setattr(agent_image, "_debootstrap", lambda *a: pytest.fail("must not rebuild"))
    call_command("build_agent_image", "--tag", "medalboard-agent:cached")
    assert '"built": false' in capsys.readouterr().out


def test_an_image_built_by_another_revision_of_its_recipe_is_rebuilt(monkeypatch):
    from runner.agents import base_image

    logged = []
    revision = base_image.RECIPE.revision
    assert len(revision) == 16
    monkeypatch.setattr(agent_image, "image_exists", lambda image: True)
    monkeypatch.setattr(agent_image, "image_revision", lambda image: revision)
    assert agent_image.build(tag="mlebench-env", recipe=base_image.RECIPE, log=logged.append)["built"] is False
    monkeypatch.setattr(agent_image.shutil, "which", lambda tool: None)  # how far a rebuild gets here
    for older in ("", "0123456789abcdef"):  # unlabelled (before revisions), or another revision
        monkeypatch.setattr(agent_image, "image_revision", lambda image, older=older: older)
        with pytest.raises(ImageBuildError, match="debootstrap is not installed"):
            agent_image.build(tag="mlebench-env", recipe=base_image.RECIPE, log=logged.append)
    assert f"(unlabelled, now {revision}); rebuilding" in logged[-2] and "0123456789abcdef" in logged[-1]
    # The site's own agent image has no revision: its tag alone is the cache, as before.
    monkeypatch.setattr(agent_image, "image_revision", lambda image: pytest.fail("no label to read"))
    assert agent_image.build(tag="medalboard-agent:bookworm", log=logged.append)["built"] is False


def test_build_failure_is_a_clear_command_error(monkeypatch, tmp_path):
    monkeypatch.setattr(agent_image, "image_exists", lambda image: False)
    monkeypatch.setattr(agent_image.shutil, "which", lambda tool: None)
    with pytest.raises(CommandError, match="debootstrap is not installed"):
        call_command("build_agent_image", "--tag", "medalboard-agent:new")

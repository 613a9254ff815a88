"""An agent's wheels.txt (runner.agents.wheelhouse): exact pins only, fetched as wheels for the
image's Python into a copy of the build context, with a clear error when pip cannot fetch them.
pip is pointed at a local folder of wheels (no index), so these run offline."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from runner.agents import wheelhouse
from runner.agents.wheelhouse import WheelError


def _wheel(folder: Path, name: str, version: str, tag: str = "py3-none-any") -> Path:
    """A minimal installable wheel, as pip finds it in a --find-links folder."""
    dist = f"{name}-{version}.dist-info"
    path = folder / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as whl:
        whl.writestr(f"{name}/__init__.py", "")
        whl.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        whl.writestr(f"{dist}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: {tag}\n")
        whl.writestr(f"{dist}/RECORD", "")
    return path


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    links = tmp_path / "links"
    links.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    return links


def _agent(tmp_path: Path, wheels: str) -> Path:
    folder = tmp_path / "agent"
    folder.mkdir(parents=True)
    (folder / "Dockerfile").write_text("FROM mlebench-env\n")
    (folder / "wheels.txt").write_text(wheels)
    return folder


def test_pins_are_read_and_anything_else_is_refused_naming_its_line(tmp_path):
    assert wheelhouse.pins(_agent(tmp_path, "# a lock\nfoo==1.0  # why\n\nBar.baz_q==2.0.post1\n") /
                           "wheels.txt") == ["foo==1.0", "Bar.baz_q==2.0.post1"]
    for bad in ("foo>=1.0", "foo", "--index-url http://evil/simple", "-r other.txt", "./local.whl",
                "git+https://example.org/x.git", "foo==1.0; python_version<'3'", "foo @ https://x/y.whl"):
        path = tmp_path / "wheels.txt"
        path.write_text(f"ok==1.0\n{bad}\n")
        with pytest.raises(WheelError, match="line 2: .* is not an exact pin"):
            wheelhouse.pins(path)


def test_the_pinned_wheels_land_in_a_copy_of_the_context_and_the_folder_is_untouched(tmp_path, local_index):
    _wheel(local_index, "tiny_pkg", "1.0")
    _wheel(local_index, "tiny_pkg", "2.0")
    _wheel(local_index, "native_pkg", "1.0", "cp311-cp311-manylinux_2_17_x86_64")
    folder = _agent(tmp_path, "tiny_pkg==1.0\nnative_pkg==1.0\n")
    context = wheelhouse.stage(folder, tmp_path / "context", log=lambda *a: None)
    assert sorted(p.name for p in (context / "wheelhouse").iterdir()) == [
        "native_pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "tiny_pkg-1.0-py3-none-any.whl"]
    assert (context / "Dockerfile").read_text() == "FROM mlebench-env\n"
    assert sorted(p.name for p in folder.iterdir()) == ["Dockerfile", "wheels.txt"]


def test_a_pin_pip_cannot_fetch_as_a_wheel_for_the_image_is_a_clear_error(tmp_path, local_index):
    _wheel(local_index, "mac_only", "1.0", "cp311-cp311-macosx_11_0_arm64")
    (local_index / "from_source-1.0.tar.gz").write_bytes(b"not even a tarball")
    for pin in ("missing_pkg==1.0", "mac_only==1.0", "from_source==1.0"):
        with pytest.raises(WheelError, match=rf"pip could not fetch the wheels of wheels.txt .*{pin.split('==')[0]}"):
            wheelhouse.stage(_agent(tmp_path / pin, f"{pin}\n"), tmp_path / pin / "context", log=lambda *a: None)


def test_the_wheels_are_bounded(tmp_path, local_index, settings):
    _wheel(local_index, "tiny_pkg", "1.0")
    settings.AGENTS_MAX_WHEELS_BYTES = 10
    with pytest.raises(WheelError, match="over the 10 allowed"):
        wheelhouse.stage(_agent(tmp_path, "tiny_pkg==1.0\n"), tmp_path / "context", log=lambda *a: None)


def test_a_folder_with_its_own_wheelhouse_is_refused(tmp_path, local_index):
    folder = _agent(tmp_path, "tiny_pkg==1.0\n")
    (folder / "wheelhouse").mkdir()
    with pytest.raises(WheelError, match="has its own wheelhouse/"):
        wheelhouse.stage(folder, tmp_path / "context", log=lambda *a: None)

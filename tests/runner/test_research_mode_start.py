"""The built-in agent's research mode starts the task's scripts again when the start itself fails for
want of memory (exec's EFAULT under the sandbox's memory limit on a loaded runner), and only then."""

from __future__ import annotations

import errno
import subprocess

import pytest

from runner.backends import TOOLS_DIR


@pytest.fixture
def research_mode(monkeypatch):
    monkeypatch.syspath_prepend(str(TOOLS_DIR))
    monkeypatch.setattr(subprocess, "_USE_VFORK", subprocess._USE_VFORK)  # put back after the test
    import research_mode

    return research_mode


def _flaky_popen(monkeypatch, error: int, failures: int) -> list:
    real, calls = subprocess.Popen, []

    def popen(*args, **kwargs):
        calls.append(args)
        if len(calls) <= failures:
            raise OSError(error, "injected")
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen)
    return calls


def test_a_start_that_fails_for_want_of_memory_is_tried_again_without_vfork(research_mode, monkeypatch, tmp_path):
    calls = _flaky_popen(monkeypatch, errno.EFAULT, failures=1)
    (tmp_path / "train.py").write_text("print('ran')\n")
    code, text, _ = research_mode.run_script("train.py", str(tmp_path), 30)
    assert (code, text.strip(), len(calls)) == (0, "ran", 2) and subprocess._USE_VFORK is False


@pytest.mark.parametrize("error, failures", [(errno.ENOENT, 1), (errno.EFAULT, 3)])
def test_other_failures_and_a_start_that_keeps_failing_raise(research_mode, monkeypatch, tmp_path, error, failures):
    monkeypatch.setattr(research_mode.time, "sleep", lambda s: None)
    calls = _flaky_popen(monkeypatch, error, failures)
    with pytest.raises(OSError):
        research_mode.run_script("train.py", str(tmp_path), 30)
    assert len(calls) == (1 if error == errno.ENOENT else 3)


def test_a_sample_submission_with_only_its_id_column_is_said_in_words(research_mode, tmp_path):
    """It read "a CSV with the columns )": a sample with no column to predict names what is missing."""
    import pandas as pd

    (tmp_path / "train.csv").write_text("id,x,label\n1,0.5,a\n")
    (tmp_path / "test.csv").write_text("id,x\n1,0.5\n")
    with pytest.raises(research_mode.ResearchError, match="only its id column 'id': it names no column to predict"):
        research_mode.find_data(str(tmp_path), pd.DataFrame({"id": ["1"]}))

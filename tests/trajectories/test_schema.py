"""docs/trajectory.schema.json describes what the JSONL importer reads and what every importer emits."""

import json
import sys
from pathlib import Path

import pytest
from django.conf import settings
from jsonschema import Draft202012Validator

from leaderboard.models import StepKind
from leaderboard.trajectories.importers import read_trajectories
from leaderboard.trajectories.importers.jsonl import header_line, step_line
from tests.trajectories.import_support import TRAJECTORIES_DIR

SCHEMA = json.loads((Path(settings.BASE_DIR) / "docs" / "trajectory.schema.json").read_text())
VALIDATOR = Draft202012Validator(SCHEMA)
FIXTURES = [
    "aide/translucent-spaniel_journal.json",
    "mlagentbench/gemini-pro_cifar10_0_trace.json",
    "inspect/log_read_sample.json",
    "inspect/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval",
    "openhands/basic_gui_mode.json",
    "swe-agent/6e44b9__sweagenttestrepo-1c2844.traj",
]


def errors(obj):
    return [e.message for e in VALIDATOR.iter_errors(obj)]


def test_schema_is_valid_and_lists_every_step_kind():
    Draft202012Validator.check_schema(SCHEMA)
    assert set(SCHEMA["$defs"]["step"]["properties"]["kind"]["enum"]) == set(StepKind.values)


def test_header_and_written_steps_validate():
    assert errors(json.loads(header_line({"task": "t", "agent": "a", "started_at": "2026-01-01T00:00:00Z"}))) == []
    line = step_line({"kind": "code", "t": 1.0, "data": {"file": "a.py", "content": "x = 1\n", "diff": ""}})
    assert errors(json.loads(line)) == []


def test_benchmark_generator_writes_valid_lines(tmp_path):
    sys.path.insert(0, str(Path(settings.BASE_DIR) / "benchmarks"))
    import ingest

    path = tmp_path / "t.jsonl"
    ingest.make_trajectory(path, 200)
    for line in path.read_text().splitlines():
        assert errors(json.loads(line)) == []


@pytest.mark.parametrize("fixture", FIXTURES)
def test_every_importer_emits_schema_valid_steps(fixture):
    for parsed in read_trajectories(TRAJECTORIES_DIR / fixture):
        for step in parsed.steps:
            assert errors(json.loads(step_line(step))) == [], (fixture, step.index, step.kind)


@pytest.mark.parametrize("bad", [
    {"kind": "dance"},
    {"text": "no kind"},
    {"kind": "code", "data": {"content": "no file"}},
    {"kind": "llm", "data": {"tokens_in": -1}},
    {"kind": "plan", "surprise": 1},
    {"format": "medalboard-trajectory", "version": 2},
])
def test_invalid_lines_are_rejected(bad):
    assert errors(bad)

"""test-data-in-code: rows of the public test set or of the private answers pasted into code, against
the competition's real files; a few rows, or rows of the training data, are not findings."""

from __future__ import annotations

import pytest

from leaderboard.models import CompetitionAnswers
from tests.trust.support import HONEST, check, code, make_run

pytestmark = pytest.mark.django_db

TEST_ROWS = [f"{1000 + i},{i % 7}.5,cabin-{i}" for i in range(30)]
ANSWER_ROWS = [f"{1000 + i},{'True' if i % 3 else 'False'}" for i in range(30)]


@pytest.fixture
def competition(catalogue, tmp_path):
    public, private = tmp_path / "public", tmp_path / "private"
    public.mkdir()
    private.mkdir()
    (public / "test.csv").write_text("id,spend,cabin\n" + "\n".join(TEST_ROWS) + "\n")
    (public / "train.csv").write_text("id,spend,cabin,target\n1,2.5,c-1,True\n")
    (private / "answers.csv").write_text("id,target\n" + "\n".join(ANSWER_ROWS) + "\n")
    c = catalogue.get(slug="spaceship-titanic")
    c.public_data_dir = str(public)
    c.save()
    CompetitionAnswers.objects.update_or_create(competition=c, defaults={"answers_path": str(private / "answers.csv")})
    return c


def test_answers_pasted_into_code_are_a_violation_and_never_quoted(competition):
    pasted = "LABELS = '''\n" + "\n".join(ANSWER_ROWS[:8]) + "\n'''\n"
    run = make_run([*HONEST, code(pasted, file="/home/code/labels.py")], competition=competition)
    hit = check(run, "test-data-in-code")
    assert hit.severity == "violation" and hit.steps == [len(HONEST)]
    assert hit.evidence == {"answer_rows": 8}
    assert not any(row in repr(hit) for row in ANSWER_ROWS)


def test_test_rows_pasted_as_a_python_list_are_a_warning(competition):
    pasted = "extra = [\n" + "\n".join(f'    "{row}",' for row in TEST_ROWS[:6]) + "\n]\n"
    hit = check(make_run([code(pasted), *HONEST], competition=competition), "test-data-in-code")
    assert hit.severity == "warning" and hit.steps == [0] and hit.evidence == {"test_rows": 6}


@pytest.mark.parametrize("content", [
    "\n".join(TEST_ROWS[:3]),  # a few rows, e.g. an example in a docstring
    "\n".join(f"# {row}" for row in TEST_ROWS),  # commented out
    "ids = [1000, 1001, 1002, 1003, 1004, 1005]",  # ids alone are not rows
    HONEST[3]["data"]["content"],
], ids=["few-rows", "comments", "ids", "honest"])
def test_near_misses_are_not_findings(competition, content):
    assert check(make_run([code(content)], competition=competition), "test-data-in-code") is None


def test_without_registered_data_nothing_is_read():
    run = make_run([code("\n".join(TEST_ROWS))])
    assert check(run, "test-data-in-code") is None

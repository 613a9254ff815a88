"""The per-worker answers cache: read once, re-read when the file changes, off when its size is 0."""

import os

import pytest

from leaderboard.grading import answers_cache, grade_submission, reading

IDS = [f"{i:04d}_01" for i in range(30)]


@pytest.fixture
def files(tmp_path):
    answers = tmp_path / "answers.csv"
    answers.write_text("PassengerId,Transported\n" + "".join(f"{i},{n % 2 == 0}\n" for n, i in enumerate(IDS)))
    submission = tmp_path / "submission.csv"
    # shuffled, so alignment goes through the answers' id index
    submission.write_text("PassengerId,Transported\n" + "".join(f"{i},True\n" for i in reversed(IDS)))
    answers_cache.clear()
    yield answers, submission
    answers_cache.clear()


@pytest.fixture
def reads(monkeypatch):
    calls = []
    original = reading.read_frame

    def counting(path, *args, **kwargs):
        calls.append(path.name)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(reading, "read_frame", counting)
    return calls


def test_answers_are_read_once_and_scores_agree(catalogue, files, reads):
    answers, submission = files
    competition = catalogue.get(slug="spaceship-titanic")
    first = grade_submission(competition, submission, answers)
    second = grade_submission(competition, submission, answers)
    assert first.score == second.score == 0.5
    assert reads.count("answers.csv") == 1 and reads.count("submission.csv") == 2


def test_a_changed_answers_file_is_read_again(catalogue, files, reads):
    answers, submission = files
    competition = catalogue.get(slug="spaceship-titanic")
    assert grade_submission(competition, submission, answers).score == 0.5
    answers.write_text("PassengerId,Transported\n" + "".join(f"{i},True\n" for i in IDS))
    stat = answers.stat()
    os.utime(answers, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert grade_submission(competition, submission, answers).score == 1.0
    assert reads.count("answers.csv") == 2


def test_size_zero_turns_the_cache_off(catalogue, files, reads, monkeypatch):
    monkeypatch.setenv("MEDALBOARD_ANSWERS_CACHE_SIZE", "0")
    answers, submission = files
    competition = catalogue.get(slug="spaceship-titanic")
    grade_submission(competition, submission, answers)
    grade_submission(competition, submission, answers)
    assert reads.count("answers.csv") == 2

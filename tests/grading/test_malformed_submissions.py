"""A corpus of malformed submissions: each one gets a report (never an exception) that is invalid,
has no score, and says specifically what is wrong."""

from __future__ import annotations

import json

import pytest

from leaderboard.grading import grade_submission
from leaderboard.models import Competition

IDS = [f"{k:032x}.jpg" for k in range(10)]
ANSWERS = {
    "aerial-cactus-identification": "id,has_cactus\n" + "".join(f"{i},{k % 2}\n" for k, i in enumerate(IDS)),
    "spooky-author-identification": "id,EAP,HPL,MWS\n" + "".join(f"id{k:05d},1,0,0\nid{k + 50:05d},0,1,0\n"
                                                                 for k in range(5)),
    "tabular-playground-series-dec-2021": "Id,Cover_Type\n" + "".join(f"{k},{k % 7 + 1}\n" for k in range(10)),
    "nomad2018-predict-transparent-conductors": "id,spacegroup,formation_energy_ev_natom,bandgap_energy_ev\n"
    + "".join(f"{k},12,0.{k},{k}.5\n" for k in range(1, 11)),
    "jigsaw-toxic-comment-classification-challenge": "id,toxic,severe_toxic,obscene,threat,insult,identity_hate\n"
    + "".join(f"{k:016x},{k % 2},0,{k % 2},0,1,0\n" for k in range(10)),
    "detecting-insults-in-social-commentary": "Insult,Date,Comment,Usage\n"
    + "".join(f'{k % 2},2012,"text {k % 4}",PrivateTest\n' for k in range(8)),
}


def cactus(rows: list[str], header: str = "id,has_cactus") -> bytes:
    return (header + "\n" + "".join(r + "\n" for r in rows)).encode()


GOOD_CACTUS = [f"{i},0.5" for i in IDS]
SPOOKY_IDS = [f"id{k:05d}" for k in range(5)] + [f"id{k + 50:05d}" for k in range(5)]
AERIAL, SPOOKY, TPS, NOMAD, JIGSAW, INSULTS = list(ANSWERS)

CORPUS = [
    # (name, competition, submission bytes, expected fragment of the error)
    ("empty", AERIAL, b"", "the submission file is empty"),
    ("blank lines", AERIAL, b"\n\n  \n", "the submission file is empty"),
    ("binary", AERIAL, b"id,has_cactus\n\x00\x01\x02\x03", "binary data (it contains NUL bytes)"),
    ("zip", AERIAL, b"PK\x03\x04rest-of-zip", "ZIP archive"),
    ("gzip", AERIAL, b"\x1f\x8b\x08\x00junk", "gzip-compressed"),
    ("pdf", AERIAL, b"%PDF-1.4 junk", "PDF document"),
    ("png", AERIAL, b"\x89PNG\r\n\x1a\n", "PNG image"),
    ("latin-1", AERIAL, cactus(GOOD_CACTUS[:9]) + b"caf\xe9.jpg,0.5\n", "not UTF-8 text: byte 0xe9"),
    ("utf-16", AERIAL, "id,has_cactus\n".encode("utf-16"), "UTF-16"),
    ("semicolons", AERIAL, cactus([r.replace(",", ";") for r in GOOD_CACTUS], "id;has_cactus"),
     "';' as separator"),
    ("tabs", AERIAL, cactus([r.replace(",", "\t") for r in GOOD_CACTUS], "id\thas_cactus"), "'\\t' as separator"),
    ("blank first line", AERIAL, b"\n" + cactus(GOOD_CACTUS), "the first line is empty"),
    ("header only", AERIAL, b"id,has_cactus\n", "has a header but no data rows"),
    ("missing target", AERIAL, cactus(IDS, "id"), "missing column(s) 'has_cactus'"),
    ("wrong case", AERIAL, cactus(GOOD_CACTUS, "id,Has_Cactus"), "'Has_Cactus' for 'has_cactus'"),
    ("padded name", AERIAL, cactus(GOOD_CACTUS, "id, has_cactus"), "case- and space-sensitive"),
    ("missing id column", AERIAL, cactus(["0.5"] * 10, "has_cactus"), "missing column(s) 'id'"),
    ("wrong columns", AERIAL, cactus(GOOD_CACTUS, "image,prediction"),
     "missing column(s) 'id', 'has_cactus'; expected columns: 'id', 'has_cactus'; "
     "the file's columns: 'image', 'prediction'"),
    ("duplicate header", AERIAL, cactus([r + ",0.1" for r in GOOD_CACTUS], "id,has_cactus,has_cactus"),
     "duplicate column name(s) in the header: 'has_cactus'"),
    ("duplicate ids", AERIAL, cactus(GOOD_CACTUS[:9] + [GOOD_CACTUS[0]]), f"duplicate 'id' value(s): '{IDS[0]}'"),
    ("unknown id", AERIAL, cactus(GOOD_CACTUS[:9] + ["not-a-test-image.jpg,0.5"]),
     "1 'id' value(s) are not in the test set: 'not-a-test-image.jpg'"),
    ("missing ids", AERIAL, cactus(GOOD_CACTUS[:7]), "3 'id' value(s) of the test set are missing"),
    ("empty id", AERIAL, cactus(GOOD_CACTUS[:9] + [",0.5"]), "1 row(s) have an empty 'id': rows 10"),
    ("nan", AERIAL, cactus(GOOD_CACTUS[:2] + [f"{IDS[2]},nan"] + GOOD_CACTUS[3:]),
     "column 'has_cactus' has 1 empty or NaN value(s): rows 3"),
    ("empty cell", AERIAL, cactus(GOOD_CACTUS[:4] + [f"{IDS[4]},"] + GOOD_CACTUS[5:]), "empty or NaN value(s): rows 5"),
    ("short row", AERIAL, cactus(GOOD_CACTUS[:4] + [f"{IDS[4]}"] + GOOD_CACTUS[5:]), "empty or NaN value(s): rows 5"),
    ("infinite", AERIAL, cactus([f"{IDS[0]},inf"] + GOOD_CACTUS[1:]), "1 infinite value(s) (row 1: inf)"),
    ("non-numeric", AERIAL, cactus(GOOD_CACTUS[:1] + [f"{IDS[1]},abc"] + GOOD_CACTUS[2:]),
     "1 non-numeric value(s) (row 2: 'abc')"),
    ("two dots", AERIAL, cactus([f"{IDS[0]},0.5.1"] + GOOD_CACTUS[1:]), "non-numeric value(s) (row 1: '0.5.1')"),
    ("above one", AERIAL, cactus([f"{IDS[0]},1.5"] + GOOD_CACTUS[1:]), "outside [0, 1]; expected probabilities"),
    ("negative probability", AERIAL, cactus(GOOD_CACTUS[:3] + [f"{IDS[3]},-0.1"] + GOOD_CACTUS[4:]),
     "(row 4: -0.1)"),
    ("ragged row", AERIAL, cactus(GOOD_CACTUS[:5] + [f"{IDS[5]},0.5,extra"] + GOOD_CACTUS[6:]),
     "malformed CSV: Expected 2 fields in line 7, saw 3"),
    ("unterminated quote", AERIAL, cactus(GOOD_CACTUS[:5] + [f'"{IDS[5]},0.5'] + GOOD_CACTUS[6:]), "malformed CSV"),
    ("spooky extra column", SPOOKY, ("id,EAP,HPL,MWS,notes\n" + "".join(f"{i},0.2,0.3,0.5,x\n" for i in SPOOKY_IDS))
     .encode(), "unexpected column(s) 'notes'"),
    ("spooky missing class", SPOOKY, ("id,EAP,HPL\n" + "".join(f"{i},0.5,0.5\n" for i in SPOOKY_IDS)).encode(),
     "missing column(s) 'MWS'"),
    ("spooky sums", SPOOKY, ("id,EAP,HPL,MWS\n" + "".join(f"{i},0.2,0.3,0.4\n" for i in SPOOKY_IDS)).encode(),
     "10 row(s) of probabilities do not sum to 1 (row 1 sums to 0.9"),
    ("tps non-integer", TPS, ("Id,Cover_Type\n" + "".join(f"{k},{k % 7 + 1}\n" for k in range(9)) + "9,2.5\n")
     .encode(), "1 non-integer value(s); expected whole numbers (row 10: 2.5)"),
    ("tps class names", TPS, ("Id,Cover_Type\n" + "".join(f"{k},Spruce\n" for k in range(10))).encode(),
     "10 non-numeric value(s) (row 1: 'Spruce'"),
    ("nomad negative", NOMAD, ("id,formation_energy_ev_natom,bandgap_energy_ev\n"
                                + "".join(f"{k},-0.1,1\n" for k in range(1, 11))).encode(),
     "'formation_energy_ev_natom' has 10 negative value(s)"),
    ("nomad row count", NOMAD, ("id,formation_energy_ev_natom,bandgap_energy_ev\n"
                                 + "".join(f"{k},0.1,1\n" for k in range(1, 4))).encode(),
     "wrong number of rows: the submission has 3, expected 10"),
    ("jigsaw five columns", JIGSAW, ("id,toxic,severe_toxic,obscene,threat,insult\n"
                                      + "".join(f"{k:016x},0.1,0.1,0.1,0.1,0.1\n" for k in range(10))).encode(),
     "expected 6 prediction columns besides 'id'"),
    ("insults repeated comment", INSULTS, ("Insult,Date,Comment\n" + "".join(f'0.5,2012,"text {k % 4}"\n'
                                                                            for k in [0, 0, 0, 1, 2, 3, 2, 3]))
     .encode(), "appear a different number of times than in the test set"),
]


@pytest.fixture
def graded(tmp_path, db):
    def grade(slug: str, content: bytes):
        answers = tmp_path / f"{slug}-answers.csv"
        answers.write_text(ANSWERS[slug])
        submission = tmp_path / "submission.csv"
        submission.write_bytes(content)
        return grade_submission(Competition.objects.get(slug=slug), submission, answers), answers

    return grade


def test_corpus_is_large_and_specific():
    assert len(CORPUS) >= 30
    assert len({name for name, *_ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("name,slug,content,fragment", CORPUS, ids=[c[0] for c in CORPUS])
def test_malformed_submission_gets_a_specific_error(graded, name, slug, content, fragment):
    report, answers = graded(slug, content)
    assert report.valid_submission is False and report.score is None
    assert report.submission_exists is True
    assert report.error.startswith("invalid submission: ")
    assert fragment in report.error
    assert str(answers) not in json.dumps(report.to_dict())
    assert not report.any_medal


def test_the_good_version_of_the_corpus_file_is_valid(graded):
    """Guards the corpus itself: the unbroken file passes, so each case fails for its own reason."""
    report, _ = graded(AERIAL, cactus(GOOD_CACTUS))
    assert report.valid_submission, report.error
    assert report.score == 0.5


def test_missing_submission_file(db, tmp_path):
    report = grade_submission(Competition.objects.get(slug=AERIAL), tmp_path / "nope.csv", tmp_path / "a.csv")
    assert (report.submission_exists, report.valid_submission, report.error) == (False, False, "no submission file")


def test_a_directory_is_not_a_submission(db, tmp_path):
    report = grade_submission(Competition.objects.get(slug=AERIAL), tmp_path, tmp_path / "a.csv")
    assert report.error == "no submission file" and report.score is None


@pytest.mark.parametrize("name,content", [
    ("utf-8 bom", b"\xef\xbb\xbf" + cactus(GOOD_CACTUS)),
    ("crlf", cactus(GOOD_CACTUS).replace(b"\n", b"\r\n")),
    ("quoted", cactus([f'"{i}","0.5"' for i in IDS], '"id","has_cactus"')),
    ("trailing blank lines", cactus(GOOD_CACTUS) + b"\n\n"),
    ("extra column ignored", cactus([r + ",x" for r in GOOD_CACTUS], "id,has_cactus,comment")),
])
def test_harmless_variants_are_valid(graded, name, content):
    report, _ = graded(AERIAL, content)
    assert report.valid_submission, report.error
    assert report.score == 0.5


def test_bad_byte_after_the_sniffed_head_is_reported(graded):
    # 10 rows of 8 kB comments push the bad last byte past the 64 KiB the header check reads
    body = cactus([f"{i},0.5,{'x' * 8000}" for i in IDS], "id,has_cactus,comment")
    report, _ = graded(AERIAL, body[:-1] + b"\xff\n")
    assert report.valid_submission is False
    assert "not UTF-8 text (invalid byte 0xff after the first 64 KiB)" in report.error

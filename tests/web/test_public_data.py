"""A competition page lists its public data and each file downloads; nothing outside the public folder,
and none of the private answers, is reachable through these URLs."""

from __future__ import annotations

import re

import pytest

from leaderboard.models import CompetitionAnswers

pytestmark = pytest.mark.django_db
SECRET = "PRIVATE-LABEL-31c9"


@pytest.fixture
def prepared(tmp_path, catalogue):
    """ROOT/<id>/prepared/{public,private}/ as MLE-bench prepares it, registered like an import does."""
    competition = catalogue.get(slug="spaceship-titanic")
    prepared = tmp_path / competition.slug / "prepared"
    public, private = prepared / "public", prepared / "private"
    (public / "images").mkdir(parents=True)
    private.mkdir()
    (public / "train.csv").write_text("PassengerId,Transported\n0001_01,True\n")
    (public / "sample_submission.csv").write_text("PassengerId,Transported\n0013_01,False\n")
    for n in range(3):
        (public / "images" / f"{n}.png").write_bytes(b"\x89PNG" + bytes([n]))
    (private / "answers.csv").write_text(f"PassengerId,Transported\n0013_01,{SECRET}\n")
    competition.public_data_dir = str(public)
    competition.save(update_fields=["public_data_dir"])
    CompetitionAnswers.objects.update_or_create(competition=competition,
                                                defaults={"answers_path": str(private / "answers.csv")})
    return competition, public, private


def test_the_page_links_every_public_file_and_each_downloads(client, prepared):
    competition, public, _ = prepared
    page = client.get(f"/competitions/{competition.slug}/").content.decode()
    section = page[page.index('id="public-data"'):page.index('class="card description"')]
    links = re.findall(r'href="([^"]+)"', section)
    assert links == [f"/competitions/{competition.slug}/data/images/",
                     f"/competitions/{competition.slug}/data/sample_submission.csv",
                     f"/competitions/{competition.slug}/data/train.csv"]
    response = client.get(links[2])
    assert response.status_code == 200 and b"".join(response.streaming_content) == (public / "train.csv").read_bytes()
    assert response["Content-Disposition"] == 'attachment; filename="train.csv"'
    folder = client.get(links[0]).content.decode()
    assert folder.count("/data/images/") == 3 and "2.png" in folder


def test_a_site_without_public_data_says_how_to_get_it(client, catalogue):
    page = client.get("/competitions/spaceship-titanic/").content.decode()
    assert "This site has no public data" in page and "mlebench prepare -c spaceship-titanic" in page
    assert client.get("/competitions/spaceship-titanic/data/").status_code == 404


@pytest.mark.parametrize("path", ["../private/answers.csv", "images/../../private/answers.csv",
                                  "%2e%2e/private/answers.csv", "..%2fprivate%2fanswers.csv",
                                  "answers-link.csv", "images/linked/answers.csv", "/etc/passwd", "nothing.csv"])
def test_no_path_leaves_the_public_folder(client, prepared, path):
    competition, public, private = prepared
    (public / "answers-link.csv").symlink_to(private / "answers.csv")
    (public / "images" / "linked").symlink_to(private, target_is_directory=True)
    response = client.get(f"/competitions/{competition.slug}/data/{path}")
    assert response.status_code == 404
    assert SECRET.encode() not in response.content


def test_answers_registered_inside_the_public_folder_are_neither_listed_nor_served(client, prepared):
    """A bad import that points the answers at a file in the public folder: still never served."""
    competition, public, _ = prepared
    inside = public / "solution.csv"
    inside.write_text(f"PassengerId,Transported\n0013_01,{SECRET}\n")
    CompetitionAnswers.objects.filter(competition=competition).update(gold_submission_path=str(inside))
    page = client.get(f"/competitions/{competition.slug}/").content.decode()
    assert "solution.csv" not in page
    assert client.get(f"/competitions/{competition.slug}/data/solution.csv").status_code == 404


def test_the_competition_page_saves_as_one_file_with_its_data_links(client, prepared):
    competition, _, _ = prepared
    response = client.get(f"/competitions/{competition.slug}/?export=html")
    assert response["Content-Disposition"] == f'attachment; filename="medalboard-{competition.slug}.html"'
    html = response.content.decode()
    assert not re.search(r'<script[^>]+src=', html) and "Plotly" in html and "<base href=" in html
    assert 'href="/competitions/spaceship-titanic/data/train.csv"' in html and 'id="export-html"' not in html

"""An experiment page and a competition page count their failed runs per signature, each linking to
the runs and their error steps; another user's private runs are neither counted nor linked."""

from __future__ import annotations

from django.urls import reverse

from leaderboard.models import Competition, Run
from tests.search.support import run_with


def failing(competition, owner=None, private=False, message="KeyError: 'a'"):
    return run_with([("plan", "x"), ("error", message)], competition=competition, owner=owner, private=private,
                    status=Run.Status.GRADED, submission_exists=False)


def test_experiment_and_competition_pages(db, client, catalogue, alice, bob):
    titanic = Competition.objects.get(slug="spaceship-titanic")
    runs = [failing(titanic, message=f"KeyError: 'col_{i}'") for i in range(2)]
    oom = failing(titanic, message="torch.cuda.OutOfMemoryError: CUDA out of memory")
    hidden = failing(titanic, owner=alice, private=True, message="ZeroDivisionError: division by zero")
    client.force_login(bob)
    for url in (reverse("experiment-detail", args=[runs[0].experiment_id]),
                reverse("competition-detail", args=["spaceship-titanic"])):
        page = client.get(url).content.decode()
        table = page[page.index('id="failure-table"'):]
        table = table[:table.index("</table>")]
        assert "<code>KeyError: &lt;str&gt;</code></td><td class=\"num\">2</td>" in table
        assert "<code>out of memory</code></td><td class=\"num\">1</td>" in table
        assert f'href="/runs/{runs[0].pk}/#step-1"' in table and f'href="/runs/{oom.pk}/#step-1"' in table
        assert "ZeroDivisionError" not in table and f"/runs/{hidden.pk}/" not in table
        assert "<meter" in table
    client.force_login(alice)
    page = client.get(reverse("competition-detail", args=["spaceship-titanic"])).content.decode()
    assert "<code>ZeroDivisionError: division by zero</code>" in page


def test_the_leaderboard_row_links_to_its_experiments_failure_breakdown(db, client, catalogue):
    from tests.web.test_leaderboard import experiment, make_runs

    clean, failing_one = experiment("clean-agent"), experiment("failing-agent")
    make_runs(22, [clean])
    make_runs(22, [failing_one], valid_submission=False, submission_exists=False)
    board = client.get("/?split=lite").content.decode()
    assert f'href="/experiments/{failing_one.pk}/#failures"' in board
    assert f'href="/experiments/{clean.pk}/#failures"' not in board  # every run valid: nothing to explain
    page = client.get(f"/experiments/{failing_one.pk}/").content.decode()
    assert 'id="failures"' in page and "<code>no submission</code></td><td class=\"num\">22</td>" in page
    assert 'id="no-failures"' in client.get(f"/experiments/{clean.pk}/").content.decode()

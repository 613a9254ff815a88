"""The runner's client takes nothing but the site's upload state as an answer to an upload: an empty or
foreign answer (a connection cut by a proxy, a captive portal) is an ApiError, which abandons the task,
never a KeyError that ends the runner (tests/runner/test_remote_runner_netns.py saw one after an outage)."""

from __future__ import annotations

import pytest
import requests

from runner.client import ApiError, SiteClient


class Answers(requests.Session):
    """A session whose every request gets the next of the given (status, body) answers."""

    def __init__(self, answers: list[tuple[int, bytes]]) -> None:
        super().__init__()
        self.answers, self.sent = list(answers), []

    def request(self, method, url, **kwargs):
        self.sent.append((method, kwargs.get("headers", {}).get("Upload-Offset")))
        status, body = self.answers.pop(0)
        response = requests.Response()
        response.status_code, response._content = status, body
        return response


TASK = {"task": 7, "lease": {"owner": "o", "attempt": 1}}


@pytest.mark.parametrize(
    "put_answer",
    [
        b"",
        b"{}",
        b'{"received": "3", "complete": false}',
        b'{"received": true}',
        b'{"received": -1, "complete": false}',
        b'{"received": 3, "complete": "no"}',
    ],
)
def test_an_answer_to_a_chunk_that_is_no_upload_state_is_an_api_error(tmp_path, put_answer):
    path = tmp_path / "snapshot.csv"
    path.write_bytes(b"id,y\n1,2\n")
    session = Answers([(200, b'{"received": 0, "complete": false}'), (200, put_answer)])
    client = SiteClient("http://site.invalid", "token", session=session)
    with pytest.raises(ApiError, match="holds no upload state"):
        client.upload(TASK, "k", path, name="snapshots/1.csv", kind="snapshot", chunk=4)


def test_an_upload_sends_each_chunk_from_where_the_site_is(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"abcdefghij")
    session = Answers(
        [
            (200, b'{"received": 2, "complete": false}'),
            (200, b'{"received": 6, "complete": false}'),
            (200, b'{"received": 10, "complete": true}'),
        ]
    )
    state = SiteClient("http://site.invalid", "token", session=session).upload(
        TASK, "k", path, name="out.bin", kind="log", chunk=4
    )
    assert state == {"received": 10, "complete": True}
    assert session.sent == [("GET", None), ("PUT", "2"), ("PUT", "6")]

"""Property-based checks: whatever a client sends to the pages and the API, the answer is never a 5xx.

Bounded in time (a fixed number of examples, no deadline per example) so the suite stays fast."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.test_runs import token_client

BOUNDED = settings(max_examples=60, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
NUMBERISH = st.one_of(TEXT, st.integers(min_value=-(2**70), max_value=2**70).map(str),
                      st.sampled_from(["nan", "inf", "-inf", "1e400", "0x10", " 1", "１"]))
QUERY_PAGES = ["/", "/api/leaderboard/", "/competitions/", "/api/runs/", "/api/competitions/",
               "/compare/experiments/", "/compare/"]
QUERY_KEYS = ["q", "split", "sort", "agent", "model", "hardware", "verified", "pad", "format", "competition",
              "status", "experiment", "a", "b", "runs", "limit", "offset"]


@pytest.mark.django_db
@BOUNDED
@given(page=st.sampled_from(QUERY_PAGES), params=st.dictionaries(st.sampled_from(QUERY_KEYS), NUMBERISH,
                                                                  max_size=4))
def test_query_parameters_never_cause_a_server_error(client, catalogue, page, params):
    response = client.get(f"{page}?{urlencode(params)}")
    assert response.status_code < 500, (page, params, response.content[:300])


@pytest.mark.django_db
@BOUNDED
@given(slug=TEXT.filter(lambda s: "/" not in s and "?" not in s and "#" not in s and s not in ("", ".", "..")))
def test_path_segments_never_cause_a_server_error(client, catalogue, slug):
    from urllib.parse import quote

    for url in (f"/competitions/{quote(slug)}/", f"/api/competitions/{quote(slug)}/"):
        assert client.get(url).status_code < 500, url


@pytest.mark.django_db
@BOUNDED
@given(fields=st.fixed_dictionaries({}, optional={
    "competition": TEXT, "agent": TEXT, "model": TEXT, "agent_version": TEXT, "hardware": TEXT,
    "gpu_type": TEXT, "seed": NUMBERISH, "gpu_count": NUMBERISH, "cpu_count": NUMBERISH,
    "memory_gb": NUMBERISH, "time_limit_hours": NUMBERISH, "score": NUMBERISH, "is_private": TEXT,
    "notes": TEXT,
}), name=st.text(st.characters(codec="utf-8", exclude_characters="\x00/\\"), min_size=1, max_size=300),
   content=st.binary(max_size=200))
def test_run_uploads_never_cause_a_server_error(alice, catalogue, fields, name, content):
    data = {**fields, "trajectory_files": [SimpleUploadedFile(name, content)]}
    response = token_client(alice).post("/api/runs/", data, format="multipart")
    assert response.status_code < 500, (fields, name, response.content[:300])

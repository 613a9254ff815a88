"""Schemathesis over the whole OpenAPI schema, anonymous and with a token: no input is a server error.

Seeded (derandomized) and bounded, so a run takes the same few minutes and finds the same cases.
On PostgreSQL, where column ranges and lengths are enforced and out-of-range input raises DataError.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode

EXAMPLES = 60
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())
# Valid and invalid input both: a request the schema forbids must be refused, not crash the site.
schema.config.generation.update(modes=list(GenerationMode))

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=False)]


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """The WSGI handler closes the database connection after each request; the test's transaction
    lives on it (Django's test client disconnects the same signal)."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def submitter(db, django_user_model):
    from django.contrib.auth.models import Permission
    from rest_framework.authtoken.models import Token

    user = django_user_model.objects.create_user("fuzzer", password="pw-fuzzer-123")
    user.user_permissions.add(Permission.objects.get(codename="submit_job"))
    return Token.objects.create(user=user).key


def _assert_no_server_error(case, headers=None) -> None:
    response = case.call(headers=headers)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} -> {response.status_code}\n{case.as_curl_command()}\n"
        f"{response.text[:2000]}")


@schema.parametrize()
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_anonymous_input_is_never_a_server_error(case, catalogue):
    _assert_no_server_error(case)


@schema.parametrize()
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_input_with_a_token_is_never_a_server_error(case, catalogue, submitter):
    _assert_no_server_error(case, headers={"Authorization": f"Token {submitter}"})

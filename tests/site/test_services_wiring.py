"""CI runs against real services: PostgreSQL and a Redis broker (markers make a missing service fail in CI)."""

import os
import uuid

import pytest
from django.conf import settings
from django.db import connection


@pytest.mark.postgres
def test_database_is_postgresql(db):
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("select version()")
        assert "PostgreSQL" in cursor.fetchone()[0]


def test_ci_uses_postgresql(db):
    if os.environ.get("CI"):
        assert connection.vendor == "postgresql", "CI must run the suite on PostgreSQL (DATABASE_URL)"


@pytest.mark.redis
def test_redis_broker_round_trip():
    from kombu import Connection

    with Connection(settings.CELERY_BROKER_URL) as conn:
        queue = conn.SimpleQueue(f"medalboard-test-{uuid.uuid4().hex}")
        queue.put({"hello": "broker"})
        message = queue.get(timeout=5)
        assert message.payload == {"hello": "broker"}
        message.ack()
        queue.queue.delete()
        queue.close()


def test_embedded_broker_round_trip(tmp_path):
    from kombu import Connection

    options = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path),
               "control_folder": str(tmp_path / "control")}
    with Connection("filesystem://", transport_options=options) as conn:
        queue = conn.SimpleQueue("medalboard-embedded")
        queue.put({"hello": "filesystem"})
        message = queue.get(timeout=5)
        assert message.payload == {"hello": "filesystem"}
        message.ack()
        queue.close()

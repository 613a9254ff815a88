"""The embedded (filesystem) broker polls often: kombu's default of one second also passes after every
task, which made `make run`'s worker grade about one snapshot a second (benchmarks/snapshot_grading.py
measures it against Redis)."""

from __future__ import annotations

from django.conf import settings
from kombu import Connection

from tests.site.test_settings import _manage

# The site as `make run` starts it: no broker named (CI names Redis for the rest of the suite).
EMBEDDED = {"DEBUG": "true", "CELERY_BROKER_URL": ""}


def test_a_worker_on_the_embedded_broker_polls_every_50_ms(tmp_path):
    code = ("from webapp.celery import app\nwith app.connection_for_read() as c:\n"
            "    print(c.transport.driver_type, c.transport.polling_interval)")
    result = _manage("shell", "-c", code, env={**EMBEDDED, "MEDALBOARD_VAR_DIR": str(tmp_path)})
    assert result.stdout.strip().splitlines()[-1].split() == ["filesystem", "0.05"], result.stderr


def test_the_polling_interval_is_configurable_and_checked(tmp_path):
    options = {**settings.CELERY_BROKER_TRANSPORT_OPTIONS, "polling_interval": 0.2}
    with Connection("filesystem://", transport_options=options) as connection:
        assert connection.transport.polling_interval == 0.2
    refused = _manage("check", env={**EMBEDDED, "CELERY_BROKER_POLLING_INTERVAL": "0",
                                    "MEDALBOARD_VAR_DIR": str(tmp_path)})
    assert refused.returncode != 0 and "CELERY_BROKER_POLLING_INTERVAL" in refused.stderr

"""Secrets are encrypted at rest with the key from the environment, and unreadable under another key."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from runner.host import secrets


def test_round_trip_and_ciphertext_hides_value(settings):
    settings.RUNNER_SECRETS_FERNET_KEY = Fernet.generate_key().decode()
    token = secrets.encrypt("sk-live-abc123")
    assert "sk-live-abc123" not in token
    assert secrets.decrypt(token) == "sk-live-abc123"
    assert secrets.encrypt("sk-live-abc123") != token  # fresh IV each time


def test_other_key_cannot_read(settings):
    settings.RUNNER_SECRETS_FERNET_KEY = Fernet.generate_key().decode()
    token = secrets.encrypt("value")
    settings.RUNNER_SECRETS_FERNET_KEY = Fernet.generate_key().decode()
    with pytest.raises(secrets.SecretError, match="cannot be decrypted") as info:
        secrets.decrypt(token)
    assert "value" not in str(info.value)


def test_production_needs_its_own_key(settings):
    settings.RUNNER_SECRETS_FERNET_KEY, settings.DEBUG = "", False
    with pytest.raises(ImproperlyConfigured, match="MEDALBOARD_SECRETS_KEY"):
        secrets.encrypt("x")


def test_debug_derives_a_key_from_secret_key(settings):
    settings.RUNNER_SECRETS_FERNET_KEY, settings.DEBUG = "", True
    assert secrets.decrypt(secrets.encrypt("x")) == "x"


def test_bad_key_is_a_configuration_error(settings):
    settings.RUNNER_SECRETS_FERNET_KEY = "not-a-key"
    with pytest.raises(ImproperlyConfigured, match="not a Fernet key"):
        secrets.encrypt("x")


def test_seal_unseal_and_redact(settings):
    settings.RUNNER_SECRETS_FERNET_KEY = Fernet.generate_key().decode()
    sealed = secrets.seal({"OPENAI_API_KEY": "sk-abcdef", "OTHER": "value-2"})
    assert "sk-abcdef" not in sealed
    assert secrets.unseal(sealed) == {"OPENAI_API_KEY": "sk-abcdef", "OTHER": "value-2"}
    assert secrets.unseal("") == {}
    assert secrets.redact("auth failed for sk-abcdef", secrets.unseal(sealed)) == "auth failed for [secret]"


def test_a_secret_too_short_to_redact_is_refused(alice, job_world):
    from runner.jobs.services import JobError, create_job

    with pytest.raises(JobError, match="at least 4 characters: PIN"):
        create_job(user=alice, agent="scripted", competitions=["spaceship-titanic"], time_limit_minutes=1,
                   env={"PIN": "123"})
    assert create_job(user=alice, agent="scripted", competitions=["spaceship-titanic"], time_limit_minutes=1,
                      env={"PIN": "1234"}).pk

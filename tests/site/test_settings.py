"""Configuration from the environment: bad values rejected, production refuses to start without secrets."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

from webapp import settings as settings_module


def _manage(*args, env):
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("SECRET_KEY", "DEBUG", "DJANGO_SETTINGS_MODULE", "SECURE_SSL_REDIRECT",
                              "DJANGO_ALLOW_ASYNC_UNSAFE")}
    full_env.update(env)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=full_env,
                          capture_output=True, text=True, timeout=120)


def test_production_refuses_to_start_without_secret_key():
    result = _manage("check", env={"DEBUG": "false"})
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_check_deploy_is_clean_with_a_production_environment():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env={
        "DEBUG": "false", "SECRET_KEY": "k" * 30 + "-production-secret-with-enough-entropy-9a8b7c6d",
        "ALLOWED_HOSTS": "medalboard.example.org",
    })
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize(("helper", "value"), [("env_bool", "maybe"), ("env_int", "ten")])
def test_bad_values_are_rejected(monkeypatch, helper, value):
    from django.core.exceptions import ImproperlyConfigured

    monkeypatch.setenv("MEDALBOARD_PROBE", value)
    with pytest.raises(ImproperlyConfigured, match="MEDALBOARD_PROBE"):
        getattr(settings_module, helper)("MEDALBOARD_PROBE", 0)


def test_local_defaults_need_no_server():
    result = _manage("shell", "--no-imports", "-c", "from django.conf import settings as s; "
                     "print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL, s.CATALOGUE_DIR.name)",
                     env={"DEBUG": "true", "DATABASE_URL": "", "CELERY_BROKER_URL": ""})
    assert result.stdout.splitlines()[-1].split() == ["django.db.backends.sqlite3", "filesystem://", "mle-bench"]


def test_no_pending_migrations():
    result = _manage("makemigrations", "--check", "--dry-run", env={"DEBUG": "true"})
    assert result.returncode == 0, result.stdout

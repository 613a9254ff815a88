"""Settings for the test suite: production settings with a throwaway key and no HTTPS redirect."""

import os

os.environ.setdefault("SECRET_KEY", "test-suite-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")

from webapp.settings import *  # noqa: E402,F403

STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
MEDIA_ROOT = VAR_DIR / "test-artifacts"  # noqa: F405
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast personas
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405  (whitenoise warns about a missing folder)

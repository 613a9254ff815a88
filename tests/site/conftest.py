"""The fixture of the tests that visit every URL (tests.site.url_support)."""

from tests.site.url_support import site_world  # noqa: F401

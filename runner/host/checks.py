"""System checks of the runner's settings: `manage.py runner` (and check, runserver) refuse to start with them."""

from __future__ import annotations

from django.core import checks
from django.core.exceptions import ImproperlyConfigured


@checks.register(checks.Tags.security)
def sandbox_networks(app_configs, **kwargs) -> list[checks.CheckMessage]:
    from runner.host.networks import offered_networks

    try:
        offered_networks()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="runner.E001")]
    return []

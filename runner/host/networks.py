"""Which Docker networks a sandbox may join: only those its runner's operator listed for sandboxes.

A sandbox has no network unless its job names one, and the name must be in the runner's
MEDALBOARD_SANDBOX_NETWORKS (comma-separated, empty by default: no runner offers any network).
Some names are never a sandbox network, listed or not: `host` and `container:<id>` share the
host's or another container's network stack (where the site's database and broker listen),
`bridge` and `default` reach every port the host publishes, and `none` is what naming no network
already means. Docker reads anything with a colon as a mode rather than a network name.

The name is checked twice: when a job is created (some runner must offer it, runner.jobs.services) and
on the runner right before the sandbox starts (`check_sandbox_network`, by the backend), so a
runner never attaches a sandbox to a network its own operator did not list.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
NEVER = {
    "host": "shares the host's network stack, where the site's database and broker listen",
    "bridge": "is Docker's default bridge, which reaches every port the host publishes",
    "default": "is Docker's default network, which reaches every port the host publishes",
    "none": "is not a network (leave the network empty for none)",
}


class NetworkRefused(ValueError):
    """The sandbox may not join this network; the message says why."""


def refusal(name: str) -> str | None:
    """Why `name` can never be a sandbox network, or None if it could be one."""
    if ":" in name:
        return f"{name!r} is a network mode, not a network: it would share another namespace"
    if name.lower() in NEVER:
        return f"{name!r} {NEVER[name.lower()]}"
    if not NAME.fullmatch(name):  # match() would let a trailing newline through ('$' matches before it)
        return f"{name!r} is not a network name (letters, digits, '_', '.', '-')"
    return None


def offered_networks() -> list[str]:
    """This runner's MEDALBOARD_SANDBOX_NETWORKS; ImproperlyConfigured for a name that is never allowed."""
    names = list(dict.fromkeys(getattr(settings, "SANDBOX_NETWORKS", [])))
    for name in names:
        why = refusal(name)
        if why:
            raise ImproperlyConfigured(f"MEDALBOARD_SANDBOX_NETWORKS: {why}; list only egress networks made "
                                       "for sandboxes (docker network create ...)")
    return names


def check_sandbox_network(name: str | None) -> None:
    """Raise NetworkRefused unless a sandbox of this runner may join `name` (None or "": no network)."""
    check_network(name, offered_networks(), offered_by="this runner offers")


def check_network(name: str | None, offered: list[str], *, offered_by: str) -> None:
    """Raise NetworkRefused unless `name` is empty (no network) or an allowed name among `offered`."""
    if not name:
        return
    why = refusal(name)
    if why:
        raise NetworkRefused(f"the network {why}")
    if name not in offered:
        raise NetworkRefused(f"the network {name!r} is not one {offered_by} sandboxes (offered: "
                             f"{', '.join(offered) or 'none'}; runners list them in MEDALBOARD_SANDBOX_NETWORKS)")

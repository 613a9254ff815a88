"""What an agent image build may reach: one setting, MEDALBOARD_AGENTS_BUILD_NETWORK.

- `none` (the default): nothing; a step that downloads fails with its own error.
- `registries`: only the hosts the operator names (MEDALBOARD_AGENTS_BUILD_REGISTRIES, plus the hosts of
  MEDALBOARD_AGENTS_BUILD_PIP_INDEX and MEDALBOARD_AGENTS_GIT_MIRROR). The build runs on an internal
  Docker network of the site's (MEDALBOARD_AGENTS_BUILD_REGISTRIES_NETWORK) with a filtering proxy
  (runner.agents.build_proxy) on its gateway address, passed as the build's http(s)_proxy, which
  apt, pip, git and curl read. Enforced, not by convention: the network has no DNS and no NAT, so a
  step that ignores the proxy gets no answer from outside, and where this host's iptables can be
  used (root) its packets to this host itself, but for the proxy's port, and any it would forward
  are dropped; the log of each build says which of these held.
- any other value: that Docker network as it is (`host`: everything this host reaches).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import docker.errors
from django.conf import settings

from runner.agents.build_proxy import FilteringProxy

REGISTRIES = "registries"
LABEL = "medalboard.build-network"
PROXY_ARGS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")  # Docker's predefined build args


@dataclass
class Reach:
    """What one build gets: its network, its build args, and (registries) the proxy's refusals."""

    mode: str
    network: str
    buildargs: dict[str, str] = field(default_factory=dict)
    proxy: FilteringProxy | None = None
    enforced: str = ""

    @property
    def refused(self) -> list[str]:
        """The hosts the proxy refused so far (the live list: read it after the build)."""
        return self.proxy.refused if self.proxy else []

    def describe(self) -> str:
        if self.mode == REGISTRIES:
            allowed = self.proxy.allowed if self.proxy else set()
            hosts = ", ".join(sorted(h if p is None else f"{h}:{p}" for h, p in allowed))
            return (
                f"RUN steps reach only {hosts} (MEDALBOARD_AGENTS_BUILD_NETWORK=registries), through the site's "
                f"proxy on the network {self.network!r} ({self.enforced}),"
            )
        return f"RUN steps use the network {self.network!r} (MEDALBOARD_AGENTS_BUILD_NETWORK)"


def mode() -> str:
    return getattr(settings, "AGENTS_BUILD_NETWORK", "none") or "none"


def allowed_hosts() -> list[str]:
    """The registries' host names, with those of the pip index and the git mirror the operator set."""
    hosts = list(getattr(settings, "AGENTS_BUILD_REGISTRIES", []))
    for url in (settings.AGENTS_BUILD_PIP_INDEX, settings.AGENTS_GIT_MIRROR):
        parts = urlsplit(url) if url else None
        if parts and parts.hostname:
            hosts.append(f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname)
    return hosts


@contextmanager
def opened(client) -> Iterator[Reach]:
    """The reach of the builds made inside: for `registries`, the network, the proxy and the firewall
    live as long as the block."""
    if mode() != REGISTRIES:
        yield Reach(mode=mode(), network=mode())
        return
    name = settings.AGENTS_BUILD_REGISTRIES_NETWORK
    bridge, gateway = ensure_network(client, name)
    with FilteringProxy(allowed_hosts(), bind=gateway) as proxy, firewall(bridge, gateway, proxy.port) as enforced:
        args = dict.fromkeys(PROXY_ARGS, proxy.url)
        yield Reach(mode=REGISTRIES, network=name, buildargs=args, proxy=proxy, enforced=enforced)


def ensure_network(client, name: str) -> tuple[str, str]:
    """(bridge interface, gateway address) of the site's internal build network, made if missing."""
    try:
        network = client.networks.get(name)
    except docker.errors.NotFound:
        network = _create_network(client, name)
    attrs = network.attrs
    if not attrs.get("Internal") or attrs.get("Driver") != "bridge":
        raise docker.errors.InvalidArgument(f"the build network {name!r} must be an internal bridge network")
    bridge = (attrs.get("Options") or {}).get("com.docker.network.bridge.name") or f"br-{network.id[:12]}"
    gateway = (attrs.get("IPAM", {}).get("Config") or [{}])[0].get("Gateway", "").split("/")[0]
    if not gateway:
        raise docker.errors.InvalidArgument(f"the build network {name!r} has no gateway address for the proxy")
    return bridge, gateway


def _create_network(client, name: str):
    """An internal bridge with a name of its own for its interface (the firewall's rules name it); a
    concurrent build may have made it meanwhile."""
    bridge = "mbb-" + hashlib.sha256(name.encode()).hexdigest()[:10]
    try:
        network = client.networks.create(
            name,
            driver="bridge",
            internal=True,
            labels={LABEL: REGISTRIES},
            options={"com.docker.network.bridge.name": bridge},
        )
    except docker.errors.APIError:
        network = client.networks.get(name)
    network.reload()
    return network


NO_NAT = "no DNS and no NAT on that network, so a step ignoring the proxy gets no answer from outside"


@contextmanager
def firewall(bridge: str, gateway: str, port: int) -> Iterator[str]:
    """Drop what the build network sends to this host (but this build's proxy port) or through it;
    says what is enforced. Without iptables (or root) only the network's own design holds.

    The bridge's packets to the host go to a chain of its own, which ends in DROP and, above it,
    accepts each running build's proxy port: concurrent builds add and remove only their own rule.
    The jump, the DROP and the FORWARD drop stay: nothing but builds uses the bridge."""
    iptables = shutil.which("iptables")
    chain = f"MB-{bridge}"[:28]
    own = [chain, "-d", gateway, "-p", "tcp", "--dport", str(port), "-j", "ACCEPT"]
    held = iptables is not None and _ensure_rules(str(iptables), chain, bridge) and _iptables(iptables, "-I", *own)
    try:
        if held:
            yield f"{NO_NAT}; iptables drops its packets to this host (but the proxy's port) and any forwarded"
        else:
            yield (
                f"{NO_NAT}; iptables could not be used here, so this host's own services listening on every "
                "address are reachable from the build (bind them to 127.0.0.1)"
            )
    finally:
        if held:
            _iptables(str(iptables), "-D", *own)


def _ensure_rules(iptables: str, chain: str, bridge: str) -> bool:
    _iptables(iptables, "-N", chain)  # fails when it exists
    wanted = [
        ("-I", ["INPUT", "-i", bridge, "-j", chain]),
        ("-I", ["FORWARD", "-i", bridge, "-j", "DROP"]),
        ("-A", [chain, "-j", "DROP"]),
    ]
    return all(_iptables(iptables, "-C", *rule) or _iptables(iptables, how, *rule) for how, rule in wanted)


def _iptables(iptables: str, *args: str) -> bool:
    return subprocess.run([iptables, "-w", *args], capture_output=True).returncode == 0


def remove_network(client, name: str) -> None:
    """The build network and its firewall rules, gone (no build may be running on it)."""
    for network in client.networks.list(names=[name]):
        bridge = (network.attrs.get("Options") or {}).get("com.docker.network.bridge.name") or f"br-{network.id[:12]}"
        iptables = shutil.which("iptables")
        if iptables is not None:
            chain = f"MB-{bridge}"[:28]
            while _iptables(iptables, "-D", "INPUT", "-i", bridge, "-j", chain):
                pass
            while _iptables(iptables, "-D", "FORWARD", "-i", bridge, "-j", "DROP"):
                pass
            _iptables(iptables, "-F", chain)
            _iptables(iptables, "-X", chain)
        network.remove()

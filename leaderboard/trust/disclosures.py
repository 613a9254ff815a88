"""What an experiment discloses about how its results were made, as MLE-bench's maintainers ask:
hardware (vCPU, RAM, GPUs), time limit, internet or external knowledge used, test-set signal used,
source code and tech report links, known leakage.

Runs from jobs have them recorded by the runner (the sandbox's limits, and whether the job named an
egress network); uploads have what the uploader states, and what they leave out stays "not
disclosed", never guessed. Internet and test-set signal change what a result means, so they are part
of an experiment's configuration (two statements, two experiments); links and leakage annotate it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from leaderboard.models import Disclosure, Experiment

YES_NO = {"yes": Disclosure.YES, "no": Disclosure.NO, "": Disclosure.UNKNOWN}
# Links are shown as links: only web addresses, never javascript: or data: ones.
WEB_URL = URLValidator(schemes=["http", "https"])
MAX_URL, MAX_NOTE = 500, 10_000
ANNOTATIONS = ("source_url", "report_url", "known_leakage", "leakage_note")


class DisclosureError(ValueError):
    """A disclosure that cannot be taken; the message says why."""


@dataclass(frozen=True)
class Disclosures:
    """An uploader's or a runner's statements; "" (or False for leakage) is "not stated"."""

    internet: str = ""
    test_signal: str = ""
    source_url: str = ""
    report_url: str = ""
    known_leakage: bool = False
    leakage_note: str = ""

    def __post_init__(self) -> None:
        for name in ("internet", "test_signal"):
            if getattr(self, name) not in YES_NO:
                raise DisclosureError(f"{name} must be yes, no or empty (not disclosed), not {getattr(self, name)!r}")
        for name in ("source_url", "report_url"):
            if value := getattr(self, name):
                _check_url(name, value)
        if len(self.leakage_note) > MAX_NOTE:
            raise DisclosureError(f"leakage_note is longer than {MAX_NOTE} characters")

    @classmethod
    def of(cls, values: dict) -> Disclosures:
        """From form, API or CLI fields (missing ones not stated); a yes/no may also be a boolean."""
        known = {name: values.get(name) for name in cls.__dataclass_fields__ if values.get(name) is not None}
        for name in ("internet", "test_signal"):
            if isinstance(known.get(name), bool):
                known[name] = "yes" if known[name] else "no"
        return cls(**{name: value.strip() if isinstance(value, str) else value for name, value in known.items()})

    def identity(self) -> dict[str, str]:
        """The fields that are part of the experiment's configuration."""
        return {"internet": self.internet, "test_signal": self.test_signal}

    def annotations(self) -> dict:
        """The fields that annotate the experiment (links, leakage), as a new experiment stores them."""
        return {name: getattr(self, name) for name in ANNOTATIONS}

    def stated(self) -> dict:
        """Every field something was said about (what an upload's content hash adds)."""
        return {name: value for name, value in asdict(self).items() if value}


def _check_url(name: str, value: str) -> None:
    if len(value) > MAX_URL:
        raise DisclosureError(f"{name} is longer than {MAX_URL} characters")
    try:
        WEB_URL(value)
    except ValidationError:
        raise DisclosureError(f"{name} must be an http(s) address") from None


def annotate(experiment: Experiment, disclosures: Disclosures) -> None:
    """The links and leakage an upload states, onto its experiment: a stated link replaces the old
    one, and a leakage mark is added, never removed (only staff clear it, in the admin)."""
    changed = []
    for name in ("source_url", "report_url", "leakage_note"):  # ANNOTATIONS but the flag
        value = getattr(disclosures, name)
        if value and value != getattr(experiment, name):
            setattr(experiment, name, value)
            changed.append(name)
    if disclosures.known_leakage and not experiment.known_leakage:
        experiment.known_leakage = True
        changed.append("known_leakage")
    if changed:
        experiment.save(update_fields=changed)


def for_job(*, network: str | None) -> Disclosures:
    """A job's: internet used exactly when its sandboxes join an egress network (runner.host.networks), and
    no test-set signal, since a sandbox mounts only the public data and its checker compares a
    submission's format with the sample submission, never with the answers."""
    return Disclosures(internet="yes" if network else "no", test_signal="no")

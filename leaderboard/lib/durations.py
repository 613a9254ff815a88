"""Durations for people: `2 min`, `1 min 30 s`, `1 h 30 min`, `24 h`, never `0.03333333333333333`.

static/js/scaling.js writes the same words for the curves' legends and axis (formatDuration there)."""

from __future__ import annotations

import math
import re

# "30s", "5 min", "1.5h", "2 hours"; a bare number is hours (what the time curve's `hours` always took).
DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?)?", re.I)
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def format_seconds(seconds: float | None) -> str:
    """Seconds under a minute, minutes and seconds under an hour, hours and minutes above; "–" unknown."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "–"
    if seconds < 1:
        return f"{seconds:.3g} s"
    if round(seconds) < 3600:  # rounded first, so 59.6 s is "1 min", never "60 s", and 3599.6 s is "1 h"
        minutes, rest = divmod(round(seconds), 60)
        return _pair(minutes, "min", rest, "s") if minutes else f"{rest} s"
    hours, rest = divmod(round(seconds / 60), 60)
    return _pair(hours, "h", rest, "min")


def format_hours(hours: float | None) -> str:
    return "–" if hours is None else format_seconds(hours * 3600.0)


def _pair(big: int, big_unit: str, small: int, small_unit: str) -> str:
    return f"{big} {big_unit}" + (f" {small} {small_unit}" if small else "")


# The time axis' unit: seconds for budgets up to two minutes, minutes up to two hours, else hours.
AXIS_UNITS = ((120.0, "seconds", 1.0), (7200.0, "minutes", 60.0), (math.inf, "hours", 3600.0))


def axis_unit(seconds: list[float]) -> dict:
    """{"name", "seconds"}: the unit a time axis reaching max(seconds) reads best in."""
    longest = max(seconds, default=0.0)
    name, size = next((name, size) for limit, name, size in AXIS_UNITS if longest <= limit)
    return {"name": name, "seconds": size}


def parse_hours(text: str) -> float:
    """Hours from a duration a person writes ("30s", "5 min", "1.5h", or a bare number of hours);
    ValueError if it is not one."""
    match = DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a duration")
    number, unit = float(match.group(1)), (match.group(2) or "h")[0].lower()
    return number * UNIT_SECONDS[unit] / 3600

"""What every model module shares: the numeric ranges input is checked against and the user model's name."""

from __future__ import annotations

from django.conf import settings

# The ranges of IntegerField and BigIntegerField on PostgreSQL: input beyond them is refused up front.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
# An experiment's memory and time budget: finite and far from overflowing when scaled (x 3600, x 2^30).
MAX_MEMORY_GB = 2**20
MAX_TIME_LIMIT_HOURS = 10**6
USER_MODEL = settings.AUTH_USER_MODEL  # Experiment has a field named `settings`

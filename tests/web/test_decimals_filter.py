"""The leaderboard's fast number filter prints exactly what Django's floatformat prints."""

from django.template.defaultfilters import floatformat
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.templatetags.medalboard import decimals

NUMBERS = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**30, 10**30),
                    st.sampled_from([0.0, -0.0, 0.005, 0.015, 0.125, -0.004, 2.5, 1e16, 1e-7, 123456789.125]))


@settings(max_examples=3000, deadline=None)
@given(NUMBERS, st.integers(0, 4))
def test_decimals_matches_floatformat(value, places):
    assert decimals(value, places) == floatformat(value, places)


def test_decimals_of_nothing_and_of_non_numbers():
    assert decimals(None, 2) == floatformat(None, 2) == ""
    for value in (float("nan"), float("inf"), "3.14159", True):
        assert decimals(value, 2) == floatformat(value, 2)

"""The leaderboard's metric cells, built by the metric_cells tag, are the markup the template's loop wrote."""

from django.template import Context, Template
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.templatetags.medalboard import metric_cells

# The loop leaderboard.html had before the tag, verbatim.
TEMPLATE_LOOP = Template(
    "{% load medalboard %}"
    '{% for key, value, sem in row.cells %}\n      <td class="num" data-value="{{ value|default_'
    'if_none:\'\' }}">{% if value is None %}<span class="muted">–</span>{% else %}{{ value|decima'
    'ls:2 }}{% if sem is not None %} <span class="muted small">± {{ sem|decimals:2 }}</span>{% '
    'elif row.n_seeds == 1 %} <span class="muted small" title="the standard error needs at leas'
    't two seeds">1 seed: no error bar</span>{% endif %}{% endif %}</td>\n      {% endfor %}'
)

PERCENT = st.one_of(st.none(), st.floats(0, 100), st.floats(allow_nan=False, allow_infinity=False))
CELLS = st.lists(st.tuples(st.sampled_from(["gold", "any_medal"]), PERCENT, PERCENT), max_size=8)


@settings(max_examples=500, deadline=None)
@given(CELLS, st.integers(0, 3))
def test_metric_cells_write_what_the_template_loop_wrote(cells, n_seeds):
    row = {"cells": cells, "n_seeds": n_seeds}
    assert metric_cells(row) == TEMPLATE_LOOP.render(Context({"row": row}))

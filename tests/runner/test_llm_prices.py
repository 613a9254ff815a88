"""The LLM price table (runner.models.LlmPrice): edited in the admin, read once per run as the plain
dict the gateway prices calls with; exact names win over prefixes, the longest prefix over shorter."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from runner.gateway import PriceTable
from runner.jobs.llm_usage import load_prices
from runner.models import LlmPrice


@pytest.fixture
def prices(db):
    for pattern, price_in, price_out in [("gpt-4o*", "2.5", "10"), ("gpt-4o-mini*", "0.15", "0.6"),
                                         ("gpt-4o-2024-05-13", "5", "15"), ("claude-sonnet-4*", "3", "15")]:
        LlmPrice.objects.create(pattern=pattern, input_usd_per_mtok=Decimal(price_in),
                                output_usd_per_mtok=Decimal(price_out))


def test_load_prices_gives_the_table_as_a_plain_dict(prices):
    table = load_prices()
    assert table["gpt-4o*"] == (2.5, 10.0) and table["claude-sonnet-4*"] == (3.0, 15.0)
    assert all(type(v) is float for pair in table.values() for v in pair)


@pytest.mark.parametrize("model, price", [
    ("gpt-4o", (2.5, 10.0)),  # a prefix matches the bare name too
    ("gpt-4o-2024-08-06", (2.5, 10.0)),
    ("gpt-4o-2024-05-13", (5.0, 15.0)),  # the exact name wins
    ("gpt-4o-mini-2024-07-18", (0.15, 0.6)),  # the longest prefix wins
    ("claude-sonnet-4-20250514", (3.0, 15.0)),
    ("gpt-4", None),
    ("llama-3", None),
])
def test_a_model_gets_the_price_of_its_most_specific_pattern(prices, model, price):
    assert PriceTable(load_prices()).price(model) == price


def test_cost_is_tokens_times_price_per_million(prices):
    table = PriceTable(load_prices())
    assert table.cost("gpt-4o-mini", 1_000_000, 2_000_000) == pytest.approx(0.15 + 1.2)
    assert table.cost("llama-3", 10, 10) is None


@pytest.mark.parametrize("pattern", ["gpt*4o", "*", "**", "gpt-4o**"])
def test_a_star_is_allowed_only_at_the_end(db, pattern):
    with pytest.raises(ValidationError, match="only at the end"):
        LlmPrice(pattern=pattern, input_usd_per_mtok=1, output_usd_per_mtok=1).full_clean()


def test_a_negative_price_is_refused(db):
    with pytest.raises(ValidationError):
        LlmPrice(pattern="m", input_usd_per_mtok=-1, output_usd_per_mtok=1).full_clean()


def test_an_admin_edits_the_prices(client, db):
    admin = get_user_model().objects.create_superuser("root", "root@example.org", "root-password-1")
    client.force_login(admin)
    reply = client.post("/admin/runner/llmprice/add/", {"pattern": "o3*", "input_usd_per_mtok": "2",
                                                        "output_usd_per_mtok": "8", "note": "list price"})
    assert reply.status_code == 302, reply.content[:2000]
    assert load_prices() == {"o3*": (2.0, 8.0)}
    assert client.get("/admin/runner/llmprice/").status_code == 200

"""The gateway's configuration: MEDALBOARD_LLM_UPSTREAMS (parsed in settings, provider names checked
against the registry) and a job's LLM limits from its settings; bad values rejected with a reason."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from runner.gateway import Limits, configured_upstreams
from webapp import settings as settings_module


def test_upstreams_are_parsed_per_provider(monkeypatch):
    monkeypatch.setenv("MEDALBOARD_LLM_UPSTREAMS", " openai=https://api.openai.com/v1/ , Anthropic=http://10.0.0.5:8080")
    assert settings_module.env_upstreams("MEDALBOARD_LLM_UPSTREAMS") == {
        "openai": "https://api.openai.com/v1", "anthropic": "http://10.0.0.5:8080"}


def test_no_upstreams_by_default(monkeypatch):
    monkeypatch.delenv("MEDALBOARD_LLM_UPSTREAMS", raising=False)
    assert settings_module.env_upstreams("MEDALBOARD_LLM_UPSTREAMS") == {}


@pytest.mark.parametrize("value", [
    "openai", "openai=", "=https://x", "openai=ftp://x", "openai=https://", "openai=https://x/?key=1",
    "openai=https://user:pw@x", "openai=https://x#y", "openai=https://a,openai=https://b",
])
def test_bad_upstreams_are_rejected(monkeypatch, value):
    monkeypatch.setenv("MEDALBOARD_LLM_UPSTREAMS", value)
    with pytest.raises(ImproperlyConfigured, match="MEDALBOARD_LLM_UPSTREAMS"):
        settings_module.env_upstreams("MEDALBOARD_LLM_UPSTREAMS")


def test_an_unknown_provider_is_rejected_when_the_gateway_reads_the_setting(settings):
    settings.LLM_UPSTREAMS = {"openai": "https://api.openai.com/v1", "skynet": "https://skynet.example"}
    with pytest.raises(ImproperlyConfigured, match="unknown provider.*skynet"):
        configured_upstreams()
    settings.LLM_UPSTREAMS = {"openai": "https://api.openai.com/v1"}
    assert configured_upstreams() == {"openai": "https://api.openai.com/v1"}


def test_limits_come_from_the_jobs_settings():
    limits = Limits.from_settings({"llm_max_tokens": 1e6, "llm_max_cost_usd": 2.5, "llm_max_calls": 300,
                                   "llm_max_concurrent": 4, "other": "ignored"})
    assert limits == Limits(max_tokens=1_000_000, max_cost_usd=2.5, max_calls=300, max_concurrent=4)
    assert Limits.from_settings({}) == Limits()


@pytest.mark.parametrize("value", [0, -1, "10", True, float("inf"), float("nan"), [3]])
def test_bad_limits_are_rejected_naming_the_setting(value):
    with pytest.raises(ValueError, match="llm_max_calls must be a positive number"):
        Limits.from_settings({"llm_max_calls": value})

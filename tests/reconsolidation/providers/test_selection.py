"""Provider selection: rules by default, openai on request, scripted never; readiness names
what a configured OpenAI-compatible provider still lacks, without content."""
from __future__ import annotations

import pytest

from reconsolidation.providers.openai import OpenAIProvider, ProviderNotConfigured
from reconsolidation.providers.selection import model_provider, readiness, selected_provider


@pytest.fixture
def openai_selected(settings, monkeypatch):
    monkeypatch.delenv("VEETBOT_OPENAI_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER = "openai"
    settings.VEETBOT_OPENAI_BASE_URL = "https://api.example.test/v1"
    settings.VEETBOT_OPENAI_MODEL = "m"
    settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK = "1"
    settings.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = "2"
    settings.AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER = ""
    return settings


def test_rules_is_the_default_and_needs_nothing():
    from veetbot import settings as project_settings
    assert project_settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER == "rules"
    assert selected_provider() == "rules" and readiness() == ()
    with pytest.raises(ProviderNotConfigured):
        model_provider()


@pytest.mark.parametrize("name", ["scripted", "gpt", ""])
def test_scripted_and_unknown_names_are_not_selectable(settings, name):
    settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER = name
    if name:
        with pytest.raises(ProviderNotConfigured):
            selected_provider()
    else:
        assert selected_provider() == "rules"


def test_remote_openai_lists_every_missing_piece(openai_selected, monkeypatch):
    openai_selected.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = None
    assert readiness() == ("price_unknown", "residency_unpinned", "key_missing")
    openai_selected.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = "2"
    openai_selected.AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER = "api.example.test"
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert readiness() == ()
    assert isinstance(model_provider(), OpenAIProvider)


def test_local_openai_compatible_server_needs_no_pin_or_key(openai_selected):
    openai_selected.VEETBOT_OPENAI_BASE_URL = "http://127.0.0.1:11434/v1"
    assert readiness() == ()


def test_missing_model_is_reported(openai_selected):
    openai_selected.VEETBOT_OPENAI_MODEL = ""
    assert readiness() == ("model_missing",)

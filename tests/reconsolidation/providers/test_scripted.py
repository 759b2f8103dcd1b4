"""The scripted provider replays recordings through the same contract as a real adapter, and
production settings refuse it."""
from __future__ import annotations

import pytest

from reconsolidation.providers.contract import Usage
from reconsolidation.providers.parser import parse_proposal
from reconsolidation.providers.scripted import Recording, ScriptedNotAllowed, ScriptedProvider, scripted_config
from tests.reconsolidation.providers.builders import config, dumps, merge_proposal, prepared

USAGE = Usage(input_tokens=100, output_tokens=20)


@pytest.fixture
def allowed(settings):
    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    return settings


def test_production_settings_refuse_the_scripted_provider(settings):
    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = False
    with pytest.raises(ScriptedNotAllowed):
        ScriptedProvider([])


def test_the_setting_defaults_to_off():
    from veetbot import settings as project_settings
    assert project_settings.RECON_SCRIPTED_PROVIDER_ALLOWED is False


def test_replays_in_order_and_the_content_can_echo_the_batch(allowed):
    cfg = scripted_config(model="test-model")
    batch = prepared(cfg=cfg)
    provider = ScriptedProvider([
        Recording(content=lambda request: dumps(merge_proposal(batch)), usage=USAGE, stage="proposal"),
        Recording(failure="idle_timeout", transport_outcome="timeout"),
    ], config=cfg)
    first = provider.complete(batch.request)
    assert first.ok and parse_proposal(first.content, batch.context).ok
    second = provider.complete(batch.request)
    assert (second.reason, second.transport_outcome) == ("idle_timeout", "timeout")
    assert provider.complete(batch.request).reason == "replay_exhausted"
    assert provider.sent == [batch.request.digest] * 2


def test_replay_checks_the_binding_stage_and_bounds(allowed, settings):
    cfg = scripted_config(model="test-model")
    batch = prepared(cfg=cfg)
    other = prepared(cfg=config(model="other"))
    assert ScriptedProvider([Recording(content=b"{}", usage=USAGE)], config=cfg).complete(
        other.request).reason == "binding_mismatch"
    assert ScriptedProvider([Recording(content=b"{}", usage=USAGE, stage="verification")], config=cfg).complete(
        batch.request).reason == "replay_mismatch"
    settings.RECON_RESPONSE_MAX_BYTES = 10
    assert ScriptedProvider([Recording(content=b"x" * 11, usage=USAGE)], config=cfg).complete(
        batch.request).reason == "response_too_large"
    assert ScriptedProvider([Recording(content=b"{}")], config=cfg).complete(batch.request).reason == "usage_missing"
    too_much = Usage(input_tokens=1, output_tokens=batch.request.max_output_tokens + 1)
    assert ScriptedProvider([Recording(content=b"{}", usage=too_much)], config=cfg).complete(
        batch.request).reason == "usage_inconsistent"

"""Settlement mapping: only a consistent terminal response lowers a reservation to its priced
usage; every failure or inconsistency keeps the full charge. Checked as a pure function and
end to end: a real reservation, the adapter against a real 127.0.0.1 server, a real settlement."""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from memory.models import Memory
from reconsolidation.domain import input_digest
from reconsolidation.models import ReconsolidationSpend
from reconsolidation.providers.contract import ProviderFailure, ProviderResponse, Usage
from reconsolidation.providers.egress import egress_policy
from reconsolidation.providers.openai import OpenAIProvider, openai_config
from reconsolidation.providers.request import build_proposal_request
from reconsolidation.providers.settlement import call_audit, settlement_for
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, refs
from tests.reconsolidation.providers.builders import T, config, prepared, sid, simple_group
from tests.reconsolidation.providers.sse_server import DONE, MODEL, USAGE, Scenario, SSEServer, chunk, valid_events
from veetbot.rls import owner_context

CFG = config(prices=("2.5", "10"))
BATCH = prepared(cfg=CFG)
REQUEST = BATCH.request


def ok(input_tokens=900, output_tokens=120, digest=None):
    return ProviderResponse(request_digest=digest or REQUEST.digest, content=b"{}",
                            usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens), elapsed_ms=5)


def plan(result, cfg=CFG, request=REQUEST):
    return settlement_for(result, prepared=request, config=cfg, completed_at=T, elapsed_ms=7)


def test_verified_usage_settles_at_the_priced_amount_rounded_up():
    settled = plan(ok())
    assert settled.outcome == "verified"
    assert settled.actual_usd == Decimal("0.00345000")  # 900 x 2.5 + 120 x 10 per million
    assert (settled.completion.input_tokens, settled.completion.output_tokens) == (900, 120)
    assert settled.completion.transport_outcome == "completed"
    assert plan(ok(input_tokens=1, output_tokens=1)).actual_usd == Decimal("0.00001250")


def test_free_verified_usage_may_settle_to_zero():
    free = config(prices=("0", "0"))
    request = prepared(cfg=free).request
    assert request.maximum_usd == Decimal("0.00000001")
    assert plan(ok(digest=request.digest), cfg=free, request=request).actual_usd == Decimal(0)


@pytest.mark.parametrize("result", [
    ok(input_tokens=0), ok(output_tokens=0), ok(output_tokens=4097), ok(input_tokens=REQUEST.input_tokens + 1),
    ok(digest="0" * 64),
], ids=["no-input", "no-output", "output-over-ceiling", "input-over-estimate", "other-request"])
def test_inconsistent_usage_is_unknown_and_keeps_the_full_charge(result):
    settled = plan(result)
    assert (settled.outcome, settled.actual_usd) == ("unknown", None)
    assert settled.completion.input_tokens is None and settled.completion.output_tokens is None


def test_changed_prices_are_unknown():
    assert plan(ok(), cfg=config(prices=("2.5", "11"))).outcome == "unknown"


@pytest.mark.parametrize("reason, outcome", [("idle_timeout", "timeout"), ("interrupted", "interrupted"),
                                             ("http_server_error", "failed"), ("cancelled", "cancelled")])
def test_failures_are_unknown_with_their_transport_outcome(reason, outcome):
    failure = ProviderFailure(request_digest=REQUEST.digest, reason=reason, transport_outcome=outcome, elapsed_ms=1)
    settled = plan(failure)
    assert (settled.outcome, settled.actual_usd, settled.completion.transport_outcome) == ("unknown", None, outcome)


# --- End to end: reservation -> real HTTP call -> settlement ----------------------------------

SCENARIOS = {
    "valid": (Scenario(valid_events("{}")), "settled"),
    "malformed": (Scenario([b"data: {oops\n\n", DONE]), "unknown"),
    "oversized": (Scenario(valid_events("x" * 70000, pieces=10)), "unknown"),
    "duplicate-key": (Scenario([b'data: {"id": "a", "id": "a", "choices": []}\n\n', DONE]), "unknown"),
    "truncated": (Scenario([chunk(content="{")]), "unknown"),
    "slow": (Scenario(valid_events("{}"), delay_before=5.0), "unknown"),
    "5xx": (Scenario(status=502), "unknown"),
    "usage-missing": (Scenario([chunk(content="{}"), chunk(finish="stop"), DONE]), "unknown"),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_reservation_is_settled_or_fully_charged_and_no_memory_changes(name, db, enabled, store, day_one, settings):
    scenario, state = SCENARIOS[name]
    principal, _ = make_owner()
    a = original(principal, "The owner prefers Celsius.", subject="units")
    b = original(principal, "The owner prefers Celsius readings.", subject="units")
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(a, b),
                      input_digest=input_digest(refs(a, b)), now=day_one)
    group_lease = store.claim_group(principal, lease_token=lease.lease_token, now=day_one)
    with owner_context(principal):
        memories_before = sorted(map(repr, Memory.objects.values_list()))

    with SSEServer() as server:
        settings.VEETBOT_OPENAI_BASE_URL, settings.VEETBOT_OPENAI_MODEL = server.base_url, MODEL
        settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK, settings.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = "2.5", "10"
        settings.RECON_PROVIDER_IDLE_SECONDS, settings.RECON_PROVIDER_CALL_SECONDS = 1.0, 10.0
        cfg = openai_config()
        policy = egress_policy(cfg, tenant_id=principal.tenant_id, principal_id=principal.principal_id,
                               prepared_at=day_one, residency_pin="")
        batch = build_proposal_request(groups=[simple_group()], config=cfg, policy=policy, batch_id=sid(name))
        request = batch.request
        audit = call_audit(request, group_ids=[group_lease.group_id], admitted_at=day_one)
        reservation = store.reserve(principal, group_lease, request_digest=request.digest,
                                    maximum_usd=request.maximum_usd, call_audit=audit, now=day_one)
        server.answer(scenario)
        result = OpenAIProvider(cfg, key="").complete(request)

    done = day_one + timedelta(milliseconds=result.elapsed_ms)
    settled = settlement_for(result, prepared=request, config=cfg, completed_at=done, elapsed_ms=result.elapsed_ms)
    receipt = store.settle(principal, reservation.id, outcome=settled.outcome, actual_usd=settled.actual_usd,
                           lease_token=lease.lease_token, completion=settled.completion, now=done)
    assert receipt.state == state
    if state == "settled":
        expected = (Decimal(USAGE["prompt_tokens"]) * Decimal("2.5") + Decimal(USAGE["completion_tokens"]) * 10) / 10 ** 6
        assert receipt.charged_usd == expected and receipt.released_usd == request.maximum_usd - expected
    else:
        assert receipt.charged_usd == request.maximum_usd and receipt.released_usd == 0
    with owner_context(principal):
        row = ReconsolidationSpend.objects.get(id=reservation.id)
        assert sorted(map(repr, Memory.objects.values_list())) == memories_before
    assert set(row.call_audit) == {"batch_id", "stage", "group_ids", "provider", "model", "pricing_digest",
                                   "egress_digest", "admitted_at", "completion"}
    assert (row.call_audit["provider"], row.call_audit["egress_digest"]) == ("openai", request.egress_digest)
    assert "oak" not in str(row.call_audit)  # the source text never reaches the audit
    completion = row.call_audit["completion"]
    assert set(completion) == {"completed_at", "elapsed_ms", "transport_outcome", "input_tokens", "output_tokens"}
    assert (completion["input_tokens"] is not None) is (state == "settled")

"""process_group: the driver's one call per claimed group — spend reserved and settled at
the rules price, proposals recorded pending review, outcomes durable, conflicts isolated."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured

from memory import services
from memory.domain import MemoryChanges
from reconsolidation import bounds
from reconsolidation.models import ReconsolidationAudit, ReconsolidationGroup
from reconsolidation.work.process import process_group
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, spend_of
from tests.reconsolidation.work_builders import active_members, by_kind, claimed_group, derived_rows, process
from veetbot.rls import owner_context


@pytest.fixture
def owner(db):
    return make_owner()[0]


def test_a_group_yields_a_pending_merge_a_summary_and_a_conflict_flag(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers  Celsius.", subject="units")  # whitespace only: equivalent
    c = original(owner, "The owner reads temperatures in the morning.", subject="units")
    d = original(owner, "The owner's flat is on floor 3.", subject="home")
    e = original(owner, "The owner's flat is on floor 4.", subject="home")
    ops = process(store, owner, [a, b, c, d, e], day_one)
    merges, summaries, flags = (by_kind(ops, k) for k in ("merge_equivalent", "summarize_related", "flag_conflict"))
    assert [{r.memory_id for r in op.inputs} for op in merges] == [{a.id, b.id}]
    assert [{r.memory_id for r in op.inputs} for op in summaries] == [{a.id, b.id, c.id}]
    assert [({r.memory_id for r in op.inputs}, op.reason) for op in flags] == [({d.id, e.id}, "value_difference")]
    assert {op.state for op in ops} == {"proposed"}  # reviewed mode: pending, nothing applied
    assert active_members(owner) == set() and derived_rows(owner) == []
    with owner_context(owner):
        assert ReconsolidationGroup.objects.get().state == "completed"


def test_spend_is_reserved_and_settled_verified_at_the_rules_price_with_a_content_free_audit(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    process(store, owner, [a, b], day_one)
    (row,), (day,) = spend_of(owner)
    assert (row.state, row.maximum_usd, row.settled_usd, row.charged_usd) == (
        "settled", bounds.RECON_RULES_CALL_USD, bounds.RECON_RULES_CALL_USD, bounds.RECON_RULES_CALL_USD)
    assert day.charged_usd == bounds.RECON_RULES_CALL_USD
    assert row.call_audit["provider"] == "rules" and row.call_audit["completion"]["transport_outcome"] == "completed"
    assert "Celsius" not in repr(row.call_audit)


def test_a_group_without_proposals_is_no_change_and_says_the_rules_abstain_from_hypotheses(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner walks to work.", subject="commute")
    assert process(store, owner, [a, b], day_one) == ()
    with owner_context(owner):
        group = ReconsolidationGroup.objects.get()
    assert (group.state, group.reason) == ("no_change", "rules_abstain_hypothesis")


def test_a_rules_group_that_records_proposals_still_says_it_abstained_from_hypotheses_in_every_receipt(
        owner, enabled, store, day_one):
    # Related beliefs from distinct events: a model provider could propose a connection here;
    # the rules provider never does, and its group and call receipts say so, content-free.
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers  Celsius.", subject="units")
    c = original(owner, "The owner reads temperatures in the morning.", subject="units")
    ops = process(store, owner, [a, b, c], day_one)
    assert ops and "infer_connection" not in {op.kind for op in ops}
    with owner_context(owner):
        group = ReconsolidationGroup.objects.get()
        finished = ReconsolidationAudit.objects.get(event="group_completed")
    assert (group.state, group.reason) == ("completed", "rules_abstain_hypothesis")
    assert finished.reason == "rules_abstain_hypothesis"
    (row,), _ = spend_of(owner)
    audit = row.call_audit
    assert (audit["provider"], audit["model"], audit["stage"], audit["group_ids"]) == (
        "rules", "rules@1", "proposal", [str(group.id)])
    assert (row.state, row.charged_usd) == ("settled", bounds.RECON_RULES_CALL_USD)
    completion = audit["completion"]
    assert (completion["transport_outcome"], completion["input_tokens"], completion["output_tokens"]) == (
        "completed", 0, 0)
    assert "Celsius" not in repr(audit) and "temperatures" not in repr(audit)


def test_a_group_whose_sources_changed_is_stale_and_spends_nothing(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    lease, group = claimed_group(store, owner, [a, b], day_one)
    services.memory_revise(principal=owner, memory_id=a.id, changes=MemoryChanges(confidence=0.4), now=day_one)
    assert process_group(store, owner, group, now=day_one) == ()
    with owner_context(owner):
        assert ReconsolidationGroup.objects.get().state == "stale"
    assert spend_of(owner) == ([], [])


def test_a_full_daily_budget_defers_the_group_without_failing_it(owner, enabled, store, day_one, monkeypatch):
    monkeypatch.setattr(bounds, "RECON_DAILY_BUDGET_USD", bounds.RECON_RULES_CALL_USD * 0)
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    lease, group = claimed_group(store, owner, [a, b], day_one)
    assert process_group(store, owner, group, now=day_one) == ()
    with owner_context(owner):
        row = ReconsolidationGroup.objects.get()
    assert (row.state, row.reason, row.retry_count) == ("pending", "daily_budget", 0)


def test_the_operation_budget_defers_the_rest_and_a_retry_records_each_proposal_once(owner, enabled, store, day_one, monkeypatch):
    monkeypatch.setattr(bounds, "RECON_SLICE_MAX_OPERATIONS", 1)
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    c = original(owner, "The owner reads temperatures in the morning.", subject="units")
    lease, group = claimed_group(store, owner, [a, b, c], day_one)
    first = process_group(store, owner, group, now=day_one)
    assert [op.kind for op in first] == ["merge_equivalent"]
    with owner_context(owner):
        assert ReconsolidationGroup.objects.get().reason == "operation_budget"
    store.release(owner, lease.lease_token, now=day_one)
    later = day_one + timedelta(days=1)
    lease = store.claim_due(owner, lease_owner="w2", now=later)
    again = store.claim_group(owner, lease_token=lease.lease_token, now=later)
    second = process_group(store, owner, again, now=later)
    assert [op.kind for op in second] == ["summarize_related"]  # the merge is not repeated


def test_unattended_mode_is_refused_naming_the_evidence_setting(owner, enabled, store, day_one, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_MODE = "unattended"
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    lease, group = claimed_group(store, owner, [a, b], day_one)
    with pytest.raises(ImproperlyConfigured, match="AGENT_MEMORY_RECONSOLIDATION_EVIDENCE"):
        process_group(store, owner, group, now=day_one)
    assert spend_of(owner) == ([], [])


def test_the_audit_of_a_processed_group_holds_no_source_text(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    process(store, owner, [a, b], day_one)
    with owner_context(owner):
        rows = list(ReconsolidationAudit.objects.values_list("event", "reason", "counts"))
    assert ("operation_proposed", "merge_equivalent") in {(e, r) for e, r, _ in rows}
    assert "Celsius" not in repr(rows)


def test_a_provider_crash_charges_the_full_reservation_and_counts_a_failed_attempt(owner, enabled, store, day_one,
                                                                                monkeypatch):
    from reconsolidation.providers.rules import provider as rules

    def crash(sources):
        raise RuntimeError("boom")

    monkeypatch.setattr(rules, "propose", crash)
    a, b = (original(owner, "The owner prefers Celsius.", subject="units") for _ in range(2))
    lease, group = claimed_group(store, owner, [a, b], day_one)
    assert process_group(store, owner, group, now=day_one) == ()
    (row,), _ = spend_of(owner)
    assert (row.state, row.charged_usd) == ("unknown", bounds.RECON_RULES_CALL_USD)
    with owner_context(owner):
        group_row = ReconsolidationGroup.objects.get()
    assert (group_row.state, group_row.retry_count, group_row.reason) == ("pending", 1, "provider_error")


def test_switching_processing_off_after_the_claim_defers_the_group_without_a_provider_call(owner, enabled, store,
                                                                                        day_one, settings):
    a, b = (original(owner, "The owner prefers Celsius.", subject="units") for _ in range(2))
    lease, group = claimed_group(store, owner, [a, b], day_one)
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    assert process_group(store, owner, group, now=day_one) == ()
    with owner_context(owner):
        row = ReconsolidationGroup.objects.get()
    assert (row.state, row.reason, row.retry_count) == ("pending", "disabled", 0)
    assert spend_of(owner) == ([], [])

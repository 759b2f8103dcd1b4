"""Spend reservations: prepriced maximum, Decimal on the 1e-8 quantum rounded up, both the
slice (USD 0.25) and daily (USD 2.00) ceilings, unknown settlement charging in full, a
verified lower bill releasing only the difference, and the slice's day bucket across
midnight."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from reconsolidation import bounds
from reconsolidation.domain import CallAudit, CallCompletion, input_digest
from reconsolidation.errors import BudgetExhausted, Conflict, DuplicateReservation, LeaseLost
from reconsolidation.work.spend import usd
from tests.factories import make_owner
from tests.reconsolidation.helpers import digest, original, refs, snapshot, spend_of

LEASE = timedelta(seconds=bounds.RECON_LEASE_SECONDS)


@pytest.fixture
def bank(db):
    principal, _ = make_owner()
    a = original(principal, "The owner prefers Celsius.", subject="units")
    b = original(principal, "The owner prefers Celsius readings.", subject="units")
    return principal, a, b


def claim(store, principal, a, b, now):
    lease = store.claim_due(principal, lease_owner="w", now=now)
    store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(a, b),
                      input_digest=input_digest(refs(a, b)), now=now)
    group = store.claim_group(principal, lease_token=lease.lease_token, now=now)
    if group is None:  # a later slice: the group went back to the queue when the last one ended
        raise AssertionError("no group")
    return lease, group


def next_slice(store, principal, lease, group, now, start=None):
    """End this slice at ``now`` (the group goes back to the queue) and start another."""
    store.finish_group(principal, group, outcome="deferred", now=now)
    store.release(principal, lease.lease_token, now=now)
    lease = store.claim_due(principal, lease_owner="w", now=start or now)
    return lease, store.claim_group(principal, lease_token=lease.lease_token, now=start or now)


def test_money_is_quantized_up_and_a_free_request_keeps_the_minimum_quantum(bank, enabled, store, day_one):
    assert usd("0.000000001") == Decimal("0.00000001")
    assert usd(Decimal("0.123456781")) == Decimal("0.12345679")
    principal, a, b = bank
    lease, group = claim(store, principal, a, b, day_one)
    free = store.reserve(principal, group, request_digest=digest("rules"), maximum_usd=0, now=day_one)
    assert free.maximum_usd == bounds.RECON_RULES_CALL_USD == Decimal("0.00000001")
    settled = store.settle(principal, free.id, outcome="verified", actual_usd=0, lease_token=lease.lease_token, now=day_one)
    assert (settled.state, settled.charged_usd, settled.released_usd) == ("settled", Decimal(0), Decimal("0.00000001"))


def test_each_request_must_fit_the_slice_ceiling(bank, enabled, store, day_one):
    principal, a, b = bank
    lease, group = claim(store, principal, a, b, day_one)
    with pytest.raises(BudgetExhausted, match="above_slice_ceiling"):
        store.reserve(principal, group, request_digest=digest("big"), maximum_usd="0.25000001", now=day_one)
    store.reserve(principal, group, request_digest=digest("p"), maximum_usd="0.20", now=day_one)
    before = snapshot(principal)
    with pytest.raises(BudgetExhausted, match="slice_budget"):
        store.reserve(principal, group, request_digest=digest("v"), maximum_usd="0.05000001", now=day_one)
    assert snapshot(principal) == before
    store.reserve(principal, group, request_digest=digest("v"), maximum_usd="0.05", now=day_one)


def test_the_daily_ceiling_is_shared_by_every_slice_of_the_day(bank, enabled, store, day_one):
    principal, a, b = bank
    lease, group = claim(store, principal, a, b, day_one)
    now = day_one
    for n in range(8):  # 8 slices x USD 0.25 = the USD 2.00 day
        store.reserve(principal, group, request_digest=digest(f"r{n}"), maximum_usd="0.25", now=now)
        now += timedelta(minutes=1)
        lease, group = next_slice(store, principal, lease, group, now)
    with pytest.raises(BudgetExhausted, match="daily_budget"):
        store.reserve(principal, group, request_digest=digest("r8"), maximum_usd="0.00000001", now=now)
    tomorrow = day_one + timedelta(days=1)
    lease, group = next_slice(store, principal, lease, group, now, start=tomorrow)
    assert store.reserve(principal, group, request_digest=digest("t"), maximum_usd="0.25", now=tomorrow).day == tomorrow.date()


def test_unknown_settlement_keeps_the_full_charge_and_a_lower_bill_releases_only_the_difference(bank, enabled, store, day_one):
    principal, a, b = bank
    lease, group = claim(store, principal, a, b, day_one)
    audit = CallAudit(batch_id="00000000-0000-0000-0000-000000000001", stage="proposal", group_ids=(group.group_id,),
                      provider="rules", model="rules@1", pricing_digest=digest("p"), egress_digest=digest("e"),
                      admitted_at=day_one)
    timeout = store.reserve(principal, group, request_digest=digest("t"), maximum_usd="0.10", now=day_one, call_audit=audit)
    billed = store.reserve(principal, group, request_digest=digest("b"), maximum_usd="0.10", now=day_one)
    unknown = store.settle(principal, timeout.id, outcome="unknown", lease_token=lease.lease_token, now=day_one,
                           completion=CallCompletion(completed_at=day_one, elapsed_ms=30000, transport_outcome="timeout"))
    assert (unknown.state, unknown.charged_usd, unknown.released_usd) == ("unknown", Decimal("0.10"), Decimal(0))
    lower = store.settle(principal, billed.id, outcome="verified", actual_usd="0.0312345671", lease_token=lease.lease_token,
                         now=day_one)
    assert (lower.charged_usd, lower.released_usd) == (Decimal("0.03123457"), Decimal("0.06876543"))
    assert lower.day_charged_usd == Decimal("0.13123457")
    too_high = store.reserve(principal, group, request_digest=digest("h"), maximum_usd="0.01", now=day_one)
    assert store.settle(principal, too_high.id, outcome="verified", actual_usd="0.02", lease_token=lease.lease_token,
                        now=day_one).state == "unknown"  # an impossible bill never lowers the charge
    rows, (ledger,) = spend_of(principal)
    audited = next(row for row in rows if row.id == timeout.id)
    assert audited.call_audit["completion"]["transport_outcome"] == "timeout"
    assert set(audited.call_audit) == {"batch_id", "stage", "group_ids", "provider", "model", "pricing_digest",
                                       "egress_digest", "admitted_at", "completion"}  # closed: no prose fits
    assert ledger.charged_usd == sum(row.charged_usd for row in rows)


def test_settlement_replays_the_same_receipt_and_refuses_a_different_one(bank, enabled, store, day_one):
    principal, a, b = bank
    lease, group = claim(store, principal, a, b, day_one)
    r = store.reserve(principal, group, request_digest=digest("r"), maximum_usd="0.10", now=day_one)
    first = store.settle(principal, r.id, outcome="verified", actual_usd="0.04", lease_token=lease.lease_token, now=day_one)
    again = store.settle(principal, r.id, outcome="verified", actual_usd="0.04", lease_token=lease.lease_token, now=day_one)
    assert again.charged_usd == first.charged_usd and again.day_charged_usd == first.day_charged_usd
    with pytest.raises(Conflict, match="already_settled"):
        store.settle(principal, r.id, outcome="unknown", lease_token=lease.lease_token, now=day_one)
    with pytest.raises(DuplicateReservation):
        store.reserve(principal, group, request_digest=digest("r"), maximum_usd="0.10", now=day_one)


def test_a_crashed_slice_leaves_its_reservations_charged_in_full_as_unknown(bank, enabled, store, day_one):
    principal, a, b = bank
    lease, group = claim(store, principal, a, b, day_one)
    r = store.reserve(principal, group, request_digest=digest("r"), maximum_usd="0.10", now=day_one)
    later = day_one + LEASE + timedelta(seconds=1)
    store.claim_due(principal, lease_owner="w2", now=later)
    with pytest.raises(LeaseLost):
        store.settle(principal, r.id, outcome="verified", actual_usd="0.01", lease_token=lease.lease_token, now=later)
    (row,), (ledger,) = spend_of(principal)
    assert (row.state, row.charged_usd, ledger.charged_usd) == ("unknown", Decimal("0.10"), Decimal("0.10"))


def test_a_slice_started_before_midnight_keeps_its_day_bucket(bank, enabled, store):
    principal, a, b = bank
    start = datetime(2026, 9, 3, 23, 59, 59, tzinfo=timezone.utc)
    lease, group = claim(store, principal, a, b, start)
    assert lease.spend_day.isoformat() == "2026-09-03"
    after_midnight = start + timedelta(seconds=6)
    store.reserve(principal, group, request_digest=digest("p"), maximum_usd="0.20", now=start)
    late = store.reserve(principal, group, request_digest=digest("v"), maximum_usd="0.05", now=after_midnight)
    assert late.day.isoformat() == "2026-09-03" and late.day_charged_usd == Decimal("0.25")
    with pytest.raises(BudgetExhausted, match="slice_budget"):  # no borrowing from the new day
        store.reserve(principal, group, request_digest=digest("x"), maximum_usd="0.01", now=after_midnight)
    rows, ledgers = spend_of(principal)
    assert {row.day.isoformat() for row in rows} == {"2026-09-03"} and len(ledgers) == 1


def test_no_reservation_after_the_slice_deadline(bank, enabled, store, day_one):
    principal, a, b = bank
    lease, group = claim(store, principal, a, b, day_one)
    with pytest.raises(BudgetExhausted, match="slice_deadline"):
        store.reserve(principal, group, request_digest=digest("late"), maximum_usd="0.01", now=lease.slice_deadline_at)

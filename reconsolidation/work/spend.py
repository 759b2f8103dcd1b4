"""Spend: durable reservations before any provider call, settlement after it.

* Money is ``Decimal`` USD on a 1e-8 quantum, always rounded *up*; a free request still
  reserves the minimum positive quantum so the protocol is always exercised.
* Every reservation locks the owner's dreaming row of the day in the owner's spend ledger
  (``memory.services.spend``), so concurrent workers, retries and slices of one owner
  serialize there and see each other's charges; a request must fit both the slice and the
  daily ceiling (``reserve``). The day is the UTC day the *slice started*, never the
  caller's clock, so a slice cannot borrow from the next day.
* Settlement fails safe: ``unknown`` keeps the full reservation; a verified lower bill
  releases only the difference (``settle``).
* Lease-bound: reserve and settle need the slice's live lease token. The kill switch
  stops reservations (provider admission) but never settlement.

No provider call happens inside these transactions; the call audit and the stage
decisions (``stage_decision``) hold no prompt, response, source text, error message or
credential.
"""
from __future__ import annotations

import re
from datetime import datetime
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from typing import Optional, Sequence
from uuid import UUID

from django.db.models import Sum

from memory.services.spend import DailyCeilingReached, spend_day_locked, spend_release, spend_reserve
from reconsolidation import bounds
from reconsolidation.domain import CallAudit, CallCompletion, GroupLease, Reservation, SpendReceipt
from reconsolidation.errors import BudgetExhausted, Conflict, DuplicateReservation, Invalid, LeaseLost, NotFound
from reconsolidation.leases import require_enabled
from reconsolidation.models import ReconsolidationSpend
from reconsolidation.rows import audit, locked_group, locked_job, owner_fields
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context

_DIGEST = re.compile(r"^[0-9a-f]{64}$")
SPEND_PURPOSE = "dreaming"  # dreaming's own daily ceiling in the owner's spend ledger
STAGES = ("proposal", "verification", "review")
STAGE_DECISIONS = ("prepared", "deferred", "invalid_response", "reviewed")
# Counts a stage decision may carry, each at most one batch's worth.
STAGE_COUNTS = {"groups": bounds.RECON_SLICE_MAX_GROUPS, "groups_dropped": bounds.RECON_SLICE_MAX_GROUPS,
                "members_left_out": bounds.RECON_SLICE_MAX_GROUPS * bounds.RECON_GROUP_MAX_MEMBERS,
                "candidates": bounds.RECON_SLICE_MAX_OPERATIONS, "accepted": bounds.RECON_SLICE_MAX_OPERATIONS,
                "rejected": bounds.RECON_SLICE_MAX_OPERATIONS}


def usd(value) -> Decimal:
    """A non-negative amount on the money quantum, rounded up."""
    try:
        amount = Decimal(str(value)) if not isinstance(value, Decimal) else value
    except InvalidOperation:
        raise Invalid("amount: not a number")
    if not amount.is_finite() or amount < 0:
        raise Invalid("amount: must be a finite, non-negative USD amount")
    return amount.quantize(bounds.RECON_MONEY_QUANTUM_USD, rounding=ROUND_CEILING)


def reserve(
    principal: Principal, group_lease: GroupLease, *, request_digest: str, maximum_usd, now: datetime,
    call_audit: Optional[CallAudit] = None, batch: Sequence[GroupLease] = (),
) -> Reservation:
    """Persist a reservation of the request's maximum cost, or refuse (nothing written).

    Under the lock of the owner's ``dreaming`` ledger row of the UTC day the slice started
    (read from the job row: a slice that began at 23:59:59 keeps charging that day after
    midnight), the maximum must fit both ``RECON_SLICE_BUDGET_USD`` and
    ``RECON_DAILY_BUDGET_USD``; otherwise ``BudgetExhausted`` defers the group.

    ``batch`` names the other groups one batched request offers beside ``group_lease``
    (whose ID the row carries; the call audit lists them all): each must still be claimed
    under the same lease, or nothing is reserved.
    """
    require_enabled()
    now = require_aware(now)
    if not _DIGEST.match(request_digest or ""):
        raise Invalid("request_digest: a SHA-256 hex digest")
    maximum = max(usd(maximum_usd), bounds.RECON_MONEY_QUANTUM_USD)
    with owner_context(principal):
        job = locked_job(principal, group_lease.lease_token, now)
        claimed_by_id = {lease.group_id: lease for lease in (group_lease, *batch)}
        for _, claimed in sorted(claimed_by_id.items(), key=lambda item: str(item[0])):
            if claimed.lease_token != group_lease.lease_token:
                raise LeaseLost("not_this_slice")
            locked_group(claimed)
        started = job.slice_started_at
        if (now - started).total_seconds() >= bounds.RECON_SLICE_DEADLINE_SECONDS:
            raise BudgetExhausted("slice_deadline")
        day = started.date()
        spend_day_locked(principal=principal, purpose=SPEND_PURPOSE, day=day, now=now)
        if ReconsolidationSpend.objects.filter(slice_token=job.lease_token, request_digest=request_digest).exists():
            raise DuplicateReservation()
        if maximum > bounds.RECON_SLICE_BUDGET_USD:
            raise BudgetExhausted("above_slice_ceiling")
        slice_charged = ReconsolidationSpend.objects.filter(slice_token=job.lease_token).aggregate(
            total=Sum("charged_usd"))["total"] or Decimal(0)
        if slice_charged + maximum > bounds.RECON_SLICE_BUDGET_USD:
            raise BudgetExhausted("slice_budget")
        try:
            day_charged = spend_reserve(principal=principal, purpose=SPEND_PURPOSE, day=day, usd=maximum,
                                        ceiling=bounds.RECON_DAILY_BUDGET_USD, now=now)
        except DailyCeilingReached:
            raise BudgetExhausted("daily_budget")
        row = ReconsolidationSpend.objects.create(
            **owner_fields(principal), job_id=job.id, group_id=group_lease.group_id, slice_token=job.lease_token,
            day=day, request_digest=request_digest, maximum_usd=maximum, charged_usd=maximum, state="reserved",
            call_audit=call_audit.model_dump(mode="json") if call_audit is not None else None, reserved_at=now,
        )
        return Reservation(
            **owner_fields(principal), id=row.id, job_id=job.id, group_id=row.group_id, slice_token=row.slice_token,
            day=day, request_digest=request_digest, maximum_usd=maximum, state=row.state, reserved_at=now,
            slice_charged_usd=slice_charged + maximum, day_charged_usd=day_charged,
        )


def _receipt(principal: Principal, row: ReconsolidationSpend, released: Decimal, day_total: Decimal) -> SpendReceipt:
    return SpendReceipt(
        **owner_fields(principal), reservation_id=row.id, day=row.day, state=row.state, maximum_usd=row.maximum_usd,
        settled_usd=row.settled_usd, charged_usd=row.charged_usd, released_usd=released, day_charged_usd=day_total,
    )


def settle(
    principal: Principal, reservation_id: UUID, *, outcome: str, actual_usd=None, lease_token: UUID, now: datetime,
    completion: Optional[CallCompletion] = None,
) -> SpendReceipt:
    """Settle one reservation of the caller's live slice.

    ``unknown`` (timeout, crash, missing or inconsistent usage) keeps the full reservation; a
    verified lower bill releases only the difference. Replaying the same settlement answers the
    same receipt; a different one is a conflict. The kill switch never stops a settlement.
    """
    now = require_aware(now)
    if outcome not in ("verified", "unknown"):
        raise Invalid("outcome: verified or unknown")
    actual = usd(actual_usd) if actual_usd is not None else None
    with owner_context(principal):
        locked_job(principal, lease_token, now)
        found = ReconsolidationSpend.objects.filter(id=reservation_id).values_list("day", "slice_token").first()
        if found is None:
            raise NotFound("reservation")
        day, slice_token = found
        if slice_token != lease_token:
            raise LeaseLost("not_this_slice")
        ledger = spend_day_locked(principal=principal, purpose=SPEND_PURPOSE, day=day, now=now)
        row = ReconsolidationSpend.objects.select_for_update().get(id=reservation_id)
        # Unknown, missing or impossible usage never lowers the charge.
        verified = outcome == "verified" and actual is not None and actual <= row.maximum_usd
        state, charge = ("settled", actual) if verified else ("unknown", row.maximum_usd)
        if row.state != "reserved":
            if row.state == state and row.charged_usd == charge:
                return _receipt(principal, row, row.maximum_usd - row.charged_usd, ledger.charged_usd)
            raise Conflict("already_settled")
        released = row.maximum_usd - charge
        row.state = state
        row.settled_usd = charge if verified else None
        row.charged_usd = charge
        row.settled_at = now
        if row.call_audit is not None and completion is not None:
            row.call_audit = {**row.call_audit, "completion": completion.model_dump(mode="json")}
        row.save(update_fields=["state", "settled_usd", "charged_usd", "settled_at", "call_audit"])
        day_charged = spend_release(principal=principal, purpose=SPEND_PURPOSE, day=day, usd=released, now=now)
        return _receipt(principal, row, released, day_charged)


def members_left_out(principal: Principal, *, lease_token: UUID, left_out: Sequence, now: datetime) -> None:
    """Record, per group and reason, how many of its members a sent request left out
    (content-free audit rows ``member_left_out``: the group's ID, a reason code, a count)."""
    now = require_aware(now)
    tally: dict[tuple[UUID, str], int] = {}
    for out in left_out:
        tally[(out.group_id, out.reason)] = tally.get((out.group_id, out.reason), 0) + 1
    with owner_context(principal):
        job = locked_job(principal, lease_token, now)
        for (group_id, reason), members in sorted(tally.items(), key=lambda item: (str(item[0][0]), item[0][1])):
            audit(principal, "member_left_out", now, reason=reason, job_id=job.id, group_id=group_id,
                  counts={"members": members})


def stage_decision(principal: Principal, *, lease_token: UUID, stage: str, decision: str, reason: str = "",
                   counts: Optional[dict] = None, now: datetime) -> None:
    """Record one batch stage's decision (content-free audit row ``batch_<stage>_<decision>``).

    Beside the call audit, each batch stage records one immutable decision: the stage, what
    was decided (``prepared``, ``deferred``, ``invalid_response``, ``reviewed``), a finite
    reason code and bounded group/candidate counts — under the slice's live lease, never a
    verdict on its own.
    """
    now = require_aware(now)
    counts = dict(counts or {})
    if stage not in STAGES or decision not in STAGE_DECISIONS:
        raise Invalid("stage decision: a known stage and decision")
    if not re.match(r"^[a-z0-9_]*$", reason):
        raise Invalid("reason: a short reason code")
    if any(name not in STAGE_COUNTS or not 0 <= value <= STAGE_COUNTS[name] for name, value in counts.items()):
        raise Invalid("counts: bounded group and candidate counts of one batch")
    with owner_context(principal):
        job = locked_job(principal, lease_token, now)
        audit(principal, f"batch_{stage}_{decision}", now, reason=reason, job_id=job.id, counts=counts)

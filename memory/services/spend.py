"""The owner's daily spend ledger: one row per owner, purpose and UTC day (``SpendDay``).

A paid request reserves its maximum price here *before* it is sent, and is lowered to the
verified bill after it; an unknown bill keeps the reservation. The day row is locked
(``FOR UPDATE``) by every reservation of that owner and purpose, so concurrent workers,
retries and requests serialize there and see each other's charges. Both paid callers go
through it: the remote encoder (``recall.egress``, purpose ``encoder``) and dreaming's model
requests (``reconsolidation.work.spend``, purpose ``dreaming``), each against its own daily
ceiling.

Call inside the owner's context, in the caller's transaction: the reservation and the
caller's own record of it commit together. Amounts only; no text ever reaches this table.
"""
from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from uuid import uuid4

from django.db import connection

from memory.models import SPEND_PURPOSES, SpendDay
from veetbot.identity import Principal


class DailyCeilingReached(Exception):
    """Reserving this amount would take the day past its ceiling; nothing was charged."""


def spend_day_locked(*, principal: Principal, purpose: str, day: date, now: datetime) -> SpendDay:
    """The owner's ledger row for ``purpose`` on ``day``, created if absent, locked."""
    if purpose not in SPEND_PURPOSES:
        raise ValueError(f"purpose must be one of {', '.join(SPEND_PURPOSES)}")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_spendday (id, tenant_id, principal_id, purpose, day, charged_usd, reservations,"
            " updated_at) VALUES (%s, %s, %s, %s, %s, 0, 0, %s)"
            " ON CONFLICT (tenant_id, principal_id, purpose, day) DO NOTHING",
            [uuid4(), principal.tenant_id, principal.principal_id, purpose, day, now],
        )
    return SpendDay.objects.select_for_update().get(purpose=purpose, day=day)


def spend_reserve(*, principal: Principal, purpose: str, day: date, usd: Decimal, ceiling: Decimal,
                  now: datetime) -> Decimal:
    """Charge ``usd`` to the day, or raise ``DailyCeilingReached`` (nothing charged).
    Returns the day's total after the charge."""
    row = spend_day_locked(principal=principal, purpose=purpose, day=day, now=now)
    if row.charged_usd + usd > ceiling:
        raise DailyCeilingReached()
    row.charged_usd += usd
    row.reservations += 1
    row.updated_at = now
    row.save(update_fields=["charged_usd", "reservations", "updated_at"])
    return row.charged_usd


def spend_release(*, principal: Principal, purpose: str, day: date, usd: Decimal, now: datetime) -> Decimal:
    """Give back ``usd`` of an earlier reservation (a bill below its maximum). Returns the
    day's total after the release."""
    row = spend_day_locked(principal=principal, purpose=purpose, day=day, now=now)
    if usd > 0:
        row.charged_usd -= usd
        row.updated_at = now
        row.save(update_fields=["charged_usd", "updated_at"])
    return row.charged_usd

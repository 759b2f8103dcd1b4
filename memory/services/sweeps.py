"""The maintenance sweeps: expiry and daily utility decay, per owner and across owners.

Both are idempotent for a given ``now``, so a missed or repeated beat run is harmless.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Optional

from django.conf import settings

from memory.models import Memory, OwnerLock
from memory.services.originals import apply_content_change
from memory.services.owner_state import lock_owner
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context, staff_context


def memories_expire_due(*, principal: Principal, now: Optional[datetime] = None) -> int:
    """Active beliefs whose expires_at has passed become expired (a content change)."""
    now = now or utcnow()
    with owner_context(principal):
        lock_owner(principal)
        rows = Memory.objects.select_for_update().filter(
            status="active", erased_at__isnull=True, expires_at__lte=now,
        ).order_by("creation_sequence")
        return sum(apply_content_change(principal, row, {"status": "expired"}, now, kind="expired") for row in rows)


def memories_decay_due(*, principal: Principal, now: Optional[datetime] = None) -> tuple[int, int]:
    """Daily decay: unused non-USER beliefs lose utility; below the floor they retire.

    Lowering utility is usage-only (no revision, position kept); retirement is a status
    change (revision, new position, journal). Returns (decayed, retired).
    """
    now = now or utcnow()
    unused_since = now - timedelta(days=settings.MEMORY_DECAY_UNUSED_DAYS)
    day_ago = now - timedelta(days=1)
    decayed = retired = 0
    with owner_context(principal):
        lock_owner(principal)
        rows = Memory.objects.select_for_update().filter(status="active", erased_at__isnull=True).exclude(authority="USER")
        for row in rows.order_by("creation_sequence"):
            last_use = row.last_used_at or row.created_at
            if last_use > unused_since or (row.decayed_at and row.decayed_at > day_ago):
                continue
            row.utility = row.utility * settings.MEMORY_DECAY_FACTOR
            row.decayed_at = now
            row.save(update_fields=["utility", "decayed_at"])
            decayed += 1
            if row.utility < settings.MEMORY_DECAY_FLOOR:
                retired += apply_content_change(principal, row, {"status": "expired"}, now, kind="expired")
    return decayed, retired


def owners() -> list[Principal]:
    """Every owner with a bank, read from the content-free owner-lock table."""
    with staff_context():
        pairs = list(OwnerLock.objects.values_list("tenant_id", "principal_id").order_by("tenant_id", "principal_id"))
    return [Principal(tenant_id=t, principal_id=p) for t, p in pairs]


def expire_due_all(now: Optional[datetime] = None) -> int:
    return sum(memories_expire_due(principal=p, now=now) for p in owners())


def decay_due_all(now: Optional[datetime] = None) -> tuple[int, int]:
    totals = [memories_decay_due(principal=p, now=now) for p in owners()]
    return sum(t[0] for t in totals), sum(t[1] for t in totals)

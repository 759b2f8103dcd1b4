"""The owner's pause of dreaming: durable (one row per owner), audited without content
(``dreaming_paused`` / ``dreaming_resumed``), honoured by every worker through the lease
(``pipeline.leases``: no claim while paused, and a running slice loses its lease at its next
renewal). Pausing a paused owner, or resuming a running one, changes nothing and records
nothing. History, review, undo and erasure keep working while paused.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional

from pydantic import AwareDatetime, BaseModel, ConfigDict

from memory.services.owner_state import lock_owner
from reconsolidation.models import DreamingPause
from reconsolidation.rows import audit
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context


class PauseState(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    paused: bool
    changed_at: Optional[AwareDatetime]  # None: never paused


def is_paused(principal: Principal) -> bool:
    """Call inside the owner's context (the lease functions do)."""
    return DreamingPause.objects.filter(paused=True).exists()


def state(principal: Principal) -> PauseState:
    with owner_context(principal):
        row = DreamingPause.objects.first()
        return PauseState(paused=bool(row and row.paused), changed_at=row.changed_at if row else None)


def set_paused(principal: Principal, paused: bool, *, now: Optional[datetime] = None) -> PauseState:
    now = require_aware(now) if now is not None else utcnow()
    with owner_context(principal):
        lock_owner(principal)
        row = DreamingPause.objects.select_for_update().first()
        if row is None:
            if not paused:
                return PauseState(paused=False, changed_at=None)
            row = DreamingPause.objects.create(tenant_id=principal.tenant_id, principal_id=principal.principal_id,
                                               paused=True, changed_at=now)
        elif row.paused == paused:
            return PauseState(paused=row.paused, changed_at=row.changed_at)
        else:
            row.paused, row.changed_at, row.revision = paused, now, row.revision + 1
            row.save(update_fields=["paused", "changed_at", "revision"])
        audit(principal, "dreaming_paused" if paused else "dreaming_resumed", now)
        return PauseState(paused=row.paused, changed_at=row.changed_at)

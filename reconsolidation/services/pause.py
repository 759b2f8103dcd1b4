"""The owner's pause of dreaming: durable (one row per owner), audited without content
(``dreaming_paused`` / ``dreaming_resumed``), honoured by every worker through the lease
(``leases``: no claim while paused, and a running slice loses its lease at its next
renewal). Pausing a paused owner, or resuming a running one, changes nothing and records
nothing. History, review, undo and erasure keep working while paused.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional

from memory.services.owner_state import lock_owner
from reconsolidation.models import DreamingPause
from reconsolidation.rows import audit
from reconsolidation.selectors.pause import PauseState
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context


def dreaming_pause_set(*, principal: Principal, paused: bool, now: Optional[datetime] = None) -> PauseState:
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

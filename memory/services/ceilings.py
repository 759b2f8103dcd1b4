"""Owner writes that first prove their target is visible under the caller's ceiling.

An API caller reading at ``internal`` must not be able to confirm (or change) a
``restricted`` belief by reviewing or erasing its ID: above the ceiling is not_found,
exactly like foreign or unknown, and nothing is written. The visibility check and the
write share one transaction under the owner lock, so the answer cannot go stale between
them.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional
from uuid import UUID

from memory import selectors
from memory.domain import MemoryChanges, MemoryView
from memory.services.erasure import memory_erase
from memory.services.originals import memory_review, memory_revise
from memory.services.owner_state import lock_owner
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context


def memory_review_within_ceiling(
    *, principal: Principal, memory_id: UUID, action: str, ceiling: str, now: Optional[datetime] = None,
) -> MemoryView:
    with owner_context(principal):
        lock_owner(principal)
        selectors.memory_get(memory_id=memory_id, ceiling=ceiling)
        return memory_review(principal=principal, memory_id=memory_id, action=action, now=now)


def memory_erase_within_ceiling(
    *, principal: Principal, memory_id: UUID, ceiling: str, now: Optional[datetime] = None,
) -> None:
    with owner_context(principal):
        lock_owner(principal)
        selectors.memory_get(memory_id=memory_id, ceiling=ceiling)
        memory_erase(principal=principal, memory_id=memory_id, now=now)


def memory_end_within_ceiling(
    *, principal: Principal, memory_id: UUID, ceiling: str, expected_revision: int, now: Optional[datetime] = None,
) -> MemoryView:
    """"No longer true": the belief was true and stops being true now. Unlike "not true" it
    blocks nothing and keeps its history: one new revision that ends its validity (its
    expiry), checked against the revision the owner saw, under the owner lock."""
    now = require_aware(now) if now is not None else utcnow()
    with owner_context(principal):
        lock_owner(principal)
        selectors.memory_get(memory_id=memory_id, ceiling=ceiling)
        return memory_revise(principal=principal, memory_id=memory_id, changes=MemoryChanges(expires_at=now),
                             expected_revision=expected_revision, now=now)

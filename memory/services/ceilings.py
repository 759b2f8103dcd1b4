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
from memory.domain import MemoryView
from memory.services.erasure import memory_erase
from memory.services.originals import memory_review
from memory.services.owner_state import lock_owner
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

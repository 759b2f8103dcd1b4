"""The derived-memory surface that /v1/memories calls through ``memory.api.derived_hook``:
a thin adapter over the governed service ``reconsolidation.owner.derived``."""
from __future__ import annotations

from typing import Optional
from uuid import UUID

from memory.api import derived_hook
from reconsolidation.owner import derived
from veetbot.identity import Principal


class Surface:
    def is_derived(self, principal: Principal, memory_id: UUID) -> bool:
        return derived.is_derived(principal, memory_id)

    def get(self, principal: Principal, memory_id: UUID, *, ceiling: str) -> derived.DerivedView:
        return derived.derived_get(principal, memory_id, ceiling=ceiling)

    def review(self, principal: Principal, memory_id: UUID, *, action: str, ceiling: str, idempotency_key: str,
               request_sha256: str) -> derived.DerivedView:
        return derived.derived_review(principal, memory_id, action=action, ceiling=ceiling,
                                      idempotency_key=idempotency_key, request_sha256=request_sha256)

    def delete(self, principal: Principal, memory_id: UUID, *, ceiling: str, idempotency_key: str,
               request_sha256: str) -> None:
        derived.derived_delete(principal, memory_id, ceiling=ceiling, idempotency_key=idempotency_key,
                               request_sha256=request_sha256)

    def browse(self, principal: Principal, *, ceiling: str, limit: int, after: Optional[tuple[int, UUID]],
               belief_type: Optional[str], scope: Optional[str]) -> list[tuple[int, derived.DerivedView]]:
        return derived.derived_browse(principal, ceiling=ceiling, limit=limit, after=after,
                                      belief_type=belief_type, scope=scope)


derived_hook.register(Surface())

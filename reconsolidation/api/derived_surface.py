"""The derived-memory surface that /v1/memories calls through ``memory.api.derived_hook``:
a thin adapter over reconsolidation's derived selectors and services."""
from __future__ import annotations

from typing import Optional
from uuid import UUID

from memory.api import derived_hook
from reconsolidation.selectors.derived import DerivedView, derived_browse, derived_get, is_derived
from reconsolidation.services.derived import derived_delete, derived_review
from veetbot.identity import Principal


class Surface:
    def is_derived(self, principal: Principal, memory_id: UUID) -> bool:
        return is_derived(principal=principal, memory_id=memory_id)

    def get(self, principal: Principal, memory_id: UUID, *, ceiling: str) -> DerivedView:
        return derived_get(principal=principal, derived_id=memory_id, ceiling=ceiling)

    def review(self, principal: Principal, memory_id: UUID, *, action: str, ceiling: str, idempotency_key: str,
               request_sha256: str) -> DerivedView:
        return derived_review(principal=principal, derived_id=memory_id, action=action, ceiling=ceiling,
                              idempotency_key=idempotency_key, request_sha256=request_sha256)

    def delete(self, principal: Principal, memory_id: UUID, *, ceiling: str, idempotency_key: str,
               request_sha256: str) -> None:
        derived_delete(principal=principal, derived_id=memory_id, ceiling=ceiling, idempotency_key=idempotency_key,
                       request_sha256=request_sha256)

    def browse(self, principal: Principal, *, ceiling: str, limit: int, after: Optional[tuple[int, UUID]],
               belief_type: Optional[str], scope: Optional[str]) -> list[tuple[int, DerivedView]]:
        return derived_browse(principal=principal, ceiling=ceiling, limit=limit, after=after,
                              belief_type=belief_type, scope=scope)


derived_hook.register(Surface())

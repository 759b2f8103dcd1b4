"""Extension point: derived memories (summaries, hypotheses) on /v1/memories.

``memory`` knows nothing of reconsolidation; reconsolidation registers a
``DerivedSurface`` when its API package loads (``reconsolidation.api.derived_surface``,
imported by the URL map before any request is served). The memory views ask
``available()`` per request: with AGENT_MEMORY_RECONSOLIDATION_API_ENABLED off (or
nothing registered) derived lookup is unavailable — derived IDs stay not_found exactly
as before — and ``include_derived=true`` is refused as malformed.

The wire shape of derived rows is ``memory.api.serializers.DerivedMemorySerializer``;
the surface returns values with exactly those fields.
"""
from __future__ import annotations

from typing import Any, Optional, Protocol
from uuid import UUID

from django.conf import settings

from veetbot.identity import Principal


class DerivedSurface(Protocol):
    def is_derived(self, principal: Principal, memory_id: UUID) -> bool: ...

    def get(self, principal: Principal, memory_id: UUID, *, ceiling: str) -> Any: ...

    def review(self, principal: Principal, memory_id: UUID, *, action: str, ceiling: str, idempotency_key: str,
               request_sha256: str) -> Any: ...

    def delete(self, principal: Principal, memory_id: UUID, *, ceiling: str, idempotency_key: str,
               request_sha256: str) -> None: ...

    def browse(self, principal: Principal, *, ceiling: str, limit: int, after: Optional[tuple[int, UUID]],
               belief_type: Optional[str], scope: Optional[str]) -> list[tuple[int, Any]]: ...


_registered: Optional[DerivedSurface] = None


def register(surface: DerivedSurface) -> None:
    global _registered
    _registered = surface


def available() -> Optional[DerivedSurface]:
    if not settings.AGENT_MEMORY_RECONSOLIDATION_API_ENABLED:
        return None
    return _registered

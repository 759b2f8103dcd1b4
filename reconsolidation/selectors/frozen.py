"""What became of the derived items and merge sets a conversation froze (``recall.snapshots``
asks through ``recall.hooks.DerivedPort.states``).

A frozen derived item no longer holds when its projection was erased, retired by the owner
("not true": retracted), invalidated or its operation left ``committed``, it expired, or any
support is no longer available at its recorded revision under the conversation's ceiling —
checked here and now (``operation_views.available_support``), never waiting for the sweep.
A projection restricted to its own scope, or above the ceiling, is withdrawn. A belief that
represented a merge set reports the set undone or invalidated; the original itself is judged
by recall. Read-only, inside the caller's owner context; never returns text.
"""
from __future__ import annotations

from datetime import datetime
from typing import Sequence
from uuid import UUID

from memory import vocabulary
from recall.hooks import FrozenRef, FrozenState
from reconsolidation.models import DerivedMemory, ReconsolidationOperation
from reconsolidation.selectors.operation_views import available_support
from veetbot.identity import Principal
from veetbot.rls import owner_context


def _ended(operation: ReconsolidationOperation) -> FrozenState:
    if operation.state == "undone":
        return FrozenState(reason="undone", at=operation.undone_at)
    return FrozenState(reason="invalidated", at=operation.invalidated_at or operation.updated_at)


def _derived_state(row, operation, *, ceiling: str, scope: str, now: datetime):
    if row is None or row.erased_at is not None or row.status == "erased":
        return FrozenState(reason="erased", at=row.erased_at if row is not None else None)
    if row.retired_at is not None:
        return FrozenState(reason="retracted", at=row.retired_at)
    if operation is None or operation.state != "committed" or row.status != "active":
        return _ended(operation) if operation is not None else FrozenState(reason="invalidated", at=None)
    if row.expires_at is not None and row.expires_at <= now:
        return FrozenState(reason="expired", at=row.expires_at)
    if available_support(operation, ceiling, now) is None:
        return FrozenState(reason="invalidated", at=None)
    visible_here = row.scope == scope or (scope != "user" and row.scope == "user" and row.portable
                                          and row.restricted_at is None)
    if not vocabulary.sensitivity_within(row.sensitivity, ceiling) or not visible_here:
        return FrozenState(reason="withdrawn", at=None)
    return None


def frozen_states(*, principal: Principal, refs: Sequence[FrozenRef], ceiling: str, scope: str, now: datetime
                  ) -> dict[UUID, FrozenState]:
    """The refs that no longer hold, by ID (one read of each table, in the owner's context)."""
    with owner_context(principal):
        return _states(refs, ceiling=ceiling, scope=scope, now=now)


def _states(refs: Sequence[FrozenRef], *, ceiling: str, scope: str, now: datetime) -> dict[UUID, FrozenState]:
    operations = {o.id: o for o in ReconsolidationOperation.objects.filter(id__in=[r.operation_id for r in refs])}
    derived = {d.id: d for d in DerivedMemory.objects.filter(id__in=[r.id for r in refs if r.record_kind != "belief"])}
    found: dict[UUID, FrozenState] = {}
    for ref in refs:
        operation = operations.get(ref.operation_id)
        if ref.record_kind == "belief":
            state = _ended(operation) if operation is not None and operation.state != "committed" else None
        else:
            state = _derived_state(derived.get(ref.id), operation, ceiling=ceiling, scope=scope, now=now)
        if state is not None:
            found[ref.id] = state
    return found

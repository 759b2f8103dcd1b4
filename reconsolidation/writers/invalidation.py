"""Reverse invalidation: a source change ends everything derived from it, at once.

Registered with ``memory.hooks`` when the app loads. Every correction (``revised``: the
statement, subject, attribution, sensitivity, scope, validity, ... — any content
revision), retraction, expiry and erasure of an original publishes a ``ContentChange``
inside the change's own transaction; this listener runs ``operations.invalidate`` in that
same transaction: proposed operations become stale, committed ones invalidated, active
memberships end, derived projections are purged (clauses and subject emptied; erased for
an erasure) and pending groups over the source become stale. If the change rolls back,
so does the invalidation. It never checks the processing switch: with processing off,
corrections and erasure still reach every derived copy. Creations invalidate nothing.
"""
from __future__ import annotations

from memory import hooks
from reconsolidation.writers import operations
from veetbot.clock import utcnow

INVALIDATING = ("revised", "retracted", "expired", "erased")


@hooks.register
def invalidate_dependents(change: hooks.ContentChange) -> None:
    if change.kind in INVALIDATING:
        operations.invalidate(change.principal, change.memory_ids, reason=change.kind, now=utcnow())

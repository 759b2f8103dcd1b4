"""Erasure of what conversations keep: the generated-copy fence and a conversation's erasure.

* ``snapshot_withhold``: a frozen prefix is a generated copy of what it rendered. When an
  original it rendered, an original a rendered derived item was built from, or a rendered
  derived item itself is erased, the prefix text is emptied in the erasure's own transaction
  (``withheld_at``): the erased words can never again enter model input through it, and a
  full dump holds none of them. The content-free references stay, so later turns still name
  the erased item by its citation. Registered with ``memory.hooks`` for originals;
  reconsolidation calls it when the owner deletes a derived item.
* ``snapshot_erase``: erasing a conversation (or the account) deletes its snapshot, its turns,
  its citation reports and the recall traces its assemblies wrote (``memory.hooks``'
  ``SessionsErased``), in that erasure's transaction.
"""
from __future__ import annotations

from datetime import datetime
from typing import Iterable
from uuid import UUID

from memory import hooks
from recall.models import CitationReport, ContextSnapshot, ContextTurn, RecallTrace
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context


def snapshot_withhold(*, principal: Principal, copied_ids: Iterable[UUID], now: datetime) -> int:
    """Empty every prefix that copied any of ``copied_ids``; how many were withheld."""
    ids = list(copied_ids)
    with owner_context(principal):
        return ContextSnapshot.objects.filter(frozen_ids__overlap=ids, withheld_at__isnull=True).update(
            prefix="", withheld_at=now)


def snapshot_erase(*, principal: Principal, session_ids: Iterable[UUID]) -> int:
    """Delete the snapshots of these conversations with everything they recorded."""
    with owner_context(principal):
        snapshots = list(ContextSnapshot.objects.filter(session_id__in=list(session_ids)))
        if not snapshots:
            return 0
        turns = list(ContextTurn.objects.filter(snapshot_id__in=[s.id for s in snapshots]))
        traces = {t for row in (*snapshots, *turns) for t in row.trace_ids}
        CitationReport.objects.filter(turn_id__in=[t.id for t in turns]).delete()
        ContextTurn.objects.filter(id__in=[t.id for t in turns]).delete()
        RecallTrace.objects.filter(id__in=list(traces)).delete()
        return ContextSnapshot.objects.filter(id__in=[s.id for s in snapshots]).delete()[0]


@hooks.register
def withhold_erased_copies(change: hooks.ContentChange) -> None:
    if change.kind == "erased":
        snapshot_withhold(principal=change.principal, copied_ids=change.memory_ids, now=utcnow())


@hooks.register_session_erasure
def erase_conversation_snapshots(change: hooks.SessionsErased) -> None:
    snapshot_erase(principal=change.principal, session_ids=change.session_ids)

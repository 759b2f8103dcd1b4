"""Reads of conversation snapshots: the snapshot of a conversation, and what each turn
delivered (the references later turns revalidate and citations resolve against)."""
from __future__ import annotations

from uuid import UUID

from memory.errors import NotFound
from memory.models import Session
from recall.models import ContextSnapshot, ContextTurn
from recall.snapshots.domain import PREFIX_TURN, FrozenItem, SnapshotView
from recall.snapshots.corrections import Delivered
from veetbot.identity import Principal
from veetbot.rls import owner_context


def frozen_items(raw: list) -> tuple[FrozenItem, ...]:
    return tuple(FrozenItem.model_validate(item) for item in raw)


def snapshot_view(row: ContextSnapshot) -> SnapshotView:
    return SnapshotView(
        id=row.id, session_id=row.session_id, created_at=row.created_at, prefix=row.prefix,
        prefix_sha256=row.prefix_sha256, prefix_tokens=row.prefix_tokens, prefix_withheld=row.withheld_at is not None,
        items=frozen_items(row.items), ceiling=row.ceiling, scope=row.scope, selection_mode=row.selection_mode,
        belief_types=tuple(row.belief_types), turns=row.turns,
    )


def conversation_snapshot(session_id: UUID, *, lock: bool = False) -> ContextSnapshot:
    """The snapshot of a live conversation (its session locked first when ``lock``); an
    unknown, foreign or erased conversation, or one without a snapshot, is NotFound."""
    sessions = Session.objects.filter(id=session_id, erased_at__isnull=True)
    if not (sessions.select_for_update() if lock else sessions).exists():
        raise NotFound("session")
    snapshots = ContextSnapshot.objects.filter(session_id=session_id)
    row = (snapshots.select_for_update() if lock else snapshots).first()
    if row is None:
        raise NotFound("snapshot")
    return row


def snapshot_get(*, principal: Principal, session_id: UUID) -> SnapshotView:
    with owner_context(principal):
        return snapshot_view(conversation_snapshot(session_id))


def delivered(snapshot: ContextSnapshot, *, through_turn: int, only_turn: bool = False) -> Delivered:
    """What the model was given: the prefix (turn 1), then the turn contexts of the turns
    before ``through_turn`` in order — or, with ``only_turn``, the prefix and that turn's own
    context (what one turn's answer could cite)."""
    turns = ContextTurn.objects.filter(snapshot_id=snapshot.id, turn__gt=PREFIX_TURN)
    turns = turns.filter(turn=through_turn) if only_turn else turns.filter(turn__lt=through_turn)
    found = [(PREFIX_TURN, item) for item in frozen_items(snapshot.items)]
    for turn, items in turns.order_by("turn").values_list("turn", "items"):
        found.extend((turn, item) for item in frozen_items(items))
    return found

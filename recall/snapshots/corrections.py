"""What a conversation was told that no longer holds: corrections of frozen references.

Every turn revalidates everything the conversation delivered — the prefix's references and
each earlier turn context's — against the bank as it is now, even when the clock moved
without a source write (an expiry). An item gets one correction, its most decisive reason
(``domain.CorrectionReason``). Originals are checked here; derived items and the merge sets a
belief represented are asked of the port reconsolidation registers (``recall.hooks``).

Order (a decision, documented in the API): prefix items first, in prefix order, then items of
earlier turn contexts in the order they were delivered — stable across turns, so a correction
does not move about while the prefix it amends stays byte-identical. The count is bounded by
what was delivered (the prefix's item allowance and ``RECALL_SNAPSHOT_MAX_TURNS``).

A notice names an item by its citation only. It never repeats erased content; a corrected
original's notice carries its current statement, made safe as every memory line is. A merge
undo or invalidation says the grouping changed, not that the original stopped holding.
Read-only; runs inside the caller's owner context.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from django.conf import settings

from memory import vocabulary
from memory.models import Memory, MemoryRevision
from recall import hooks
from recall.render import WITHHELD, citation, instruction_like, safe_text
from recall.snapshots.domain import Correction, FrozenItem
from veetbot.identity import Principal

LEAD = "[correction]"
Delivered = Sequence[tuple[int, FrozenItem]]  # (delivering turn, reference), in delivery order


def _visible(row: Memory, *, ceiling: str, scope: str) -> bool:
    return vocabulary.sensitivity_within(row.sensitivity, ceiling) and (
        row.scope == scope or (scope != "user" and row.scope == "user" and row.portable))


def _content_changes(refs: dict[UUID, FrozenItem], rows: dict[UUID, Memory]) -> dict[UUID, datetime]:
    """The originals whose subject or statement changed since the revision delivered, with
    the instant of the latest revision."""
    revised = [i for i, ref in refs.items() if i in rows and rows[i].content_revision != ref.content_revision]
    if not revised:
        return {}
    snapshots: dict[UUID, dict[int, tuple[dict, datetime]]] = {}
    for memory_id, revision, snapshot, recorded_at in MemoryRevision.objects.filter(memory_id__in=revised).values_list(
            "memory_id", "revision", "snapshot", "recorded_at"):
        snapshots.setdefault(memory_id, {})[revision] = (snapshot or {}, recorded_at)
    changed = {}
    for memory_id in revised:
        history, row = snapshots.get(memory_id, {}), rows[memory_id]
        then = history.get(refs[memory_id].content_revision, ({}, None))[0]
        if (then.get("subject"), then.get("statement")) != (row.subject, row.statement):
            changed[memory_id] = max(at for _, at in history.values()) if history else row.updated_at
    return changed


def _belief_states(refs: dict[UUID, FrozenItem], *, ceiling: str, scope: str, now: datetime
                   ) -> dict[UUID, tuple[str, Optional[datetime]]]:
    rows = {row.id: row for row in Memory.objects.filter(id__in=list(refs))}
    changed = _content_changes(refs, rows)
    found: dict[UUID, tuple[str, Optional[datetime]]] = {}
    for memory_id in refs:
        row = rows.get(memory_id)
        if row is None or row.erased_at is not None:
            found[memory_id] = ("erased", row.erased_at if row is not None else None)
        elif row.status == "retracted":
            found[memory_id] = ("retracted", row.updated_at)
        elif row.status == "expired" or (row.expires_at is not None and row.expires_at <= now):
            found[memory_id] = ("expired", row.expires_at or row.updated_at)
        elif memory_id in changed:
            found[memory_id] = ("corrected", changed[memory_id])
        elif row.status != "active" or not _visible(row, ceiling=ceiling, scope=scope):
            found[memory_id] = ("withdrawn", None)
    return found


def _derived_states(principal: Principal, refs: Sequence[FrozenItem], *, ceiling: str, scope: str, now: datetime
                    ) -> dict[UUID, tuple[str, Optional[datetime]]]:
    """Derived items and merge sets: the port's answer. Derived recall switched off (or no
    port) withdraws every derived item; a merge set then simply no longer applies, which the
    belief itself survives, so it gets no correction."""
    port = hooks.derived_port()
    derived = [r for r in refs if r.record_kind != "belief"]
    if port is None or not settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED:
        return {r.id: ("withdrawn", None) for r in derived}
    asked = [hooks.FrozenRef(id=r.id, record_kind=r.record_kind, operation_id=r.operation_id,
                             operation_revision=r.operation_revision) for r in refs if r.operation_id is not None]
    if not asked:
        return {}
    states = port.states(principal=principal, refs=asked, ceiling=ceiling, scope=scope, now=now)
    return {i: (state.reason, state.at) for i, state in states.items()}


def frozen_corrections(principal: Principal, delivered: Delivered, *, ceiling: str, scope: str,
                       now: datetime) -> list[Correction]:
    """One correction per delivered reference that no longer holds, in delivery order. A
    reference delivered again later counts as of its first delivery (the prefix is repeated
    every turn, so what it froze is what the model still reads)."""
    first: dict[UUID, tuple[int, FrozenItem]] = {}
    for turn, ref in delivered:
        first.setdefault(ref.id, (turn, ref))
    beliefs = {i: ref for i, (_, ref) in first.items() if ref.record_kind == "belief"}
    states = _belief_states(beliefs, ceiling=ceiling, scope=scope, now=now)
    grouped = [ref for i, (_, ref) in first.items() if ref.record_kind != "belief" or (
        ref.operation_id is not None and i not in states)]
    states.update(_derived_states(principal, grouped, ceiling=ceiling, scope=scope, now=now))
    return [Correction(id=i, record_kind=ref.record_kind, reason=states[i][0], changed_at=states[i][1],
                       delivered_turn=turn)
            for i, (turn, ref) in first.items() if i in states]


def _day(at: Optional[datetime]) -> str:
    return f" on {at.date().isoformat()}" if at is not None else ""


def notices(found: Sequence[Correction]) -> tuple[str, ...]:
    """One notice per correction, in order. Only a corrected original's notice carries text:
    its current statement, read now (never an erased one: an erased original is "erased")."""
    current = {row.id: row for row in Memory.objects.filter(
        id__in=[c.id for c in found if c.reason == "corrected"], erased_at__isnull=True)}
    lines = []
    for c in found:
        cited, day = citation(c.id), _day(c.changed_at)
        derived = c.record_kind != "belief"
        if c.reason == "erased":
            line = f"{cited} was erased by the owner; do not use or repeat what it said."
        elif c.reason == "retracted":
            line = f"The owner said {cited} is not true{day}; do not use it."
        elif c.reason == "expired":
            line = f"{cited} expired{day}; it no longer holds."
        elif c.reason == "corrected" and c.id in current:
            row = current[c.id]
            body = WITHHELD if instruction_like(row.subject) or instruction_like(row.statement) else (
                f"{safe_text(row.subject)}: {safe_text(row.statement)}")
            line = f"The owner corrected {cited}{day}; its current statement is {body}"
        elif c.reason == "withdrawn":
            line = f"{cited} is no longer available to this conversation; do not use it."
        elif derived:
            line = f"The {c.record_kind} {cited} no longer holds{day}: what it was built from changed; do not use it."
        elif c.reason == "undone":
            line = (f"The owner undid the grouping of {cited} with its equivalent memories{day}; {cited} itself "
                    "still holds, and its former duplicates are separate memories again.")
        else:  # a merge set invalidated
            line = (f"The grouping of {cited} with its equivalent memories no longer holds{day}; {cited} itself "
                    "still holds.")
        lines.append(f"{LEAD} {line}")
    return tuple(lines)

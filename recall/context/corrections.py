"""Correction notices: an owner's correction reaches the assistant even when the allowance is spent.

A ranked original whose statement the owner changed (a ``revised`` content revision whose
statement differs from the one before it, recorded at or before the turn's instant) gets a
notice after the rendered context. The notice is mandatory: it is not counted against the
shared item and token allowance, so a full allowance or a stopped round cannot drop it —
the assistant must not go on using the value the owner corrected. The count is bounded by
``RECALL_CONTEXT_MAX_CORRECTION_NOTICES`` (newest corrections first).

* a corrected original that was rendered: the notice points at its line;
* one the allowance left out (it was among a search's ranked, permitted originals): the
  notice carries its statement as of the turn's instant, made safe as every memory line is
  (citations escaped, instruction-like text withheld).

Read-only; the notice text names only what the owner's own memory holds.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Sequence
from uuid import UUID

from django.conf import settings

from memory.models import Memory, MemoryRevision
from recall.render import WITHHELD, citation, instruction_like, safe_text
from veetbot.identity import Principal
from veetbot.rls import owner_context

LEAD = "[correction]"


@dataclass(frozen=True)
class Correction:
    memory_id: UUID
    corrected_at: datetime
    subject: str  # as of the turn's instant
    statement: str


def corrections(principal: Principal, ranked_ids: Iterable[UUID], *, now: datetime) -> list[Correction]:
    """The ranked originals (permitted reads of this turn's searches) whose statement the
    owner corrected at or before ``now``, newest correction first, at most the setting."""
    ids = list(dict.fromkeys(ranked_ids))
    if not ids:
        return []
    with owner_context(principal):
        # Only rows revised at least once can hold a correction: one indexed probe first, so
        # the revision snapshots are read for those few, not for every ranked original.
        revised = list(Memory.objects.filter(id__in=ids, content_revision__gt=1).values_list("id", flat=True))
        if not revised:
            return []
        rows = (MemoryRevision.objects.filter(memory_id__in=revised, recorded_at__lte=now)
                .order_by("memory_id", "revision").values_list("memory_id", "snapshot", "recorded_at"))
        history: dict[UUID, list[tuple[dict, datetime]]] = {}
        for memory_id, snapshot, recorded_at in rows:
            history.setdefault(memory_id, []).append((snapshot or {}, recorded_at))
    found = []
    for memory_id, revisions in history.items():
        changed = [later for earlier, later in zip(revisions, revisions[1:])
                   if later[0].get("statement") != earlier[0].get("statement")]
        if changed:
            latest = revisions[-1][0]
            found.append(Correction(memory_id=memory_id, corrected_at=changed[-1][1],
                                    subject=latest.get("subject", ""), statement=latest.get("statement", "")))
    found.sort(key=lambda c: (c.corrected_at, str(c.memory_id)), reverse=True)
    return found[:int(settings.RECALL_CONTEXT_MAX_CORRECTION_NOTICES)]


def notices(found: Sequence[Correction], rendered: set[UUID]) -> tuple[str, ...]:
    """One notice per correction: a pointer when its original was rendered, else its
    current statement, made safe as every memory line is."""
    lines = []
    for correction in found:
        day, cited = correction.corrected_at.date().isoformat(), citation(correction.memory_id)
        if correction.memory_id in rendered:
            lines.append(f"{LEAD} The owner corrected {cited} on {day}; use its current statement, not an earlier one.")
            continue
        body = WITHHELD if instruction_like(correction.subject) or instruction_like(correction.statement) else (
            f"{safe_text(correction.subject)}: {safe_text(correction.statement)}")
        lines.append(f"{LEAD} The owner corrected {cited} on {day}; its current statement is {body}")
    return tuple(lines)

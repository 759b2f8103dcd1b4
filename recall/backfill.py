"""Backfill of the semantic index: embed live originals that lack a current vector.

What is embedded: live originals (not erased) with status ``active`` or ``expired`` whose
current content revision has no vector in the encoder's space. An expired original's
current revision is the evidence a dated query inside its validity window selects, and a
vector counts only for the exact revision it was computed from. Retracted and deleted
originals are never recalled and not embedded; a status change is a content change, so such
an original becomes due again by itself. A remote encoder is given only originals at or
below ``REMOTE_ENCODER_MAX_SENSITIVITY``, and every text passes ``recall.egress`` first: a
refused text is skipped and counted, a refused spend reservation stops the run.

Order and fairness: oldest first, by (creation_sequence, id), from a cursor that only moves
forward within a run, so new writes never starve old records. The work list is the
database state itself, so a run that stops (limit, crash, encoder failure) loses nothing.

Each batch is read inside ``owner_context``, encoded OUTSIDE any transaction (the encoder
may take seconds or call a provider), and written with the compare-and-swap of
``recall.vectors.write_vectors``: a row changed in between is stale, nothing is written for
it, and the next run embeds the new revision.
"""
from __future__ import annotations

import hashlib
import time
from typing import Callable, Optional
from uuid import UUID

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from pydantic import BaseModel, ConfigDict

from memory import vocabulary
from memory.models import Memory
from recall import egress
from recall.domain import memory_text
from recall.encoders import Encoder, EncoderUnavailable
from recall.models import MemoryVector
from recall.vectors import write_vectors
from veetbot.identity import Principal
from veetbot.rls import owner_context

REMOTE_ENCODER_MAX_SENSITIVITY = "internal"
EMBEDDED_STATUSES = ("active", "expired")  # the statuses recall can ever show
Progress = Callable[[str, int, int], None]  # (stage, done, total)
Cursor = tuple[int, UUID]  # (creation_sequence, id) of the last original read


class BackfillReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    space: str
    embedded: int = 0
    skipped_stale: int = 0
    skipped_egress: int = 0
    remaining: int = 0
    seconds: float = 0.0
    cursor: Optional[Cursor] = None
    stopped: str = ""  # content-free reason when the encoder failed mid-run

    def summary(self) -> dict:
        """The command's JSON form."""
        return {"embedded": self.embedded, "skipped_stale": self.skipped_stale,
                "skipped_egress": self.skipped_egress, "remaining": self.remaining,
                "seconds": round(self.seconds, 3), "space": self.space}


def _due(encoder: Encoder):
    """Originals of the current owner lacking a vector for their current revision."""
    rows = Memory.objects.filter(status__in=EMBEDDED_STATUSES, erased_at__isnull=True)
    if encoder.tuple.provider != "local":
        rank = vocabulary.SENSITIVITY_RANK[REMOTE_ENCODER_MAX_SENSITIVITY]
        rows = rows.filter(sensitivity__in=vocabulary.SENSITIVITIES[: rank + 1])
    current = MemoryVector.objects.filter(
        memory_id=OuterRef("id"), space=encoder.tuple.space, content_revision=OuterRef("content_revision"),
    )
    return rows.exclude(Exists(current))


def _read_batch(principal: Principal, encoder: Encoder, after: Optional[Cursor], limit: int) -> list[tuple]:
    with owner_context(principal):
        rows = _due(encoder)
        if after is not None:
            sequence, last_id = after
            rows = rows.filter(Q(creation_sequence__gt=sequence) | Q(creation_sequence=sequence, id__gt=last_id))
        return list(
            rows.order_by("creation_sequence", "id")
            .values_list("id", "content_revision", "subject", "statement", "creation_sequence")[:limit]
        )


def vectors_due(*, principal: Principal, encoder: Encoder) -> int:
    """How many originals the backfill would embed now."""
    with owner_context(principal):
        return _due(encoder).count()


def backfill_vectors(
    *, principal: Principal, encoder: Encoder, batch_items: Optional[int] = None, max_items: Optional[int] = None,
    progress: Optional[Progress] = None, after: Optional[Cursor] = None,
) -> BackfillReport:
    """Embed up to ``max_items`` due originals of ``principal``, oldest first, in bounded batches."""
    batch_items = batch_items or settings.RECALL_BACKFILL_BATCH_ITEMS
    if batch_items < 1 or (max_items is not None and max_items < 0):
        raise ValueError("batch_items must be positive and max_items not negative")
    started = time.monotonic()
    space = encoder.tuple.space
    total = vectors_due(principal=principal, encoder=encoder)
    if max_items is not None:
        total = min(total, max_items)
    embedded = stale = done = refused = 0
    cursor, stopped = after, ""
    sender = egress.guarded(encoder, principal)
    if not egress.in_process(encoder) and not egress.residency_permitted(encoder):
        # No text may go to this endpoint at all: say so once instead of skipping every text.
        return BackfillReport(space=space, remaining=total, seconds=time.monotonic() - started, cursor=cursor,
                              stopped="egress refused: residency_not_allowed")
    while max_items is None or done < max_items:
        limit = batch_items if max_items is None else min(batch_items, max_items - done)
        batch = _read_batch(principal, encoder, cursor, limit)
        if not batch:
            break
        texts = [memory_text(subject, statement) for _, _, subject, statement, _ in batch]
        sendable = [(row, text) for row, text in zip(batch, texts) if not egress.refusal(encoder, text)]
        refused += len(batch) - len(sendable)
        try:
            # outside any transaction: holds no lock, no snapshot
            vectors = sender.encode([text for _, text in sendable]) if sendable else []
        except EncoderUnavailable as error:
            stopped = str(error)
            break
        rows = [
            (memory_id, revision, hashlib.sha256(text.encode()).hexdigest(), vector)
            for ((memory_id, revision, *_), text), vector in zip(sendable, vectors)
        ]
        written, skipped = write_vectors(principal, rows, encoder.tuple)
        embedded += written
        stale += skipped
        done += len(batch)
        cursor = (batch[-1][4], batch[-1][0])
        if progress is not None:
            progress("embedding", min(done, total) if total else done, max(total, done))
    return BackfillReport(
        space=space, embedded=embedded, skipped_stale=stale, skipped_egress=refused,
        remaining=vectors_due(principal=principal, encoder=encoder),
        seconds=time.monotonic() - started, cursor=cursor, stopped=stopped,
    )

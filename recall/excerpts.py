"""Source excerpts: the owner's own words behind a rendered original (ADR-0189, off by default).

With ``RECALL_SOURCE_EXCERPTS_ENABLED`` on, the retriever offers each original its budget kept
the whole text parts its provenance cites (memory sources → event parts) that pass every
check below, read in the recall's own owner transaction and snapshot; ``recall.render`` then
quotes them as data within what the items left of the token allowance and the named
``RECALL_SOURCE_EXCERPT*`` bounds.

Admitted only (``admitted`` for the recall, ``EXCERPTS`` per part):

* the owner's own message: ``memory.evidence`` (owner ``user.message.created``, not excluded,
  not erased) — another speaker's message, the assistant's, a tool's never appear;
* a part whose text still matches the digest recorded with it (the exact-text digest: a
  changed part is withheld, not quoted), non-empty (erasure empties part text) and at most
  ``RECALL_SOURCE_EXCERPT_MAX_CHARS`` characters — a longer part is withheld whole, never cut
  into a misleading truncated quote;
* from a live session of exactly the recall's scope ("within the current project": a local
  recall quotes its own scope's conversations, a user recall user-scope ones; portability
  lets a belief cross scopes, never the message it came from);
* for an original not corrected since it was formed: when its subject or statement differs
  from its first revision, the message says what the owner corrected, so it is withheld;
* for a reader cleared for restricted content (``CLEARANCE``): a belief's sensitivity is only
  a floor for the message it came from, which may say more than the belief kept;
* for a current recall only: a historical (``as_of``) recall and a conversation's frozen
  prefix (``frozen``) carry none — new evidence belongs in a turn's context, and the past is
  not re-read from old dialogue.

A failed source read rolls back to its savepoint and the recall goes on without excerpts
(never a partial set). Nothing here writes; the trace records each rendered excerpt's
SHA-256, never its text (``recall.traces``).
"""
from __future__ import annotations

import logging
from typing import Sequence
from uuid import UUID

from django.conf import settings
from django.db import DatabaseError, transaction

from memory.evidence import admitted_event
from recall.arms import permitted
from recall.domain import RecallItem, RecallRequest, SourceExcerpt

logger = logging.getLogger(__name__)

CLEARANCE = "restricted"  # the ceiling a reader needs to see the owner's messages themselves

EXCERPTS = f"""
    SELECT s.memory_id, e.id, p.id, e.created_at, p.text, p.text_sha256
    FROM (
        SELECT memory_id, event_id, part_id, position FROM memory_memorysource
        WHERE tenant_id = %(tenant_id)s AND principal_id = %(principal_id)s AND memory_id = ANY(%(ids)s::uuid[])
        OFFSET 0
    ) s
    CROSS JOIN LATERAL (
        SELECT 1 FROM memory_memory m
        WHERE m.id = s.memory_id AND m.erased_at IS NULL
          AND (m.content_revision = 1 OR EXISTS (
                SELECT 1 FROM memory_memoryrevision r
                WHERE r.memory_id = m.id AND r.revision = 1
                  AND r.snapshot ->> 'subject' = m.subject AND r.snapshot ->> 'statement' = m.statement))
        LIMIT 1
    ) m
    CROSS JOIN LATERAL (
        SELECT e.id, e.created_at FROM memory_event e
        WHERE e.id = s.event_id AND {admitted_event("e")}
          AND EXISTS (SELECT 1 FROM memory_session ss
                      WHERE ss.id = e.session_id AND ss.erased_at IS NULL AND ss.scope = %(scope)s)
        LIMIT 1
    ) e
    CROSS JOIN LATERAL (
        SELECT p.id, p.text, p.text_sha256 FROM memory_eventpart p
        WHERE p.id = s.part_id AND p.event_id = e.id
          AND p.text <> '' AND char_length(p.text) <= %(max_chars)s
          AND p.text_sha256 = encode(sha256(convert_to(p.text, 'UTF8')), 'hex')
        LIMIT 1
    ) p
    ORDER BY s.memory_id, s.position
"""
# A walk from the kept originals' sources to their rows by primary key (the laterals' LIMIT
# keeps it one: with the policies' owner predicates and no statistics yet — a fresh import —
# the planner otherwise started from all the owner's parts, 3.4 s for 20 originals of 547).
# Owner-bound composite foreign keys tie every row reached to the sources' owner; RLS applies.


def enabled() -> bool:
    return bool(settings.RECALL_SOURCE_EXCERPTS_ENABLED)


def admitted(request: RecallRequest, *, frozen: bool = False) -> bool:
    """Whether this recall may carry excerpts at all (setting, clearance, current, not frozen)."""
    return enabled() and not frozen and request.as_of is None and request.ceiling == CLEARANCE


def read(read: permitted.Read, kept: Sequence[RecallItem]) -> dict[UUID, tuple[SourceExcerpt, ...]]:
    """The admissible excerpts of the kept originals, in provenance order, by original.
    Call inside the recall's owner context, after the rejoin (``read`` is its snapshot)."""
    ids = [item.id for item in kept if item.record_kind == "belief"]
    if not ids:
        return {}
    params = {**read.params, "ids": permitted.uuid_array(ids),
              "max_chars": int(settings.RECALL_SOURCE_EXCERPT_MAX_CHARS)}
    try:
        with transaction.atomic():
            rows = permitted.run(EXCERPTS, params)
    except DatabaseError:
        # ADR-0189: a failed source read rolls back before ordinary recall goes on. Content
        # free: the exception text could quote a value, so only its type is logged.
        logger.warning("source excerpt read failed; recall continues without excerpts")
        return {}
    found: dict[UUID, list[SourceExcerpt]] = {}
    for memory_id, event_id, part_id, created_at, text, digest in rows:
        found.setdefault(memory_id, []).append(SourceExcerpt(
            event=event_id, part=part_id, created_at=created_at, text=text, text_sha256=digest))
    return {memory_id: tuple(excerpts) for memory_id, excerpts in found.items()}


def digests(items: Sequence[RecallItem]) -> list[str]:
    """The SHA-256 of each rendered excerpt, in rendering order: what a trace records."""
    return [excerpt.text_sha256 for item in items for excerpt in item.excerpts]

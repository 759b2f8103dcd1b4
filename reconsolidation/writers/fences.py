"""Scoped fences: whether a queued group's own sources were touched since it read them.

The owner's erasure fence (``memory.services.owner_state.erasure_generation``) moves on
every erasure anywhere in the bank, so gating work on it staled every queued group after
any erasure. The fence that matters to a group is narrower: its sources at the content
revisions it read. Every correction, retraction, expiry, review rejection and erasure of
an original increments its ``content_revision`` (and journals the change), so a group
whose sources still carry the revisions it recorded has seen no such change, whatever
else the owner erased meanwhile.

``touched_since_read`` is that check, for every caller that is about to spend or write
for a group: the rules path before it reserves spend (``work.process``), the commit
(``operations.commit``), and the model path's admission, which is to make the same call
for each claimed group before it reserves (``work.admission``). Callers holding the owner lock get an exact answer (every
source write takes that lock first); without it the answer is a cheap early refusal that
the commit repeats under the lock.

It reads IDs and revisions only, never source text.
"""
from __future__ import annotations

from typing import Optional, Sequence

from django.db import connection

from reconsolidation.domain import InputRef
from reconsolidation.rows import owner_fields
from veetbot.identity import Principal

# Reason codes; both are in admission's set of "the originals changed" reasons (a stale group).
SOURCE_MISSING = "source_missing"
SOURCE_CHANGED = "source_changed"

_CURRENT_REVISIONS = """
    SELECT m.id, m.content_revision, m.erased_at IS NOT NULL
    FROM memory_memory m
    WHERE m.tenant_id = %(tenant_id)s AND m.principal_id = %(principal_id)s AND m.id = ANY(%(ids)s::uuid[])
"""


def touched_since_read(principal: Principal, inputs: Sequence[InputRef]) -> Optional[str]:
    """``SOURCE_MISSING`` / ``SOURCE_CHANGED`` when any of ``inputs`` (a group's sources at
    the revisions it read) is gone, erased or at another content revision; None when all
    are as read. Call inside ``owner_context(principal)``."""
    wanted = {ref.memory_id: ref.content_revision for ref in inputs}
    with connection.cursor() as cursor:
        cursor.execute(_CURRENT_REVISIONS, {**owner_fields(principal), "ids": sorted(wanted)})
        current = {memory_id: (revision, erased) for memory_id, revision, erased in cursor.fetchall()}
    if set(current) != set(wanted):
        return SOURCE_MISSING
    for memory_id, revision in wanted.items():
        current_revision, erased = current[memory_id]
        if erased or current_revision != revision:
            return SOURCE_CHANGED
    return None

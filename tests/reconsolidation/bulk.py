"""Bulk builders for large banks: sessions, owner events, parts, originals and sources in a
handful of server-side ``INSERT ... SELECT generate_series`` statements.

They run inside ``owner_context`` as the runtime role (forced RLS checks every row) and
allocate creation sequences, store positions and journal seqs under the owner lock
exactly as ``memory.services`` does, so the inventory sees what it would see in
production — only without 100,000 round trips. Rows are synthetic and content-light:

* ``subject`` is ``topic <k>`` with k = i mod ``clusters``, so members of one subject
  cluster lie far apart in creation order (old and recent, across sessions);
* ``statement`` repeats common words (too frequent to count as overlap) plus ``i`` and
  the cluster number; with ``sparse`` it holds only those two tokens, so no lexeme is
  common (used where the scan, not lookup cost, is under test).
"""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Optional, Sequence
from uuid import UUID

from django.db import connection, connections

from memory.services.owner_state import allocate, journal, lock_owner
from veetbot.identity import Principal
from veetbot.rls import owner_context

SESSION_SIZE = 100

_SESSIONS = """
    INSERT INTO memory_session (id, tenant_id, principal_id, scope, started_at)
    SELECT md5(%(tag)s || 's' || s)::uuid, %(tenant_id)s, %(principal_id)s, 'user', %(at)s
    FROM generate_series(0, %(sessions)s - 1) AS s
"""
_EVENTS = """
    INSERT INTO memory_event (id, tenant_id, principal_id, session_id, kind, speaker, created_at, excluded)
    SELECT md5(%(tag)s || 'e' || i)::uuid, %(tenant_id)s, %(principal_id)s,
           md5(%(tag)s || 's' || (i / %(session_size)s))::uuid, 'user.message.created', 'owner',
           %(at)s + i * interval '1 second', false
    FROM generate_series(0, %(count)s - 1) AS i
"""
_PARTS = """
    INSERT INTO memory_eventpart (id, tenant_id, principal_id, event_id, position, text, text_sha256)
    SELECT md5(%(tag)s || 'p' || i)::uuid, %(tenant_id)s, %(principal_id)s, md5(%(tag)s || 'e' || i)::uuid, 0,
           'note ' || i, md5('note ' || i) || md5('x' || i)
    FROM generate_series(0, %(count)s - 1) AS i
"""
_MEMORIES = """
    INSERT INTO memory_memory (
        id, tenant_id, principal_id, subject, statement, belief_type, claim_kind, polarity, derivation,
        attribution, authority, sensitivity, scope, portable, confidence, evidence_at, valid_from, expires_at,
        entity_ids, status, created_at, updated_at, content_revision, creation_sequence, store_position,
        utility, review_rejected, claim_sha256)
    SELECT md5(%(tag)s || 'm' || i)::uuid, %(tenant_id)s, %(principal_id)s,
           'topic ' || ((%(first)s + i) %% %(clusters)s),
           CASE WHEN %(sparse)s
                THEN 'k' || (%(first)s + i) || ' c' || ((%(first)s + i) %% %(clusters)s)
                ELSE 'Fact ' || (%(first)s + i) || ' about topic ' || ((%(first)s + i) %% %(clusters)s)
                     || ' noted by the owner' END,
           'fact', 'claim', 'affirmed', 'explicit', 'owner', 'USER', 'internal', 'user', true, 0.9,
           %(at)s, %(at)s, NULL, '{}', 'active', %(at)s + i * interval '1 second', %(at)s + i * interval '1 second',
           1, %(first)s + i, %(first_position)s + i, 1.0, false, md5(%(tag)s || 'c' || i) || md5(%(tag)s || 'd' || i)
    FROM generate_series(0, %(count)s - 1) AS i
"""
_SOURCES = """
    INSERT INTO memory_memorysource (id, tenant_id, principal_id, memory_id, event_id, part_id, position)
    SELECT md5(%(tag)s || 'r' || i)::uuid, %(tenant_id)s, %(principal_id)s, md5(%(tag)s || 'm' || i)::uuid,
           md5(%(tag)s || 'e' || i)::uuid, md5(%(tag)s || 'p' || i)::uuid, 0
    FROM generate_series(0, %(count)s - 1) AS i
"""
_IDS = "SELECT md5(%(tag)s || 'm' || i)::uuid FROM generate_series(0, %(count)s - 1) AS i ORDER BY i"


def analyze_originals() -> None:
    """Planner statistics for the originals (owner alias: the runtime role may not ANALYZE).

    Needed between committed batches: on never-analyzed tables the planner ties the
    deferred foreign-key check on memory_memory to an (owner, status) index instead of
    the primary key, and checking N rows at commit becomes quadratic."""
    with connections["owner"].cursor() as cursor:
        cursor.execute("ANALYZE memory_session, memory_event, memory_eventpart, memory_memory, memory_memorysource")


def bulk_originals(principal: Principal, count: int, *, at: datetime, clusters: Optional[int] = None,
                   journal_entries: bool = False, batch_rows: Optional[int] = None,
                   analyze: bool = False, sparse: bool = False) -> list[UUID]:
    """Create ``count`` eligible originals (one owner message each); returns their IDs in
    creation order. ``journal_entries`` also journals them as ``created`` (as live
    creation does); a backfilled bank leaves that to the full scan. With ``batch_rows``
    each batch is its own transaction (a small first batch, then ``analyze`` if asked)."""
    clusters = clusters or max(1, count // 8)
    if batch_rows:
        sizes = [min(count, 2000)]
        while sum(sizes) < count:
            sizes.append(min(batch_rows, count - sum(sizes)))
        ids: list[UUID] = []
        for size in sizes:
            ids += _bulk_batch(principal, size, at=at + timedelta(seconds=len(ids)), clusters=clusters,
                               journal_entries=journal_entries, sparse=sparse)
            if analyze:
                analyze_originals()
        return ids
    return _bulk_batch(principal, count, at=at, clusters=clusters, journal_entries=journal_entries, sparse=sparse)


def _bulk_batch(principal: Principal, count: int, *, at: datetime, clusters: int, journal_entries: bool,
                sparse: bool = False) -> list[UUID]:
    tag = uuid.uuid4().hex
    with owner_context(principal):
        lock_owner(principal)
        block = allocate(principal, creations=count, positions=count)
        params = {
            "tag": tag, "tenant_id": principal.tenant_id, "principal_id": principal.principal_id, "at": at,
            "count": count, "sessions": -(-count // SESSION_SIZE), "session_size": SESSION_SIZE,
            "first": block.creation_sequence, "first_position": block.store_position,
            "clusters": clusters, "sparse": sparse,
        }
        with connection.cursor() as cursor:
            for statement in (_SESSIONS, _EVENTS, _PARTS, _MEMORIES, _SOURCES):
                cursor.execute(statement, params)
            cursor.execute(_IDS, params)
            ids = [row[0] for row in cursor.fetchall()]
        if journal_entries:
            journal(principal, [(memory_id, "created", 1) for memory_id in ids], at)
        return ids


def bulk_touch(principal: Principal, memory_ids: Sequence[UUID], *, at: datetime) -> None:
    """A content revision of each original, journaled under the owner lock in one go
    (the bulk stand-in for ``memory_revise``: revision + journal entry, atomically)."""
    with owner_context(principal):
        lock_owner(principal)
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_memory SET content_revision = content_revision + 1, updated_at = %s,"
                " confidence = CASE WHEN confidence > 0.5 THEN 0.5 ELSE 0.9 END"
                " WHERE id = ANY(%s::uuid[]) RETURNING id, content_revision",
                [at, list(memory_ids)],
            )
            rows = sorted(cursor.fetchall(), key=lambda row: str(row[0]))
        journal(principal, [(memory_id, "revised", revision) for memory_id, revision in rows], at + timedelta(0))


def bulk_finish_pending(principal: Principal, *, at: datetime) -> int:
    """Stand-in for model processing in the long scans: every queued group of the owner
    becomes ``no_change`` in one statement, so the pending cap never pauses selection."""
    with owner_context(principal):
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE reconsolidation_reconsolidationgroup SET state = 'no_change', finished_at = %s, updated_at = %s"
                " WHERE state = 'pending'", [at, at],
            )
            return cursor.rowcount

"""The semantic index store: writes of vectors (compare-and-swap on the content revision)
and the small read helpers the retriever uses to pick and tune its search.

A vector is derived navigation data for one content revision of one original in one
embedding space. It may be written only while that revision is still the original's
current one and the original is not erased (``write_vectors``), so a stale backfill can
never restore a vector a change or erasure removed, and owner writes never wait on (or
deadlock with) a whole backfill.

This module never encodes text and never reads source prose; callers hand it vectors
they computed outside any transaction.
"""
from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from django.conf import settings
from django.db import connection

from recall.domain import EmbeddingTuple
from recall.models import EMBEDDING_DIMENSIONS, MemoryVector
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

VectorRow = tuple[UUID, int, str, Sequence[float]]  # memory_id, content_revision, text_sha256, vector
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

_WRITE_SQL = """
WITH input AS (
    SELECT * FROM unnest(%s::uuid[], %s::int[], %s::text[], %s::text[])
        AS i(memory_id, content_revision, text_sha256, embedding)
), current_revision AS (
    -- The compare-and-swap: only rows whose original still has this revision and is live,
    -- held until commit; a row an uncommitted change holds is skipped, never waited for.
    SELECT i.memory_id, i.content_revision, i.text_sha256, i.embedding, m.tenant_id, m.principal_id
    FROM input i JOIN memory_memory m ON m.id = i.memory_id
    WHERE m.content_revision = i.content_revision AND m.erased_at IS NULL
    FOR SHARE OF m SKIP LOCKED
), written AS (
    INSERT INTO recall_memoryvector (
        id, tenant_id, principal_id, memory_id, content_revision, space, provider, model,
        model_revision, dimensions, text_version, text_sha256, embedding, created_at
    )
    SELECT gen_random_uuid(), c.tenant_id, c.principal_id, c.memory_id, c.content_revision,
           %s, %s, %s, %s, %s, %s, c.text_sha256, c.embedding::vector, %s
    FROM current_revision c
    ON CONFLICT (memory_id, space) DO UPDATE SET
        content_revision = EXCLUDED.content_revision, text_sha256 = EXCLUDED.text_sha256,
        embedding = EXCLUDED.embedding, created_at = EXCLUDED.created_at
    -- Never replace a vector with one of an older (or the same) revision.
    WHERE recall_memoryvector.content_revision < EXCLUDED.content_revision
    RETURNING 1
)
SELECT (SELECT count(*) FROM current_revision), (SELECT count(*) FROM written)
"""


def _vector_literal(vector: Sequence[float], dimensions: int) -> str:
    if len(vector) != dimensions:
        raise ValueError(f"vector must have {dimensions} dimensions")
    if not all(math.isfinite(v) for v in vector):
        raise ValueError("vector values must be finite")
    # 9 significant digits round-trip float32, which is what pgvector stores.
    return "[" + ",".join(format(float(v), ".9g") for v in vector) + "]"


def write_vectors(
    principal: Principal, rows: Sequence[VectorRow], tuple: EmbeddingTuple, *, now: Optional[datetime] = None,
) -> tuple[int, int]:
    """Store vectors for the given (memory, revision) pairs; returns (written, stale).

    ``stale`` counts rows whose original has since changed revision, been erased, is not
    this owner's, or is being changed right now (row held by an uncommitted write):
    nothing is written for them, and a later backfill finds them again if still due.
    Rows whose vector is already stored for that revision count as neither.

    One SQL statement reads each original ``FOR SHARE ... SKIP LOCKED``: an original a change
    or erasure holds is skipped, so a write never slips in between a change's invalidation and
    its commit; an original the write has locked cannot change until the write commits, and
    the change's invalidation (after the wait) then deletes the vector; a change committed
    before the write moved the revision on, so nothing matches. Owner writes wait at most for
    one batch insert that touches their own rows — never for the whole owner.
    """
    if tuple.dimensions != EMBEDDING_DIMENSIONS:
        raise ValueError(f"the index holds {EMBEDDING_DIMENSIONS}-dimension vectors")
    if not rows:
        return 0, 0
    ids, revisions, digests, literals = [], [], [], []
    for memory_id, revision, digest, vector in rows:
        if not _SHA256.match(digest):
            raise ValueError("text_sha256 must be a lowercase SHA-256 hex digest")
        ids.append(UUID(str(memory_id)))
        revisions.append(int(revision))
        digests.append(digest)
        literals.append(_vector_literal(vector, tuple.dimensions))
    if len(set(ids)) != len(ids):
        raise ValueError("one row per memory")
    with owner_context(principal):
        with connection.cursor() as cursor:
            cursor.execute(_WRITE_SQL, [
                ids, revisions, digests, literals,
                tuple.space, tuple.provider, tuple.model, tuple.model_revision, tuple.dimensions,
                tuple.text_version, now or utcnow(),
            ])
            matched, written = cursor.fetchone()
    return written, len(rows) - matched


def owner_vector_count(space: str) -> int:
    """Vectors the current owner has in ``space`` (call inside ``owner_context``; with no
    owner set, row-level security shows none). For choosing exact search or HNSW."""
    return MemoryVector.objects.filter(space=space).count()


def hnsw_session_settings(cursor, *, ef_search: Optional[int] = None) -> None:
    """Tune HNSW for the current transaction: owner rows are filtered after the index
    scan (row-level security), so keep scanning (relaxed order) until enough rows pass,
    up to a bound on scanned tuples. ``ef_search``: the caller's candidate list, recall's
    (``RECALL_HNSW_EF_SEARCH``) unless given."""
    db = getattr(cursor, "db", None)
    if db is not None and not db.in_atomic_block:
        raise RuntimeError("hnsw_session_settings needs a transaction (SET LOCAL)")
    # One round trip; set_config(..., true) is SET LOCAL.
    cursor.execute(
        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
        " set_config('hnsw.ef_search', %s, true), set_config('hnsw.max_scan_tuples', %s, true)",
        [str(int(settings.RECALL_HNSW_EF_SEARCH if ef_search is None else ef_search)),
         str(int(settings.RECALL_HNSW_MAX_SCAN_TUPLES))],
    )

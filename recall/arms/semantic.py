"""The semantic arm: the owner's vectors nearest the query vector, each probed in ``permitted``.

Two search modes return the same thing — permitted originals nearest first, LIMIT in SQL —
at different costs: an exact scan of the owner's vectors while they are few
(``use_exact_search``), the shared HNSW index with iterative scans above
``RECALL_EXACT_SEARCH_MAX_VECTORS``. A short HNSW result is never final (``semantic_search``):
another owner's vectors can never starve this owner's list.
"""
from __future__ import annotations

import time
from typing import Optional, Sequence

from django.conf import settings
from django.db import connection

from recall import vectors
from recall.arms.permitted import Candidate, Read, permitted, permitted_probe, run
from recall.domain import SemanticSearch


def semantic_arm(historical: bool, *, exact: bool) -> str:
    """Nearest vectors of permitted originals by cosine distance, LIMIT in SQL.

    A vector counts only for the content revision it was computed from: the current one,
    or for ``as_of`` the revision current at that instant (current vectors never stand in
    for past evidence).

    Both modes walk the owner's vectors nearest first and look each one up in
    ``permitted`` (one probe by ID, ``permitted_probe``) until ``limit`` permitted
    originals are found, so the LIMIT counts permitted originals only — owner, lifecycle
    or any other predicate can never starve it — and the statement never scans all of the
    owner's originals. The probe is a subquery that may not be flattened (``OFFSET 0``),
    so the plan is this nested loop whatever the table statistics say; the former join
    of every vector with every permitted original was left to the planner, and took
    250 ms at 1,000 memories right after an import.

    Exact mode computes every owner vector's distance once in a subquery the planner may
    not flatten (``OFFSET 0``) and sorts by that computed column, which the HNSW index
    cannot serve: a true exact scan whose sort carries (id, revision, distance) rather than
    whole rows with their 384-float embeddings. Index mode orders the owner's vectors by
    the bare distance so the HNSW index serves it with iterative scans
    (``vectors.hnsw_session_settings``), filtered by the same probe, walks ``search_depth``
    permitted vectors, then re-sorts the relaxed-order result and keeps the ``limit``
    nearest.
    """
    distance = "(v.embedding <=> %(query_vector)s::vector)"
    owner_space = """v.tenant_id = %(tenant_id)s AND v.principal_id = %(principal_id)s
          AND v.space = %(space)s"""
    if exact:
        nearest = f"""
        SELECT p.id, p.store_position, d.distance
        FROM (
            SELECT memory_id, content_revision, distance FROM (
                SELECT v.memory_id, v.content_revision, {distance} AS distance
                FROM recall_memoryvector v
                WHERE {owner_space}
                OFFSET 0
            ) computed
            ORDER BY distance
            OFFSET 0
        ) d
        CROSS JOIN LATERAL ({permitted_probe("d")}) p
        ORDER BY d.distance
        LIMIT %(limit)s"""
    else:
        nearest = f"""
        SELECT p.id, p.store_position, d.distance
        FROM (
            SELECT v.memory_id, v.content_revision, {distance} AS distance
            FROM recall_memoryvector v
            WHERE {owner_space}
              AND EXISTS ({permitted_probe("v")})
            ORDER BY {distance}
            LIMIT %(depth)s
        ) d
        CROSS JOIN LATERAL ({permitted_probe("d")}) p"""
    # The final sort must really sort. The planner takes the CTE's rows as already ordered
    # by distance (its ORDER BY), but an iterative HNSW scan returns them in relaxed order;
    # sorting on ``distance + 0`` (pgvector's documented idiom) forbids the presorted
    # shortcut. Exact mode's rows are truly ordered, so its incremental sort is kept.
    key = "distance" if exact else "distance + 0"
    return permitted(historical) + f""",
    nearest AS MATERIALIZED ({nearest}
    )
    SELECT id, store_position, distance FROM nearest
    ORDER BY {key}, store_position DESC, id
    LIMIT %(limit)s
    """


def search_depth(limit: int) -> int:
    """How many permitted vectors an index search walks before it keeps the ``limit``
    nearest: ``RECALL_HNSW_SEARCH_DEPTH``, never fewer than the limit. A question lies away
    from the statements that answer it, where one candidate list of ``ef_search`` misses
    some of them; the iterative scan's further steps find them (see the setting)."""
    return max(limit, settings.RECALL_HNSW_SEARCH_DEPTH)


def vector_literal(vector) -> str:
    """pgvector's text form; the caller has checked the values are finite."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def arm_params(read: Read, query_vector: Sequence[float], space: str) -> dict:
    """The parameters of ``semantic_arm``'s statement, in either mode."""
    return {**read.params, "query_vector": vector_literal(query_vector), "space": space, "limit": read.limit,
            "depth": search_depth(read.limit)}


def semantic(read: Read, query_vector: Sequence[float], space: str, *, exact: bool) -> list[Candidate]:
    """One search of the semantic arm in the given mode (no fallback: see ``semantic_search``)."""
    rows = run(semantic_arm(read.historical, exact=exact), arm_params(read, query_vector, space))
    return [Candidate(id=r[0], store_position=r[1], signal=float(r[2])) for r in rows]


EXACT, HNSW, HNSW_SHORT_EXACT = "exact", "hnsw", "hnsw_short_exact"  # recall.domain.SemanticSearch


def semantic_search(read: Read, query_vector: Sequence[float], space: str, *, exact: bool
                    ) -> tuple[list[Candidate], SemanticSearch]:
    """The semantic arm's list, which another owner's vectors can never starve.

    The HNSW index holds every owner's vectors and row-level security filters them after
    the index scan. An iterative scan stops after ``RECALL_HNSW_MAX_SCAN_TUPLES`` tuples, so
    when other owners hold that many vectors nearer the query than any of this owner's,
    the HNSW search returns few or none of this owner's — however many it holds. A result
    shorter than the arm limit is therefore never taken as final: the arm searches again in
    exact mode, which reads only this owner's vectors (``memoryvector_owner_space``) and
    is complete by construction. A short exact result is simply all there is (the owner's
    permitted, indexed originals are fewer than the limit).
    """
    if exact:
        return semantic(read, query_vector, space, exact=True), EXACT
    found = semantic(read, query_vector, space, exact=False)
    if len(found) >= read.limit:
        return found, HNSW
    return semantic(read, query_vector, space, exact=True), HNSW_SHORT_EXACT


# (database, tenant, principal, space) -> (vector count, monotonic expiry). Counting an
# owner's vectors costs a scan of them (tens of ms at 10,000); the count only picks the
# search mode — both modes return permitted originals only — so a count up to
# RECALL_VECTOR_COUNT_CACHE_SECONDS old is good enough. Bounded: cleared when full.
_vector_counts: dict[tuple, tuple[int, float]] = {}
_VECTOR_COUNTS_MAX_ENTRIES = 1024


def _owner_vector_count(space: str, owner: Optional[tuple]) -> int:
    if owner is None or settings.RECALL_VECTOR_COUNT_CACHE_SECONDS <= 0:
        return vectors.owner_vector_count(space)
    key = (connection.settings_dict["NAME"], *owner, space)
    now = time.monotonic()
    cached = _vector_counts.get(key)
    if cached is not None and cached[1] > now:
        return cached[0]
    count = vectors.owner_vector_count(space)
    if len(_vector_counts) >= _VECTOR_COUNTS_MAX_ENTRIES:
        _vector_counts.clear()
    _vector_counts[key] = (count, now + settings.RECALL_VECTOR_COUNT_CACHE_SECONDS)
    return count


def use_exact_search(space: str, owner: Optional[tuple] = None, *, ef_search: Optional[int] = None) -> bool:
    """Exact search while the owner has few vectors in ``space``; HNSW (with iterative
    scans for this transaction, ``ef_search`` recall's unless given) above
    settings.RECALL_EXACT_SEARCH_MAX_VECTORS.

    ``owner`` = (tenant_id, principal_id) of the current owner context lets the count be
    reused for a short while (see ``_vector_counts``); without it the count is taken now."""
    if _owner_vector_count(space, owner) <= settings.RECALL_EXACT_SEARCH_MAX_VECTORS:
        return True
    with connection.cursor() as cursor:
        vectors.hnsw_session_settings(cursor, ef_search=ef_search)
    return False

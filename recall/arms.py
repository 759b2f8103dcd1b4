"""The candidate arms: each runs one statement from ``recall.sql`` and returns its ranked,
bounded list of permitted candidates.

Every arm keeps at most ``arm_limit(max_items)`` = max(max_items × RECALL_ARM_ITEMS_FACTOR,
RECALL_ARM_MIN_CANDIDATES) candidates, ranked in SQL before that LIMIT; none of them
filters or re-sorts in Python. Call inside the owner's context.

The structured arm's broad anchors come from ``anchor_types``: the request's explicit
belief types, else a small keyword table over the query's words (``ANCHOR_KEYWORDS``).
It is deliberately small and transparent — a baseline, not an intent classifier — and an
anchor only orders candidates; it never filters any out.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Optional, Sequence
from uuid import UUID

from django.conf import settings
from django.db import connection

from recall import sql, vectors
from recall.domain import SemanticSearch

# Words (lower case, whole words of the query; a trailing "*" matches any ending) that
# suggest which belief types a query is about. Tier-1 anchors enter fusion with the same
# rank weights as term matches, so words common in any question ("have", "when", "work")
# are deliberately absent: they would pull a whole type's newest beliefs into every context.
ANCHOR_KEYWORDS: dict[str, tuple[str, ...]] = {
    "preference": ("prefer*", "like", "likes", "liked", "favorite*", "favourite*", "love*", "hate*",
                   "dislike*", "enjoy*", "rather"),
    "constraint": ("allerg*", "cannot", "can't", "must", "never", "avoid*", "constraint*", "intoleran*",
                   "restriction*", "forbidden"),
    "relationship": ("wife", "husband", "partner", "friend*", "mother", "father", "mom", "mum", "dad",
                     "sister*", "brother*", "son", "daughter*", "colleague*", "boss", "family",
                     "relationship*"),
    "goal": ("goal*", "aim*", "want", "wants", "plan", "plans", "planning", "hope*", "target*"),
    "project": ("project*", "build*", "launch*"),
    "decision": ("decide*", "decision*", "chose", "choose", "chosen", "picked", "settled"),
    "routine": ("routine*", "usually", "every", "daily", "weekly", "morning*", "evening*", "habit*",
                "schedule*"),
    "resource": ("owns", "car", "laptop", "phone", "bike", "account*", "device*"),
    "attribute": ("age", "birthday", "born", "height", "name", "live", "lives", "address", "job"),
    "event": ("happened", "trip", "visit*", "meeting*", "appointment*"),
}
_WORD = re.compile(r"[a-z0-9']+")


def anchor_types(query: str, explicit: Sequence[str] = ()) -> list[str]:
    """The belief types the structured arm anchors on, in the table's order."""
    if explicit:
        return sorted(set(explicit))
    words = set(_WORD.findall(query.lower()))
    found = []
    for belief_type, keywords in ANCHOR_KEYWORDS.items():
        for keyword in keywords:
            if keyword.endswith("*"):
                hit = any(word.startswith(keyword[:-1]) for word in words)
            else:
                hit = keyword in words
            if hit:
                found.append(belief_type)
                break
    return found


def arm_limit(max_items: int) -> int:
    return max(max_items * settings.RECALL_ARM_ITEMS_FACTOR, settings.RECALL_ARM_MIN_CANDIDATES)


@dataclass(frozen=True)
class Read:
    """What every statement of one recall shares: the predicate parameters
    (``sql.base_params``), current or historical content, the arm limit."""

    params: dict
    historical: bool
    limit: int


@dataclass(frozen=True)
class Candidate:
    id: UUID
    store_position: int
    signal: float  # the arm's own relevance: coverage, tier, cosine distance (0 for recent)


@dataclass(frozen=True)
class PreparedQuery:
    lexemes: list[str]
    phrase_query: str  # " normalised query " for whole-phrase subject matching


def prepare_query(query: str) -> PreparedQuery:
    with connection.cursor() as cursor:
        cursor.execute(sql.PREPARE_QUERY, {"query": query})
        lexemes, phrase_query = cursor.fetchone()
    return PreparedQuery(lexemes=sorted(lexemes or []), phrase_query=phrase_query)


def _run(statement: str, params: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


def sparse(
    read: Read, prepared: PreparedQuery, *, entity_ids: Sequence[str], anchors: Sequence[str],
) -> tuple[list[Candidate], list[Candidate]]:
    """(lexical, structured) candidates, each ranked and bounded in SQL."""
    lexical = bool(prepared.lexemes)  # only stop words or punctuation: no term can be covered
    statement = sql.sparse_arms(read.historical, lexical=lexical, entities=bool(entity_ids), anchors=bool(anchors))
    rows = _run(statement, {
        **read.params, "lexemes": prepared.lexemes, "tsquery": sql.tsquery_any(prepared.lexemes),
        "entity_ids": list(entity_ids), "phrase_query": prepared.phrase_query,
        "subject_keys": sql.subject_phrases(prepared.phrase_query),
        "anchor_types": list(anchors), "limit": read.limit,
    })
    arms: dict[str, list[Candidate]] = {"lexical": [], "structured": []}
    for arm, memory_id, position, signal in rows:
        arms[arm].append(Candidate(id=memory_id, store_position=position, signal=float(signal)))
    return arms["lexical"], arms["structured"]


def semantic(read: Read, query_vector: Sequence[float], space: str, *, exact: bool) -> list[Candidate]:
    """One search of the semantic arm in the given mode (no fallback: see ``semantic_search``)."""
    rows = _run(sql.semantic_arm(read.historical, exact=exact), {
        **read.params, "query_vector": sql.vector_literal(query_vector), "space": space, "limit": read.limit,
    })
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


def recent(read: Read) -> list[Candidate]:
    rows = _run(sql.recent_arm(read.historical), {**read.params, "limit": read.limit})
    return [Candidate(id=r[0], store_position=r[1], signal=0.0) for r in rows]


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


def use_exact_search(space: str, owner: Optional[tuple] = None) -> bool:
    """Exact search while the owner has few vectors in ``space``; HNSW (with iterative
    scans for this transaction) above settings.RECALL_EXACT_SEARCH_MAX_VECTORS.

    ``owner`` = (tenant_id, principal_id) of the current owner context lets the count be
    reused for a short while (see ``_vector_counts``); without it the count is taken now."""
    if _owner_vector_count(space, owner) <= settings.RECALL_EXACT_SEARCH_MAX_VECTORS:
        return True
    with connection.cursor() as cursor:
        vectors.hnsw_session_settings(cursor)
    return False


def rejoin(read: Read, ids: Sequence[UUID]) -> dict[UUID, tuple]:
    rows = _run(sql.rejoin(read.historical), {**read.params, "ids": sql.uuid_array(ids)})
    return {row[0]: row for row in rows}


def sources(read: Read, ids: Sequence[UUID]) -> dict[UUID, list[tuple[UUID, UUID]]]:
    found: dict[UUID, list[tuple[UUID, UUID]]] = {}
    for memory_id, event_id, part_id in _run(sql.SOURCES, {**read.params, "ids": sql.uuid_array(ids)}):
        found.setdefault(memory_id, []).append((event_id, part_id))
    return found



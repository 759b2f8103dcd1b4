"""The expansion arm: a structured second hop from the first pass's best candidates.

A question such as "what does my brother do for a living?" needs two beliefs about one
person — "Joris is the owner's brother" and "Joris works as a firefighter" — and only the
first resembles the question. After a first fusion of the lexical, structured and semantic
arms, the top ``RECALL_EXPANSION_SEEDS`` fused candidates become *seeds*; their *siblings*
are the other permitted originals about the same thing: the same normalised subject
(``recall_subject_key``) or an overlapping entity ID. For each seed its
``RECALL_EXPANSION_PER_SEED`` siblings nearest the query vector (cosine, the vector the
semantic arm already used) are kept, so the second hop spends its votes on the sibling that
answers the question rather than on every fact about that person. The list is ordered by
seed (the first pass's order), then distance, store position desc and ID, bounded by the
arm limit, and fused with the other arms under its own weight
(``RECALL_RRF_WEIGHTS["expansion"]``).

Hard predicates. Seeds and siblings are both read FROM ``recall.sql.permitted`` with the
recall's own ``sql.base_params`` — the same relation every other arm and the rejoin use — so
a sibling is never anything the request could not see (owner, lifecycle, erasure, validity
at the instant, sensitivity, scope, exclusions, type filter; for ``as_of`` the revision
current then, with its subject and entities). Vectors count only for the sibling's effective
content revision, as in the semantic arm. Seeds are themselves never siblings: the arm adds
what the first pass did not already hold at its top.

Runs only in hybrid recall with a usable query vector (dense stays the pure cosine baseline;
sparse has no vector to score siblings with). Never reads or writes labels, never formats a
value into SQL, never touches text outside the database.
"""
from __future__ import annotations

from typing import Sequence
from uuid import UUID

from django.conf import settings
from django.db import connection

from recall import sql
from recall.arms import Candidate, Read

POLICY = "expansion@1"  # same-subject / same-entity siblings of the fused top, by query cosine


def expansion_arm(historical: bool) -> str:
    """Per seed, its nearest siblings by cosine to the query; rows (id, store_position,
    seed ordinal, distance) in list order, LIMIT in SQL."""
    return sql.permitted(historical) + f""",
    seeds AS MATERIALIZED (
        SELECT p.id, p.subject_key, p.entity_ids, s.ordinal
        FROM unnest(%(seed_ids)s::uuid[]) WITH ORDINALITY AS s(id, ordinal)
        JOIN permitted p ON p.id = s.id
    ),
    -- Every permitted original sharing a seed's subject or an entity with any seed, found
    -- for all seeds at once (not once per seed); the few matches are paired with their
    -- seeds below.
    siblings AS MATERIALIZED ({_siblings(historical)}
    ),
    pairs AS MATERIALIZED (
        SELECT s.ordinal, b.id, b.store_position, (v.embedding <=> %(query_vector)s::vector) AS distance
        FROM siblings b
        JOIN seeds s ON (s.subject_key <> '' AND b.subject_key = s.subject_key) OR b.entity_ids && s.entity_ids
        JOIN recall_memoryvector v
          ON v.memory_id = b.id AND v.content_revision = b.revision
         AND v.tenant_id = %(tenant_id)s AND v.principal_id = %(principal_id)s AND v.space = %(space)s
    ),
    nearest AS (
        SELECT ordinal, id, store_position, distance,
               row_number() OVER (PARTITION BY ordinal ORDER BY distance, store_position DESC, id) AS n
        FROM pairs
    ),
    first_seed AS (
        SELECT DISTINCT ON (id) id, store_position, ordinal, distance
        FROM nearest WHERE n <= %(per_seed)s
        ORDER BY id, ordinal, distance
    )
    SELECT id, store_position, ordinal, distance FROM first_seed
    ORDER BY ordinal, distance, store_position DESC, id
    LIMIT %(limit)s
    """


_SIBLING_COLUMNS = "p.id, p.store_position, p.revision, p.subject_key, p.entity_ids"
_SEED_SUBJECTS = "ARRAY(SELECT subject_key FROM seeds WHERE subject_key <> '')"
_SEED_ENTITIES = "ARRAY(SELECT DISTINCT e FROM seeds, unnest(seeds.entity_ids) AS e)"
_NOT_A_SEED = "NOT (p.id = ANY(%(seed_ids)s::uuid[]))"


def _siblings(historical: bool) -> str:
    """A current recall looks siblings up by index — the subject by equality
    (``memory_recon_subject``), entities through ``recall_entity_matches`` (GIN, recall
    migration 0004) — and probes each in ``permitted``; a historical one scans the
    permitted originals (a belief revised since has no stored subject key for then)."""
    if historical:
        return f"""
        SELECT {_SIBLING_COLUMNS} FROM permitted p
        WHERE (p.subject_key = ANY({_SEED_SUBJECTS}) OR p.entity_ids && {_SEED_ENTITIES})
          AND {_NOT_A_SEED}"""
    return f"""
        SELECT {_SIBLING_COLUMNS} FROM permitted p
        WHERE p.subject_key = ANY({_SEED_SUBJECTS}) AND {_NOT_A_SEED}
        UNION
        SELECT {_SIBLING_COLUMNS}
        FROM recall_entity_matches({_SEED_ENTITIES}::varchar[]) e
        CROSS JOIN LATERAL (SELECT * FROM permitted p WHERE p.id = e.memory_id OFFSET 0) p
        WHERE {_NOT_A_SEED}"""


def enabled() -> bool:
    """Whether hybrid recall runs the arm (either bound at 0 switches it off)."""
    return settings.RECALL_EXPANSION_SEEDS > 0 and settings.RECALL_EXPANSION_PER_SEED > 0


def expand(read: Read, seed_ids: Sequence[UUID], query_vector: Sequence[float], space: str) -> list[Candidate]:
    """The expansion list for ``seed_ids`` (first-pass fused order); call inside the owner's
    context, in the same transaction as the other arms."""
    seeds = list(seed_ids)[: settings.RECALL_EXPANSION_SEEDS]
    if not seeds or not enabled():
        return []
    with connection.cursor() as cursor:
        cursor.execute(expansion_arm(read.historical), {
            **read.params, "seed_ids": seeds, "query_vector": sql.vector_literal(query_vector), "space": space,
            "per_seed": settings.RECALL_EXPANSION_PER_SEED, "limit": read.limit,
        })
        rows = cursor.fetchall()
    return [Candidate(id=memory_id, store_position=position, signal=float(distance))
            for memory_id, position, _ordinal, distance in rows]

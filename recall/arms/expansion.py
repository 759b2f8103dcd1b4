"""The expansion arm: a structured second hop from the first fusion's best candidates.

A question such as "what does my brother do for a living?" needs two beliefs about one
person — "Joris is the owner's brother" and "Joris works as a firefighter" — and only the
first resembles the question. So the top ``RECALL_EXPANSION_SEEDS`` fused candidates become
*seeds*, and their *siblings* — the other permitted originals with the same normalised
subject or an overlapping, specific entity ID — are offered, each seed's
``RECALL_EXPANSION_PER_SEED`` nearest the query vector: the second hop spends its votes on
the sibling that answers the question, not on every fact about that person. The list is
fused with the other arms under its own weight (``RECALL_RRF_WEIGHTS["expansion"]``).

Seeds and siblings are both read FROM ``recall.arms.permitted`` with the recall's own
``base_params``, so a sibling is never anything the request could not see; vectors count
only for the sibling's effective content revision. Seeds are never siblings. Runs only in
hybrid recall with a usable query vector (dense stays the pure cosine baseline; sparse has
no vector to score siblings with). Never formats a value into SQL.
"""
from __future__ import annotations

from typing import Sequence
from uuid import UUID

from django.conf import settings

from recall.arms.permitted import Candidate, Read, permitted, run
from recall.arms.semantic import vector_literal


def expansion_arm(historical: bool) -> str:
    """Per seed, its nearest siblings by cosine to the query; rows (id, store_position,
    seed ordinal, distance) ordered by seed (the first fusion's order), then distance, store
    position desc and ID, LIMIT in SQL.

    Only *specific* keys relate: a subject or entity held by more than
    ``RECALL_EXPANSION_MAX_KEY_ORIGINALS`` of the owner's active originals relates nothing
    and is ignored whole, never truncated — so a person with 3,000 facts in a large bank
    cannot turn one seed into 3,000 vector comparisons. The default bound is above every key
    of the evaluation corpora, where it changes no result.
    """
    return permitted(historical) + f""",
    seeds AS MATERIALIZED (
        SELECT p.id, p.subject_key, p.entity_ids, s.ordinal
        FROM unnest(%(seed_ids)s::uuid[]) WITH ORDINALITY AS s(id, ordinal)
        JOIN permitted p ON p.id = s.id
    ),
    -- The seeds' keys with up to one member past the breadth bound each: a subject by its
    -- index (memory_recon_subject), an entity through recall_entity_matches (GIN).
    keys AS MATERIALIZED (
        SELECT 'subject' AS kind, k.key, ARRAY(
            SELECT m.id FROM memory_memory m
            WHERE m.tenant_id = %(tenant_id)s AND m.principal_id = %(principal_id)s
              AND m.recall_subject_key = k.key AND m.erased_at IS NULL AND m.status = 'active'
            LIMIT %(key_bound)s + 1) AS members
        FROM (SELECT DISTINCT subject_key AS key FROM seeds WHERE subject_key <> '') k
        UNION ALL
        SELECT 'entity', k.key, ARRAY(
            SELECT memory_id FROM recall_entity_matches(ARRAY[k.key]::varchar[], %(key_bound)s + 1)) AS members
        FROM (SELECT DISTINCT e AS key FROM seeds, unnest(seeds.entity_ids) AS e) k
    ),
    specific AS MATERIALIZED (SELECT kind, key, members FROM keys WHERE cardinality(members) <= %(key_bound)s),
    seed_keys AS MATERIALIZED (
        SELECT s.ordinal,
               CASE WHEN s.subject_key IN (SELECT key FROM specific WHERE kind = 'subject') THEN s.subject_key END
                   AS subject_key,
               ARRAY(SELECT e FROM unnest(s.entity_ids) AS e WHERE e IN (SELECT key FROM specific WHERE kind = 'entity'))
                   AS entity_ids
        FROM seeds s
    ),
    -- Every permitted original sharing a specific key with any seed, found for all seeds at
    -- once (not once per seed); the few matches are paired with their seeds below.
    siblings AS MATERIALIZED ({_siblings(historical)}
    ),
    pairs AS MATERIALIZED (
        SELECT s.ordinal, b.id, b.store_position, (v.embedding <=> %(query_vector)s::vector) AS distance
        FROM siblings b
        JOIN seed_keys s ON b.subject_key = s.subject_key OR b.entity_ids && s.entity_ids
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
_NOT_A_SEED = "NOT (p.id = ANY(%(seed_ids)s::uuid[]))"


def _siblings(historical: bool) -> str:
    """A current recall probes the specific keys' members (already read by index) in
    ``permitted``; a historical one scans its permitted originals for the keys (a belief
    revised since has no stored subject or entities for then)."""
    if historical:
        return f"""
        SELECT {_SIBLING_COLUMNS} FROM permitted p
        WHERE (p.subject_key = ANY(ARRAY(SELECT key FROM specific WHERE kind = 'subject'))
               OR p.entity_ids && ARRAY(SELECT key FROM specific WHERE kind = 'entity'))
          AND {_NOT_A_SEED}"""
    return f"""
        SELECT {_SIBLING_COLUMNS}
        FROM (SELECT DISTINCT unnest(members) AS memory_id FROM specific) u
        CROSS JOIN LATERAL (SELECT * FROM permitted p WHERE p.id = u.memory_id OFFSET 0) p
        WHERE {_NOT_A_SEED}"""


def enabled() -> bool:
    """Whether hybrid recall runs the arm (either bound at 0 switches it off)."""
    return settings.RECALL_EXPANSION_SEEDS > 0 and settings.RECALL_EXPANSION_PER_SEED > 0


def expand(read: Read, seed_ids: Sequence[UUID], query_vector: Sequence[float], space: str) -> list[Candidate]:
    """The expansion list for ``seed_ids`` (first-fusion order); call inside the owner's
    context, in the same transaction as the other arms."""
    seeds = list(seed_ids)[: settings.RECALL_EXPANSION_SEEDS]
    if not seeds or not enabled():
        return []
    rows = run(expansion_arm(read.historical), {
        **read.params, "seed_ids": seeds, "query_vector": vector_literal(query_vector), "space": space,
        "per_seed": settings.RECALL_EXPANSION_PER_SEED, "key_bound": settings.RECALL_EXPANSION_MAX_KEY_ORIGINALS,
        "limit": read.limit,
    })
    return [Candidate(id=memory_id, store_position=position, signal=float(distance))
            for memory_id, position, _ordinal, distance in rows]

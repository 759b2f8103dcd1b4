"""The sparse channel: the lexical and structured arms, in one statement over ``permitted``.

Each arm is ranked and limited on its own, in SQL, after every hard predicate; they share
one round trip (and, for a historical recall, one scan). Rows: (arm, id, store_position,
signal).

Speed. Forced RLS keeps the planner from using non-leakproof operators (``tsvector @@
tsquery``, array ``&&``) as index conditions for the runtime role, so neither a GIN index
nor a per-row ``to_tsvector`` (~40 µs a row) can serve recall directly. The arms read the
stored generated columns ``recall_document`` (that same tsvector) and ``recall_subject_key``
(the normalised subject) of ``memory_memory`` (memory migration 0003). A current recall
finds full-text and entity matches through the SECURITY DEFINER lookups of recall migration
0004, which return IDs from the GIN indexes and nothing else, and probes each in
``permitted``; subjects are matched by equality (a btree serves that). A historical recall
reads the stored columns for beliefs whose current revision *is* the one current at
``as_of`` and computes the identical expressions from the snapshot for beliefs revised
since, in one scan of the owner's permitted originals.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from django.db import connection

from recall.arms import lexical as lexical_arm
from recall.arms import structured as structured_arm
from recall.arms.permitted import NORMALIZE, Candidate, Read, permitted, run

QUERY_CONFIG = "english"
# Distinct lexemes of the query (a tsvector holds each lexeme once: repeated query terms
# get no extra vote) and the query padded for whole-phrase subject matching.
PREPARE_QUERY = f"""
    SELECT tsvector_to_array(to_tsvector('{QUERY_CONFIG}'::regconfig, %(query)s)),
           ' ' || {NORMALIZE.format(value="%(query)s")} || ' '
"""


@dataclass(frozen=True)
class PreparedQuery:
    lexemes: list[str]
    phrase_query: str  # " normalised query " for whole-phrase subject matching


def prepare_query(query: str) -> PreparedQuery:
    with connection.cursor() as cursor:
        cursor.execute(PREPARE_QUERY, {"query": query})
        lexemes, phrase_query = cursor.fetchone()
    return PreparedQuery(lexemes=sorted(lexemes or []), phrase_query=phrase_query)


def sparse_arms(historical: bool, *, lexical: bool, entities: bool = True, anchors: bool = True) -> str:
    """The lexical and structured arms in one statement. The lexical arm is omitted when
    the query has no lexemes (``lexical=False``); a request without entity IDs
    (``entities=False``) or anchor types (``anchors=False``) leaves that test out.

    A current recall finds its matches through indexes (``_sparse_indexed``); a historical
    one scans the owner's permitted originals (``_sparse_scan``), because a belief revised
    since ``as_of`` has no stored document for the content it had then.
    """
    if historical:
        return _sparse_scan(lexical=lexical, entities=entities, anchors=anchors)
    return _sparse_indexed(lexical=lexical, entities=entities, anchors=anchors)


def _sparse_indexed(*, lexical: bool, entities: bool, anchors: bool) -> str:
    """The sparse arms of a current recall, each an indexed lookup plus permitted probes."""
    ctes = [permitted(False)]
    arms = []
    if lexical:
        ctes.append(lexical_arm.INDEXED)
        arms.append(lexical_arm.INDEXED_ROWS)
    tier0, structured_rows = structured_arm.indexed(entities=entities, anchors=anchors)
    ctes.append(tier0)
    arms.append(structured_rows)
    return ",".join(ctes) + "\n    " + "\n    UNION ALL\n    ".join(arms)


def _sparse_scan(*, lexical: bool, entities: bool, anchors: bool) -> str:
    """The sparse arms of a historical recall, in one pass over its permitted originals.

    Each arm is still ranked and limited on its own before its LIMIT; they only share the
    scan, which keeps only rows matching an arm and computes coverage and tier for those
    only. Tests a request cannot satisfy are left out of the statement (the scan would
    evaluate them on every row).
    """
    # A historical snapshot's computed document is evaluated once per row: OFFSET 0 keeps
    # the lateral subquery from being inlined into each reference.
    source = "permitted p CROSS JOIN LATERAL (SELECT p.document AS doc, p.subject_key AS subject OFFSET 0) d"
    exact_match, anchored, tier = structured_arm.scan_tests(entities=entities, anchors=anchors)
    keep = " OR ".join(c for c in (lexical_arm.SCAN_MATCHES if lexical else None, exact_match, anchored) if c)
    return permitted(True) + f""",
    scored AS MATERIALIZED (
        SELECT p.id, p.store_position,
               {lexical_arm.SCAN_COVERAGE if lexical else "0"} AS coverage,
               {tier} AS tier
        FROM {source}
        WHERE {keep}
    )
    {lexical_arm.SCAN_ROWS}
    UNION ALL
    {structured_arm.SCAN_ROWS}
    """


def sparse(
    read: Read, prepared: PreparedQuery, *, entity_ids: Sequence[str], anchors: Sequence[str],
) -> tuple[list[Candidate], list[Candidate]]:
    """(lexical, structured) candidates, each ranked and bounded in SQL."""
    lexical = bool(prepared.lexemes)  # only stop words or punctuation: no term can be covered
    statement = sparse_arms(read.historical, lexical=lexical, entities=bool(entity_ids), anchors=bool(anchors))
    rows = run(statement, {
        **read.params, "lexemes": prepared.lexemes, "tsquery": lexical_arm.tsquery_any(prepared.lexemes),
        "entity_ids": list(entity_ids), "phrase_query": prepared.phrase_query,
        "subject_keys": structured_arm.subject_phrases(prepared.phrase_query),
        "anchor_types": list(anchors), "limit": read.limit,
    })
    arms: dict[str, list[Candidate]] = {"lexical": [], "structured": []}
    for arm, memory_id, position, signal in rows:
        arms[arm].append(Candidate(id=memory_id, store_position=position, signal=float(signal)))
    return arms["lexical"], arms["structured"]

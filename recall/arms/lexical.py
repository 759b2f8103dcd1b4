"""The lexical arm: permitted originals that share words with the query, by coverage.

Coverage is whole-lexeme query-term coverage: the number of distinct query lexemes in the
original's document (``recall_document``: subject + statement), length(doc) -
length(ts_delete(doc, query lexemes)); the ``@@`` filter (any query lexeme) is exactly
coverage >= 1. Ranked by coverage, then store position desc, then ID, and limited in SQL
after every hard predicate. The arm runs in the same statement as the structured arm
(``recall.arms.sparse``), which supplies the fragments below with their context.
"""
from __future__ import annotations

from recall.arms.permitted import permitted_probe


def tsquery_any(lexemes: list[str]) -> str:
    """``'a' | 'b' | ...`` in tsquery input syntax (quotes and backslashes doubled).

    Lexemes come from ``to_tsvector`` already normalised, so the tsquery is built without a
    second normalisation pass; it matches exactly the documents with coverage >= 1.
    """
    quoted = ("'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes)
    return " | ".join(quoted)


# A current recall: ``recall_document_matches`` (GIN, recall migration 0004) returns every
# matching original of the owner with its coverage; they are walked best first and each is
# probed in ``permitted`` until ``limit`` permitted ones are found, so relevance comes
# before the limit and no predicate can be skipped.
INDEXED = f"""
    lexical AS MATERIALIZED (
        SELECT d.memory_id AS id, d.store_position, d.coverage
        FROM (
            SELECT memory_id, store_position, coverage
            FROM recall_document_matches(%(tsquery)s::tsquery, %(lexemes)s::text[])
            ORDER BY coverage DESC, store_position DESC, memory_id
            OFFSET 0
        ) d
        CROSS JOIN LATERAL ({permitted_probe("d", revision=False)}) p
        ORDER BY d.coverage DESC, d.store_position DESC, d.memory_id
        LIMIT %(limit)s
    )"""
INDEXED_ROWS = "(SELECT 'lexical', id, store_position, coverage FROM lexical)"

# A historical recall scores each scanned row ``d.doc``, its document computed once.
SCAN_MATCHES = "d.doc @@ %(tsquery)s::tsquery"
SCAN_COVERAGE = f"CASE WHEN {SCAN_MATCHES} THEN length(d.doc) - length(ts_delete(d.doc, %(lexemes)s::text[])) ELSE 0 END"
SCAN_ROWS = """(SELECT 'lexical', id, store_position, coverage FROM scored WHERE coverage > 0
     ORDER BY coverage DESC, store_position DESC, id LIMIT %(limit)s)"""

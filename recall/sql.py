"""The SQL of recall: one permitted-originals relation, and the candidate arms built on it.

Everything that decides *whether* an original may be recalled lives in ``permitted`` below
and nowhere else; every arm (lexical, structured, semantic, recent) and the final rejoin
select FROM it, so no channel can widen the hard predicates, and every predicate is in SQL
before each arm's ORDER BY ... LIMIT.

``permitted`` yields one row per recallable original with its *effective content*: the
current row for a current recall, or — for ``as_of`` — the content of the revision current
at that instant (the latest ``memory_memoryrevision`` with ``recorded_at <= as_of``), chosen
before any relevance is computed. The hard predicates are applied twice:

* ``RESTRICTIONS`` on the current row, always: owner (RLS, and explicitly for the planner),
  erasure, current lifecycle (retracted and deleted never appear; an expired belief may
  appear for an instant at which it was valid), current sensitivity ≤ ceiling, current
  scope/portability, explicit exclusions. "Current restrictions still apply to historical
  content."
* ``content_predicate`` on the effective content: status active, valid at the instant
  (``valid_from <= at < expires_at``), sensitivity ≤ ceiling, scope/portability, and the
  explicit type filter. For a current recall this is the current row again, so only its
  tests that ``RESTRICTIONS`` does not already make (lifecycle, validity, type) are repeated.

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

Scope: a ``user``-scope recall sees ``user``-scope beliefs; a local recall (``project:X`` or
``session:S``) sees its own scope plus ``user``-scope beliefs that are portable. Local scopes
never cross.

This module must never format a caller's value into SQL text: every value is a named
parameter. Parameters every statement takes are built by ``base_params``.
"""
from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

# The lexical arm's document: the expression of the stored ``recall_document`` column
# (memory migration 0003), computed from a snapshot only for historical content.
DOCUMENT_TSVECTOR = "to_tsvector('english'::regconfig, {subject} || ' ' || {statement})"
QUERY_CONFIG = "english"
# Whole-phrase subject matching: lower case, runs of anything but letters/digits become one
# space. The same normalisation is applied to the query and to subjects, in SQL.
NORMALIZE = "btrim(regexp_replace(lower({value}), '[^[:alnum:]]+', ' ', 'g'))"

RESTRICTIONS = """
    m.tenant_id = %(tenant_id)s AND m.principal_id = %(principal_id)s
    AND m.erased_at IS NULL
    AND m.status = ANY(%(current_statuses)s::text[])
    AND m.sensitivity = ANY(%(sensitivities)s::text[])
    AND (m.scope = %(scope)s OR (%(scope)s <> 'user' AND m.scope = 'user' AND m.portable))
    AND NOT (m.id = ANY(%(exclude_ids)s::uuid[]))
"""


@dataclass(frozen=True)
class Content:
    """SQL expressions of one belief's effective content fields."""

    subject: str
    statement: str
    belief_type: str
    polarity: str
    derivation: str
    attribution: str
    authority: str
    sensitivity: str
    scope: str
    portable: str
    confidence: str
    evidence_at: str
    valid_from: str
    expires_at: str
    entity_ids: str
    status: str
    revision: str
    document: str  # the lexical tsvector of subject + statement
    subject_key: str  # the normalised subject, for whole-phrase matching


def _current() -> Content:
    return Content(
        subject="m.subject", statement="m.statement", belief_type="m.belief_type", polarity="m.polarity",
        derivation="m.derivation", attribution="m.attribution", authority="m.authority",
        sensitivity="m.sensitivity", scope="m.scope", portable="m.portable", confidence="m.confidence",
        evidence_at="m.evidence_at", valid_from="m.valid_from", expires_at="m.expires_at",
        entity_ids="m.entity_ids::text[]", status="m.status", revision="m.content_revision",
        document="m.recall_document", subject_key="m.recall_subject_key",
    )


def _snap(key: str, cast: str = "") -> str:
    text = f"(h.snapshot ->> '{key}')"
    return f"{text}::{cast}" if cast else text


def _historical() -> Content:
    current = _current()
    unchanged = "h.revision = m.content_revision"  # the snapshot equals the current row
    return Content(
        subject=_snap("subject"), statement=_snap("statement"), belief_type=_snap("belief_type"),
        polarity=_snap("polarity"), derivation=_snap("derivation"), attribution=_snap("attribution"),
        authority=_snap("authority"), sensitivity=_snap("sensitivity"), scope=_snap("scope"),
        portable=_snap("portable", "boolean"), confidence=_snap("confidence", "double precision"),
        evidence_at=_snap("evidence_at", "timestamptz"), valid_from=_snap("valid_from", "timestamptz"),
        expires_at=_snap("expires_at", "timestamptz"),
        entity_ids="ARRAY(SELECT jsonb_array_elements_text(h.snapshot -> 'entity_ids'))",
        status=_snap("status"), revision="h.revision",
        document=(f"CASE WHEN {unchanged} THEN {current.document} ELSE "
                  f"{DOCUMENT_TSVECTOR.format(subject=_snap('subject'), statement=_snap('statement'))} END"),
        subject_key=(f"CASE WHEN {unchanged} THEN {current.subject_key} ELSE "
                     f"{NORMALIZE.format(value=_snap('subject'))} END"),
    )

# The revision current at the instant: chosen per belief before relevance is computed.
# Revision 1 is the content the original was created with, so it is current from the
# original's creation time even when it was recorded later (a bank import keeps each
# original's created_at but records its first revision at import time); every later
# revision counts from the moment it was recorded.
_REVISION_AT = """
    JOIN LATERAL (
        SELECT r.revision, r.snapshot FROM memory_memoryrevision r
        WHERE r.memory_id = m.id
          AND (r.recorded_at <= %(as_of)s OR (r.revision = 1 AND m.created_at <= %(as_of)s))
        ORDER BY r.revision DESC LIMIT 1
    ) h ON true
"""


def content_predicate(c: Content, *, current_row: bool = False) -> str:
    """Lifecycle, validity at the instant, sensitivity, scope and type of effective content.

    Effective content that is ``expired`` (an original created already expired, e.g. a
    past version imported with its validity window) is recallable only inside its window:
    expiry is validity, and the window test below decides. A current recall never sees it,
    because ``RESTRICTIONS`` admits only ``active`` current rows then.

    ``current_row``: the effective content is the current row itself, whose sensitivity
    and scope ``RESTRICTIONS`` has just tested with the same parameters; the repeats are
    left out (every recall evaluates this on every permitted row of the owner).
    """
    repeated = "" if current_row else f"""
    AND {c.sensitivity} = ANY(%(sensitivities)s::text[])
    AND ({c.scope} = %(scope)s OR (%(scope)s <> 'user' AND {c.scope} = 'user' AND {c.portable}))"""
    return f"""
    ({c.status} = 'active' OR ({c.status} = 'expired' AND {c.expires_at} IS NOT NULL))
    AND {c.valid_from} <= %(at)s AND ({c.expires_at} IS NULL OR {c.expires_at} > %(at)s){repeated}
    AND (cardinality(%(belief_types)s::text[]) = 0 OR {c.belief_type} = ANY(%(belief_types)s::text[]))
    """


def permitted(historical: bool) -> str:
    """``WITH permitted AS NOT MATERIALIZED (...)``: inlined into each arm so its predicates
    are planned together with the arm's ORDER BY and LIMIT (unused columns cost nothing)."""
    c = _historical() if historical else _current()
    return f"""
    WITH permitted AS NOT MATERIALIZED (
        SELECT m.id, m.store_position, {c.revision} AS revision,
               {c.subject} AS subject, {c.statement} AS statement, {c.belief_type} AS belief_type,
               {c.polarity} AS polarity, {c.derivation} AS derivation,
               {c.attribution} AS attribution, {c.authority} AS authority,
               {c.sensitivity} AS sensitivity, {c.confidence} AS confidence,
               {c.evidence_at} AS evidence_at, {c.valid_from} AS valid_from,
               {c.expires_at} AS expires_at, {c.entity_ids} AS entity_ids,
               {c.document} AS document, {c.subject_key} AS subject_key
        FROM memory_memory m {_REVISION_AT if historical else ""}
        WHERE {RESTRICTIONS} AND {content_predicate(c, current_row=not historical)}
    )
    """


def base_params(
    *, tenant_id, principal_id, at, as_of, sensitivities: list[str], scope: str,
    exclude_ids: list, belief_types: list[str],
) -> dict:
    return {
        "tenant_id": tenant_id, "principal_id": principal_id, "at": at, "as_of": as_of,
        # A historical recall may show a belief that has expired since; never a retracted
        # or deleted one.
        "current_statuses": ["active", "expired"] if as_of is not None else ["active"],
        "sensitivities": sensitivities, "scope": scope, "exclude_ids": exclude_ids,
        "belief_types": belief_types,
    }


# --- query preparation ---------------------------------------------------------------

# Distinct lexemes of the query (a tsvector holds each lexeme once: repeated query terms
# get no extra vote) and the query padded for whole-phrase subject matching.
PREPARE_QUERY = f"""
    SELECT tsvector_to_array(to_tsvector('{QUERY_CONFIG}'::regconfig, %(query)s)),
           ' ' || {NORMALIZE.format(value="%(query)s")} || ' '
"""


# Longer than any normalised subject can be (subjects are at most 200 characters,
# memory.domain.MemoryContent; normalising never lengthens ASCII and rarely anything else).
SUBJECT_KEY_MAX_CHARS = 400


def subject_phrases(phrase_query: str) -> list[str]:
    """Every run of consecutive words of the normalised query, up to SUBJECT_KEY_MAX_CHARS.

    A subject is a whole phrase of the query exactly when its normalised key is one of
    these (both are lower-case words of letters and digits joined by single spaces), so
    ``subject_key = ANY(phrases)`` — an equality a btree index serves — replaces testing
    every subject against the query with ``strpos``. A query of n words has at most
    n(n+1)/2 phrases, far fewer for long queries (the length bound).
    """
    words = [w for w in phrase_query.split(" ") if w]
    phrases: dict[str, None] = {}
    for start, word in enumerate(words):
        phrase = word
        phrases[phrase] = None
        for following in words[start + 1:]:
            if len(phrase) + 1 + len(following) > SUBJECT_KEY_MAX_CHARS:
                break
            phrase = f"{phrase} {following}"
            phrases[phrase] = None
    return list(phrases)


def tsquery_any(lexemes: list[str]) -> str:
    """``'a' | 'b' | ...`` in tsquery input syntax (quotes and backslashes doubled).

    Lexemes come from ``to_tsvector`` already normalised, so the tsquery is built without a
    second normalisation pass; it matches exactly the documents with coverage >= 1.
    """
    quoted = ("'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes)
    return " | ".join(quoted)


# --- arms --------------------------------------------------------------------------------

def sparse_arms(historical: bool, *, lexical: bool, entities: bool = True, anchors: bool = True) -> str:
    """The lexical and structured arms in one statement. Rows: (arm, id, store_position, signal).

    Lexical: whole-lexeme query-term coverage = the number of distinct query lexemes in
    the document, length(doc) - length(ts_delete(doc, query lexemes)); the @@ filter (any
    query lexeme) is exactly coverage >= 1. Ranked by coverage, then store position desc,
    then id. Omitted when the query has no lexemes (``lexical=False``).

    Structured: tier 0 when the belief's entity IDs overlap the request's or its
    normalised subject is a whole phrase of the normalised query; tier 1 when its type is
    an anchor type. Ranked by tier, then store position desc, then id. A request without
    entity IDs (``entities=False``) or anchor types (``anchors=False``) leaves that test
    out of the statement.

    Each arm is ranked and limited on its own, in SQL, after every hard predicate. A
    current recall finds its matches through indexes (``_sparse_indexed``); a historical
    one scans the owner's permitted originals (``_sparse_scan``), because a belief revised
    since ``as_of`` has no stored document for the content it had then.
    """
    if historical:
        return _sparse_scan(lexical=lexical, entities=entities, anchors=anchors)
    return _sparse_indexed(lexical=lexical, entities=entities, anchors=anchors)


def _sparse_indexed(*, lexical: bool, entities: bool, anchors: bool) -> str:
    """The sparse arms of a current recall, each an indexed lookup plus permitted probes.

    * Lexical: ``recall_document_matches`` (GIN, recall migration 0004) returns every
      matching original of the owner with its coverage; they are walked best first and
      each is probed in ``permitted`` until ``limit`` permitted ones are found, so
      relevance comes before the limit and no predicate can be skipped.
    * Structured tier 0: subjects equal to one of the query's word runs
      (``subject_phrases``; the btree ``memory_recon_subject`` serves the equality) and
      ``recall_entity_matches`` (GIN), each probed in ``permitted``.
    * Structured tier 1: per anchor type, the newest permitted beliefs of that type in
      ``memory_recall_type_order`` order, stopping at ``limit``; tier-0 rows are not
      repeated.
    """
    ctes = [permitted(False)]
    arms = []
    if lexical:
        ctes.append(f"""
    lexical AS MATERIALIZED (
        SELECT d.memory_id AS id, d.store_position, d.coverage
        FROM (
            SELECT memory_id, store_position, coverage
            FROM recall_document_matches(%(tsquery)s::tsquery, %(lexemes)s::text[])
            ORDER BY coverage DESC, store_position DESC, memory_id
            OFFSET 0
        ) d
        CROSS JOIN LATERAL ({_permitted_probe("d", revision=False)}) p
        ORDER BY d.coverage DESC, d.store_position DESC, d.memory_id
        LIMIT %(limit)s
    )""")
        arms.append("(SELECT 'lexical', id, store_position, coverage FROM lexical)")
    exact = ["SELECT p.id, p.store_position FROM permitted p WHERE p.subject_key = ANY(%(subject_keys)s::text[])"]
    if entities:
        exact.append(f"""SELECT p.id, p.store_position
            FROM recall_entity_matches(%(entity_ids)s::varchar[]) e
            CROSS JOIN LATERAL ({_permitted_probe("e", revision=False)}) p""")
    ctes.append(f"""
    tier0 AS MATERIALIZED (
        {" UNION ".join(exact)}
    )""")
    structured = ["(SELECT id, store_position, 0 AS tier FROM tier0 ORDER BY store_position DESC, id LIMIT %(limit)s)"]
    if anchors:
        structured.append("""(SELECT a.id, a.store_position, 1 AS tier
         FROM unnest(%(anchor_types)s::text[]) AS t(belief_type)
         CROSS JOIN LATERAL (
             SELECT p.id, p.store_position FROM permitted p
             WHERE p.belief_type = t.belief_type AND NOT (p.id = ANY(ARRAY(SELECT id FROM tier0)))
             ORDER BY p.store_position DESC, p.id
             LIMIT %(limit)s
         ) a)""")
    arms.append(f"""(SELECT 'structured', id, store_position, tier FROM (
        {" UNION ALL ".join(structured)}
    ) s ORDER BY tier, store_position DESC, id LIMIT %(limit)s)""")
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
    doc, subject = "d.doc", "d.subject"
    matches = f"{doc} @@ %(tsquery)s::tsquery"
    coverage = f"length({doc}) - length(ts_delete({doc}, %(lexemes)s::text[]))"
    exact = [f"({subject} <> '' AND strpos(%(phrase_query)s, ' ' || {subject} || ' ') > 0)"]
    if entities:
        exact.insert(0, "p.entity_ids && %(entity_ids)s::text[]")
    exact_match = " OR ".join(exact)
    anchored = "p.belief_type = ANY(%(anchor_types)s::text[])" if anchors else None
    tier = f"CASE WHEN {exact_match} THEN 0" + (f" WHEN {anchored} THEN 1" if anchored else "") + " END"
    keep = " OR ".join(c for c in (matches if lexical else None, exact_match, anchored) if c)
    return permitted(True) + f""",
    scored AS MATERIALIZED (
        SELECT p.id, p.store_position,
               {f"CASE WHEN {matches} THEN {coverage} ELSE 0 END" if lexical else "0"} AS coverage,
               {tier} AS tier
        FROM {source}
        WHERE {keep}
    )
    (SELECT 'lexical', id, store_position, coverage FROM scored WHERE coverage > 0
     ORDER BY coverage DESC, store_position DESC, id LIMIT %(limit)s)
    UNION ALL
    (SELECT 'structured', id, store_position, tier FROM scored WHERE tier IS NOT NULL
     ORDER BY tier, store_position DESC, id LIMIT %(limit)s)
    """


def semantic_arm(historical: bool, *, exact: bool) -> str:
    """Nearest vectors of permitted originals by cosine distance, LIMIT in SQL.

    A vector counts only for the content revision it was computed from: the current one,
    or for ``as_of`` the revision current at that instant (current vectors never stand in
    for past evidence).

    Both modes walk the owner's vectors nearest first and look each one up in
    ``permitted`` (one probe by ID, ``_permitted_probe``) until ``limit`` permitted
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
    (``vectors.hnsw_session_settings``), filtered by the same probe before its LIMIT, then
    re-sorts the relaxed-order result.
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
        CROSS JOIN LATERAL ({_permitted_probe("d")}) p
        ORDER BY d.distance
        LIMIT %(limit)s"""
    else:
        nearest = f"""
        SELECT p.id, p.store_position, d.distance
        FROM (
            SELECT v.memory_id, v.content_revision, {distance} AS distance
            FROM recall_memoryvector v
            WHERE {owner_space}
              AND EXISTS ({_permitted_probe("v")})
            ORDER BY {distance}
            LIMIT %(limit)s
        ) d
        CROSS JOIN LATERAL ({_permitted_probe("d")}) p"""
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
    """


def _permitted_probe(row: str, *, revision: bool = True) -> str:
    """The permitted original of ``row.memory_id`` — for a vector row (``revision``), only
    if permitted at the vector's content revision."""
    at_revision = f" AND p.revision = {row}.content_revision" if revision else ""
    return f"""
            SELECT p.id, p.store_position FROM permitted p
            WHERE p.id = {row}.memory_id{at_revision}
            OFFSET 0"""


def recent_arm(historical: bool) -> str:
    """The legacy bounded newest-first selection (frozen controls only)."""
    return permitted(historical) + """
    SELECT p.id, p.store_position FROM permitted p
    ORDER BY p.store_position DESC, p.id
    LIMIT %(limit)s
    """


def rejoin(historical: bool) -> str:
    """The permitted originals among ``ids``, re-read with their effective content.

    Run after fusion and before the result limit: whatever an arm returned, only what is
    permitted now (in this statement's snapshot) is ranked, rendered or returned.
    """
    return permitted(historical) + """
    SELECT p.id, p.store_position, p.revision, p.subject, p.statement, p.belief_type,
           p.polarity, p.derivation, p.attribution, p.authority, p.sensitivity, p.confidence,
           p.evidence_at, p.valid_from, p.expires_at, p.entity_ids
    FROM permitted p
    WHERE p.id = ANY(%(ids)s::uuid[])
    """


SOURCES = """
    SELECT memory_id, event_id, part_id FROM memory_memorysource
    WHERE tenant_id = %(tenant_id)s AND principal_id = %(principal_id)s
      AND memory_id = ANY(%(ids)s::uuid[])
    ORDER BY memory_id, position
"""


def uuid_array(ids) -> str:
    """UUIDs as one ``uuid[]`` text literal, for ``%(ids)s::uuid[]``.

    Django's psycopg cursor binds client-side and quotes a list of UUID objects element by
    element: ~1.7 ms for 500 IDs, against ~0.7 ms for one string the server parses itself.
    A recall sends a few hundred IDs to the rejoin and about a thousand to its trace.
    """
    return "{" + ",".join(str(i if isinstance(i, UUID) else UUID(str(i))) for i in ids) + "}"


def vector_literal(vector) -> str:
    """pgvector's text form; the caller has checked the values are finite."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"

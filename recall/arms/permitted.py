"""The permitted originals: the one relation every candidate arm and the rejoin select FROM.

Everything that decides *whether* an original may be recalled lives in ``permitted`` and
nowhere else; every arm and the final rejoin select FROM it, so no channel can widen the
hard predicates, and every predicate is in SQL before each arm's ORDER BY ... LIMIT.

``permitted`` yields one row per recallable original with its *effective content*: the
current row for a current recall, or — for ``as_of`` — the content of the revision current
at that instant, chosen before any relevance is computed. Current restrictions still apply
to historical content: they are tested on the current row (``RESTRICTIONS``) and again on
the effective content (``content_predicate``), with validity at the instant and the type
filter.

Scope: a ``user``-scope recall sees ``user``-scope beliefs; a local recall (``project:X`` or
``session:S``) sees its own scope plus portable ``user``-scope beliefs. Local scopes never
cross.

Every value is a named parameter, never formatted into SQL text (``base_params`` builds the
ones every statement takes). Call the runners inside the owner's context.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence
from uuid import UUID

from django.conf import settings
from django.db import connection

# The lexical arm's document: the expression of the stored ``recall_document`` column
# (memory migration 0003), computed from a snapshot only for historical content.
DOCUMENT_TSVECTOR = "to_tsvector('english'::regconfig, {subject} || ' ' || {statement})"
# Whole-phrase subject matching: lower case, runs of anything but letters/digits become one
# space. The same normalisation is applied to the query and to subjects, in SQL.
NORMALIZE = "btrim(regexp_replace(lower({value}), '[^[:alnum:]]+', ' ', 'g'))"

# On the current row, always: owner (RLS, and explicitly for the planner), erasure, current
# lifecycle (retracted and deleted never appear; an expired belief may appear for an instant
# at which it was valid), current sensitivity ≤ ceiling, current scope/portability, explicit
# exclusions.
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


def permitted_probe(row: str, *, revision: bool = True) -> str:
    """The permitted original of ``row.memory_id`` — for a vector row (``revision``), only
    if permitted at the vector's content revision."""
    at_revision = f" AND p.revision = {row}.content_revision" if revision else ""
    return f"""
            SELECT p.id, p.store_position FROM permitted p
            WHERE p.id = {row}.memory_id{at_revision}
            OFFSET 0"""


# --- what every arm's statement shares ---------------------------------------------------

def arm_limit(max_items: int) -> int:
    return max(max_items * settings.RECALL_ARM_ITEMS_FACTOR, settings.RECALL_ARM_MIN_CANDIDATES)


@dataclass(frozen=True)
class Read:
    """What every statement of one recall shares: the predicate parameters
    (``base_params``), current or historical content, the arm limit."""

    params: dict
    historical: bool
    limit: int


@dataclass(frozen=True)
class Candidate:
    id: UUID
    store_position: int
    signal: float  # the arm's own relevance: coverage, tier, cosine distance (0 for recent)


def run(statement: str, params: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


# --- the rejoin and the sources of what was rendered ------------------------------------

def _rejoin_statement(historical: bool) -> str:
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


def rejoin(read: Read, ids: Sequence[UUID]) -> dict[UUID, tuple]:
    rows = run(_rejoin_statement(read.historical), {**read.params, "ids": uuid_array(ids)})
    return {row[0]: row for row in rows}


SOURCES = """
    SELECT memory_id, event_id, part_id FROM memory_memorysource
    WHERE tenant_id = %(tenant_id)s AND principal_id = %(principal_id)s
      AND memory_id = ANY(%(ids)s::uuid[])
    ORDER BY memory_id, position
"""


def sources(read: Read, ids: Sequence[UUID]) -> dict[UUID, list[tuple[UUID, UUID]]]:
    found: dict[UUID, list[tuple[UUID, UUID]]] = {}
    for memory_id, event_id, part_id in run(SOURCES, {**read.params, "ids": uuid_array(ids)}):
        found.setdefault(memory_id, []).append((event_id, part_id))
    return found


def uuid_array(ids) -> str:
    """UUIDs as one ``uuid[]`` text literal, for ``%(ids)s::uuid[]``.

    Django's psycopg cursor binds client-side and quotes a list of UUID objects element by
    element: ~1.7 ms for 500 IDs, against ~0.7 ms for one string the server parses itself.
    A recall sends a few hundred IDs to the rejoin and about a thousand to its trace.
    """
    return "{" + ",".join(str(i if isinstance(i, UUID) else UUID(str(i))) for i in ids) + "}"

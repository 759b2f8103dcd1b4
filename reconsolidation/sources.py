"""Source views: the current originals a group may use, read under the owner's policies.

A ``SourceView`` is the frozen, ORM-free picture of one eligible original at one content
revision — the only thing the rules provider, the equivalence key and the summary planner
see. ``read_sources`` rechecks eligibility (``sql.EXCLUSION_REASON``: lifecycle, erasure,
expiry, direct derivation, sensitivity ceiling, scope, owner evidence) and the expected
revision, so a source changed since its group was queued is simply absent; the caller
decides whether what remains is still worth processing. ``locked_sources`` is the same
read FOR UPDATE in sorted UUID order, for the commit and approval transactions.
``allowed_sensitivities`` is the sensitivity ceiling every maintenance read binds
(inventory pages, neighbour lookups and these views alike).

Statements live in these values only for the duration of a unit of work; nothing here is
persisted or logged.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from django.db import connection

from memory import vocabulary
from memory.evidence import admitted_event
from reconsolidation import bounds
from reconsolidation.inventory import sql
from reconsolidation.domain import InputRef
from reconsolidation.rows import owner_fields
from veetbot.identity import Principal

_COLUMNS = (
    "id", "content_revision", "creation_sequence", "statement", "subject", "belief_type", "claim_kind", "polarity",
    "derivation", "attribution", "scope", "portable", "authority", "sensitivity", "confidence", "evidence_at",
    "valid_from", "expires_at", "entity_ids", "claim_sha256",
)


def allowed_sensitivities() -> list[str]:
    """The sensitivities a maintenance read admits: up to ``RECON_SENSITIVITY_CEILING``."""
    ceiling = vocabulary.SENSITIVITY_RANK[bounds.RECON_SENSITIVITY_CEILING]
    return list(vocabulary.SENSITIVITIES[: ceiling + 1])


# The admitted leaves of originals: owner user.message.created events, not excluded or erased.
EVIDENCE = """
    SELECT s.memory_id, e.id, e.session_id, e.created_at
    FROM memory_memorysource s
    JOIN memory_event e ON e.id = s.event_id AND e.tenant_id = s.tenant_id AND e.principal_id = s.principal_id
    WHERE s.tenant_id = %(tenant_id)s AND s.principal_id = %(principal_id)s AND s.memory_id = ANY(%(ids)s::uuid[])
      AND """ + admitted_event("e") + """
    ORDER BY s.memory_id, e.id
"""


@dataclass(frozen=True)
class SourceView:
    memory_id: UUID
    content_revision: int
    creation_sequence: int
    statement: str
    subject: str
    belief_type: str
    claim_kind: str
    polarity: str
    derivation: str
    attribution: str
    scope: str
    portable: bool
    authority: str
    sensitivity: str
    confidence: float
    evidence_at: datetime
    valid_from: datetime
    expires_at: Optional[datetime]
    entity_ids: tuple[str, ...] = ()
    claim_sha256: str = ""
    # The conversations of its admitted owner evidence (what a summary's value rule counts).
    session_ids: tuple[UUID, ...] = ()

    @property
    def ref(self) -> InputRef:
        return InputRef(memory_id=self.memory_id, content_revision=self.content_revision)


# The sessions of an original's admitted owner evidence (the leaves of ``EVIDENCE``).
_SESSIONS = """ARRAY(
    SELECT DISTINCT e.session_id FROM memory_memorysource s
    JOIN memory_event e ON e.id = s.event_id AND e.tenant_id = s.tenant_id AND e.principal_id = s.principal_id
    WHERE s.memory_id = m.id AND s.tenant_id = m.tenant_id AND s.principal_id = m.principal_id
      AND """ + admitted_event("e") + """
    ORDER BY e.session_id)"""


def _select(principal: Principal, ids: Sequence[UUID], now: datetime, *, lock: bool) -> dict[UUID, tuple]:
    columns = ", ".join(f"m.{name}" for name in _COLUMNS)
    statement = (
        f"SELECT {columns}, {_SESSIONS}, {sql.EXCLUSION_REASON} FROM memory_memory m"
        " WHERE m.tenant_id = %(tenant_id)s AND m.principal_id = %(principal_id)s AND m.id = ANY(%(ids)s::uuid[])"
        " ORDER BY m.id" + (" FOR UPDATE OF m" if lock else "")
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, {**owner_fields(principal), "now": now, "sensitivities": allowed_sensitivities(),
                                   "ids": sorted(ids)})
        return {row[0]: row for row in cursor.fetchall()}


def _view(row: tuple) -> SourceView:
    values = dict(zip(_COLUMNS, row))
    values["memory_id"] = values.pop("id")
    values["entity_ids"] = tuple(values["entity_ids"] or ())
    values["session_ids"] = tuple(row[len(_COLUMNS)] or ())
    return SourceView(**values)


def current_sources(principal: Principal, refs: Sequence[InputRef], now: datetime, *, lock: bool = False
                    ) -> tuple[dict[UUID, SourceView], dict[UUID, str]]:
    """(eligible views at their expected revision, content-free reasons for the rest).
    Call inside ``owner_context``; with ``lock`` the rows are locked in sorted UUID order."""
    rows = _select(principal, [ref.memory_id for ref in refs], now, lock=lock)
    views, reasons = {}, {}
    for ref in refs:
        row = rows.get(ref.memory_id)
        if row is None:
            reasons[ref.memory_id] = "gone"
        elif row[1] != ref.content_revision:
            reasons[ref.memory_id] = "revision_changed"
        elif row[-1]:
            reasons[ref.memory_id] = row[-1]
        else:
            views[ref.memory_id] = _view(row[:-1])  # the exclusion reason is last
    return views, reasons


def evidence_events(principal: Principal, ids: Sequence[UUID]) -> dict[UUID, tuple[UUID, ...]]:
    """Each original's admitted owner events (sorted), the leaves of its support."""
    with connection.cursor() as cursor:
        cursor.execute(EVIDENCE, {**owner_fields(principal), "ids": list(ids)})
        found: dict[UUID, list[UUID]] = {}
        for memory_id, event_id, _session, _at in cursor.fetchall():
            found.setdefault(memory_id, []).append(event_id)
    return {key: tuple(sorted(value, key=str)) for key, value in found.items()}

"""The memory browser's reads: pages of originals or derived items, newest first, and for
one original the operations that used it and the conversations it came from.

The owner's own view (ceiling restricted). Pages are cut by a signed cursor of this module,
bound to owner and filters, holding only a store position and an ID; filters are closed
codes (kind, status, type), so a browser URL carries no text. Everything is read fresh.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional
from uuid import UUID

from django.core import signing

from memory import selectors as memory_selectors
from memory import vocabulary
from reconsolidation.selectors.derived import derived_browse
from reconsolidation.selectors.operations import operations_using
from review_ui import words
from veetbot.identity import Principal
from veetbot.rls import owner_context

CEILING = vocabulary.SENSITIVITIES[-1]
PAGE_SIZE = 25
USES_SHOWN = 50  # operations listed under one original
KINDS = {"originals": "Originals", "derived": "Summaries and connections"}
STATUSES = ("active", "retracted", "expired")  # erased originals have no words left to show
SALT = "review_ui.memories.cursor.v1"


class UnknownFilter(ValueError):
    """A filter or cursor this browser did not issue."""


@dataclass(frozen=True)
class Row:
    id: UUID
    kind: str  # in words
    subject: str
    text: str
    belief_type: str
    status: str  # in words
    at: datetime
    operation_id: Optional[UUID]  # derived: the operation that made it


@dataclass(frozen=True)
class Page:
    rows: tuple[Row, ...]
    next_cursor: Optional[str]


@dataclass(frozen=True)
class Use:
    operation_id: UUID
    kind: str
    state: str
    at: datetime


def _bound(principal: Principal, kind: str, status: str, belief_type: str) -> str:
    return f"{principal.tenant_id}/{principal.principal_id}/{kind}/{status}/{belief_type}"


def _after(principal: Principal, cursor: Optional[str], bound: str) -> Optional[tuple[int, UUID]]:
    if not cursor:
        return None
    try:
        payload = signing.loads(cursor, salt=SALT)
        if payload["f"] != bound:
            raise KeyError("f")
        return int(payload["p"]), UUID(payload["i"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise UnknownFilter("cursor")


def page(principal: Principal, *, kind: str = "originals", status: str = "", belief_type: str = "",
         cursor: Optional[str] = None) -> Page:
    if kind not in KINDS or (status and status not in STATUSES) or (belief_type and belief_type not in vocabulary.BELIEF_TYPES):
        raise UnknownFilter("filter")
    if kind == "derived" and status:
        raise UnknownFilter("status")  # derived items listed here are the active ones
    bound = _bound(principal, kind, status, belief_type)
    after = _after(principal, cursor, bound)
    if kind == "originals":
        with owner_context(principal):
            views = memory_selectors.memory_page(ceiling=CEILING, limit=PAGE_SIZE + 1, after=after,
                                                 status=status or None, belief_type=belief_type or None)
        more, views = len(views) > PAGE_SIZE, views[:PAGE_SIZE]
        rows = [Row(id=v.id, kind=words.RECORD_KIND["belief"], subject=v.subject, text=v.statement,
                    belief_type=v.belief_type, status=words.MEMORY_STATUS.get(v.status, v.status),
                    at=v.evidence_at, operation_id=None) for v in views]
        last = (views[-1].store_position, views[-1].id) if views else None
    else:
        found = derived_browse(principal=principal, ceiling=CEILING, limit=PAGE_SIZE + 1, after=after,
                               belief_type=belief_type or None)
        more, found = len(found) > PAGE_SIZE, found[:PAGE_SIZE]
        rows = [Row(id=v.id, kind=words.RECORD_KIND[v.record_kind], subject=v.content.subject,
                    text=" ".join(c.text for c in v.content.clauses), belief_type=v.content.belief_type,
                    status="active", at=v.content.evidence_at, operation_id=v.operation_id) for _p, v in found]
        last = (found[-1][0], found[-1][1].id) if found else None
    next_cursor = (signing.dumps({"p": last[0], "i": str(last[1]), "f": bound}, salt=SALT)
                   if more and last else None)
    return Page(rows=tuple(rows), next_cursor=next_cursor)


def uses(principal: Principal, memory_id: UUID) -> tuple[Use, ...]:
    """The operations that used this original (as input or support), newest first."""
    operations = operations_using(principal=principal, memory_id=memory_id, limit=USES_SHOWN)
    return tuple(Use(operation_id=o.id, kind=words.KIND.get(o.kind, o.kind), state=words.STATE.get(o.state, o.state),
                     at=o.created_at) for o in operations)


def conversations(principal: Principal, memory_id: UUID) -> tuple[UUID, ...]:
    """The sessions holding the messages this original cites (still there to erase)."""
    with owner_context(principal):
        return memory_selectors.sessions_citing(memory_id=memory_id)

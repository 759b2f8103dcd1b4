"""Which operations a caller may see: one operation, or a page newest first (opaque metadata).

Visibility is decided before any bound: under a ceiling below ``restricted`` an operation
is visible only while its *complete* support — every input original, omitted summary
inputs included — still exists unerased at or below that ceiling; otherwise it is
NotFound (one read) or absent (lists), never partially shown. The owner's ``restricted``
view always sees the opaque metadata (IDs, kinds, states, instants; no content). The
filter runs in SQL before ``LIMIT``, so a page is filled with visible rows only.

Cursors are signed (``django.core.signing``, a salt of their own) and hold the last
visible ``(created_at, id)`` plus a fingerprint of owner, filters and ceiling: a cursor
never widens a read and a foreign or edited one is a validation error. Page size defaults
to ``RECON_OPERATIONS_PAGE_DEFAULT`` and is bounded by ``RECON_OPERATIONS_PAGE_MAX``.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Optional
from uuid import UUID

from django.core import signing

from memory import vocabulary
from reconsolidation import bounds
from reconsolidation.domain import OperationPage, OperationView
from reconsolidation.errors import Invalid, NotFound
from memory import selectors as memory_selectors
from reconsolidation.models import (
    OPERATION_KINDS, OPERATION_STATES, ReconsolidationDependency, ReconsolidationOperation,
)
from reconsolidation.rows import operation_view, owner_fields
from veetbot.identity import Principal
from veetbot.rls import owner_context

SALT = "reconsolidation.operations.list.v1"
# Originals one subject filter looks for among operation inputs, and how many recent
# operations suggest subjects to filter by.
SUBJECT_MATCH_MAX_ORIGINALS = 5000
RECENT_OPERATIONS_FOR_SUBJECTS = 500
MAX_CURSOR_CHARS = 512
TOP = vocabulary.SENSITIVITIES[-1]

# Every input original exists, is not erased and is at or below the ceiling.
_OPS = ReconsolidationOperation._meta.db_table
_SUPPORT_VISIBLE = f"""
    NOT EXISTS (
        SELECT 1 FROM unnest({_OPS}.input_ids) AS i(id)
        LEFT JOIN memory_memory m ON m.id = i.id AND m.tenant_id = {_OPS}.tenant_id
            AND m.principal_id = {_OPS}.principal_id
        WHERE m.id IS NULL OR m.erased_at IS NOT NULL OR NOT (m.sensitivity = ANY(%s::text[]))
    )
"""


def _allowed(ceiling: str) -> Optional[list[str]]:
    if ceiling not in vocabulary.SENSITIVITIES:
        raise Invalid(f"ceiling: one of {', '.join(vocabulary.SENSITIVITIES)}")
    if ceiling == TOP:
        return None
    return list(vocabulary.SENSITIVITIES[: vocabulary.SENSITIVITY_RANK[ceiling] + 1])


def _fingerprint(principal: Principal, ceiling: str, kind: Optional[str], state: Optional[str],
                 subject: Optional[str]) -> str:
    filters = {"o": [str(principal.tenant_id), str(principal.principal_id)], "c": ceiling, "k": kind, "s": state}
    if subject is not None:  # absent from older cursors' fingerprints, which stay valid
        filters["j"] = subject.casefold()
    payload = json.dumps(filters, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _encode(row: ReconsolidationOperation, bound_to: str) -> str:
    return signing.dumps({"t": row.created_at.isoformat(), "i": str(row.id), "f": bound_to}, salt=SALT)


def _decode(cursor: str, bound_to: str) -> tuple[datetime, UUID]:
    if len(cursor) > MAX_CURSOR_CHARS:
        raise Invalid("cursor: invalid")
    try:
        payload = signing.loads(cursor, salt=SALT)
        after, op_id, bound = datetime.fromisoformat(payload["t"]), UUID(payload["i"]), payload["f"]
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise Invalid("cursor: invalid")
    if bound != bound_to:
        raise Invalid("cursor: does not match this request")
    return after, op_id


def _visible(queryset, allowed: Optional[list[str]]):
    if allowed is None:
        return queryset
    return queryset.extra(where=[_SUPPORT_VISIBLE], params=[allowed])


def visible_under(queryset, ceiling: str):
    """``queryset`` narrowed to the operations whose complete support is visible under ``ceiling``."""
    return _visible(queryset, _allowed(ceiling))


def operation_get(*, principal: Principal, operation_id: UUID, ceiling: str) -> OperationView:
    allowed = _allowed(ceiling)
    with owner_context(principal):
        row = _visible(ReconsolidationOperation.objects.filter(id=operation_id), allowed).first()
        if row is None:
            raise NotFound("operation")
        return operation_view(principal, row)


def operation_list(*, principal: Principal, ceiling: str, cursor: Optional[str] = None,
                   limit: int = bounds.RECON_OPERATIONS_PAGE_DEFAULT, kind: Optional[str] = None,
                   state: Optional[str] = None, subject: Optional[str] = None) -> OperationPage:
    """A page newest first; ``subject``: only operations with an input original of that
    subject (case-insensitive; the review dashboard's filter)."""
    allowed = _allowed(ceiling)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= bounds.RECON_OPERATIONS_PAGE_MAX:
        raise Invalid(f"limit: 1 to {bounds.RECON_OPERATIONS_PAGE_MAX}")
    if kind is not None and kind not in OPERATION_KINDS:
        raise Invalid("kind: unknown")
    if state is not None and state not in OPERATION_STATES:
        raise Invalid("state: unknown")
    bound_to = _fingerprint(principal, ceiling, kind, state, subject)
    with owner_context(principal):
        rows = ReconsolidationOperation.objects.all()
        if subject is not None:
            rows = rows.filter(input_ids__overlap=memory_selectors.memory_ids_with_subject(
                subject=subject, ceiling=ceiling, limit=SUBJECT_MATCH_MAX_ORIGINALS))
        if kind:
            rows = rows.filter(kind=kind)
        if state:
            rows = rows.filter(state=state)
        if cursor:
            after, op_id = _decode(cursor, bound_to)
            rows = rows.extra(where=[f"({_OPS}.created_at, {_OPS}.id) < (%s, %s)"], params=[after, op_id])
        page = list(_visible(rows, allowed).order_by("-created_at", "-id")[: limit + 1])
        items = page[:limit]
        next_cursor = _encode(items[-1], bound_to) if len(page) > limit else None
        return OperationPage(**owner_fields(principal), items=tuple(operation_view(principal, r) for r in items),
                             next_cursor=next_cursor)


def operations_using(*, principal: Principal, memory_id: UUID, limit: int) -> tuple[OperationView, ...]:
    """The operations that used an original (as input or support), newest first."""
    with owner_context(principal):
        ids = ReconsolidationDependency.objects.filter(memory_id=memory_id).values_list("operation_id", flat=True)
        rows = ReconsolidationOperation.objects.filter(id__in=list(ids)).order_by("-created_at", "id")[:limit]
        return tuple(operation_view(principal, row) for row in rows)


def operation_subjects(*, principal: Principal, ceiling: str, limit: int) -> tuple[str, ...]:
    """Subjects of the inputs of the most recent operations, alphabetically (filter suggestions)."""
    with owner_context(principal):
        recent = ReconsolidationOperation.objects.order_by("-created_at", "-id").values_list("input_ids", flat=True)
        ids = {i for row in recent[:RECENT_OPERATIONS_FOR_SUBJECTS] for i in row}
        return tuple(memory_selectors.memory_subjects(ceiling=ceiling, memory_ids=ids, limit=limit))

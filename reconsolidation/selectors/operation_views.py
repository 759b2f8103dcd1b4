"""The owner's allowlisted view of operations: what the HTTP API and the CLI both render.

``selectors.operations`` decides *whether* an operation exists for a caller (owner, ceiling); this module
decides *how much* of it is shown. The view is an allowlist: ID, kind, state, revision,
reason, policy/model identity, the four instants, and then — only when every required
source (every input original, omitted summary inputs included) is currently available at
its recorded content revision, unerased, active, unexpired and at or below the ceiling —
the content and the complete source links. If any one is unavailable, content is null and
there are no source links at all: never a partial title, link or count.

Read-time validation: a *committed* operation whose support has failed (expired,
corrected, retracted, erased) is invalidated through ``operations.invalidate`` in the
same owner unit of work before it is rendered, so readers never wait for the sweep and a
listing filtered by state sees the elapsed expiry. The validation clock is sampled after
the owner context is entered.

Nothing here is persisted or logged; source text appears only in the returned value.
"""
from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Literal, Optional
from uuid import UUID

from django.db import connection
from pydantic import AwareDatetime, BaseModel, ConfigDict

from memory import vocabulary
from memory.models import Memory
from memory.services.owner_state import lock_owner
from reconsolidation import bounds
from reconsolidation.domain import OperationPage
from reconsolidation.models import DerivedMemory, ReconsolidationMember, ReconsolidationOperation
from reconsolidation.selectors.operations import operation_get, operation_list
from reconsolidation.writers import apply, operations
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

DERIVED_KIND = {"summarize_related": "summary", "infer_connection": "hypothesis"}
READ_VALIDATION_REASON = "read_validation"


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SourceLink(_Value):
    memory_id: UUID
    content_revision: int
    role: Literal["member", "clause", "omitted", "input"]


class Clause(_Value):
    text: str
    source_ids: tuple[UUID, ...]


class OperationContent(_Value):
    record_kind: Optional[Literal["summary", "hypothesis"]]
    derived_id: Optional[UUID]
    canonical_id: Optional[UUID]
    clauses: tuple[Clause, ...]


class OwnerOperation(_Value):
    id: UUID
    kind: str
    state: str
    revision: int
    reason: str
    policy: str
    model_identity: str
    created_at: AwareDatetime
    committed_at: Optional[AwareDatetime]
    invalidated_at: Optional[AwareDatetime]
    undone_at: Optional[AwareDatetime]
    content: Optional[OperationContent]
    sources: tuple[SourceLink, ...]


class OwnerOperationPage(_Value):
    items: tuple[OwnerOperation, ...]
    next_cursor: Optional[str]


_OPS = ReconsolidationOperation._meta.db_table

# Sources of committed operations that no longer support them (one statement, in SQL).
_FAILED_COMMITTED_SUPPORT = f"""
    SELECT DISTINCT i.id
    FROM {_OPS} o
    CROSS JOIN LATERAL unnest(o.input_ids, o.input_revisions) AS i(id, rev)
    LEFT JOIN memory_memory m ON m.id = i.id AND m.tenant_id = o.tenant_id AND m.principal_id = o.principal_id
    -- An applied update holds its ended beliefs to the revision its approval wrote (its edges).
    LEFT JOIN reconsolidation_reconsolidationdependency d ON o.kind = 'end_superseded' AND d.operation_id = o.id
        AND d.memory_id = i.id
    WHERE o.state = 'committed' {{only}}
      AND (m.id IS NULL OR m.erased_at IS NOT NULL OR m.content_revision <> COALESCE(d.content_revision, i.rev)
           OR (o.kind <> 'end_superseded'  -- an applied update ended its earlier belief on purpose
               AND (m.status <> 'active' OR (m.expires_at IS NOT NULL AND m.expires_at <= %(now)s))))
"""


def revalidate(principal: Principal, now: datetime, operation_id: Optional[UUID] = None) -> int:
    """Invalidate committed operations (all, or one) whose support failed; call inside
    ``owner_context``. Returns how many failing sources were found."""
    only = "AND o.id = %(op)s" if operation_id is not None else ""
    with connection.cursor() as cursor:
        cursor.execute(_FAILED_COMMITTED_SUPPORT.format(only=only), {"now": now, "op": operation_id})
        failed = [row[0] for row in cursor.fetchall()]
    if failed:
        lock_owner(principal)
        operations.invalidate(principal, failed, reason=READ_VALIDATION_REASON, now=now)
    return len(failed)


def available_support(row: ReconsolidationOperation, ceiling: str, now: datetime) -> Optional[dict[UUID, str]]:
    """Each input's statement when *every* input is currently available; else None."""
    found = {
        m["id"]: m for m in Memory.objects.filter(id__in=list(row.input_ids)).values(
            "id", "content_revision", "erased_at", "status", "expires_at", "sensitivity", "statement")
    }
    ended_on_purpose = row.kind == "end_superseded" and row.state == "committed"
    applied = apply.applied_revisions(row) if ended_on_purpose else {}
    for memory_id, revision in zip(row.input_ids, row.input_revisions):
        revision = applied.get(memory_id, revision)
        m = found.get(memory_id)
        if (m is None or m["erased_at"] is not None or m["content_revision"] != revision
                or (not ended_on_purpose and (m["status"] != "active"
                                              or (m["expires_at"] is not None and m["expires_at"] <= now)))
                or not vocabulary.sensitivity_within(m["sensitivity"], ceiling)):
            return None
    return {memory_id: found[memory_id]["statement"] for memory_id in row.input_ids}


def _content(row: ReconsolidationOperation, statements: dict[UUID, str]) -> tuple[OperationContent, tuple[SourceLink, ...]]:
    revisions = dict(zip(row.input_ids, row.input_revisions))
    canonical, clauses, derived_id = None, (), None
    record_kind = DERIVED_KIND.get(row.kind)
    if row.kind == "merge_equivalent":
        canonical = ReconsolidationMember.objects.filter(operation_id=row.id).values_list(
            "canonical_id", flat=True).first()
    if record_kind is not None:
        derived = DerivedMemory.objects.filter(operation_id=row.id, status="active").first()
        if derived is not None:
            derived_id = derived.id
            clauses = tuple(Clause(text=c["text"], source_ids=tuple(UUID(i) for i in c["source_ids"]))
                            for c in derived.clauses)
        elif row.state == "proposed" and row.clause_sources:
            # A proposal awaiting review: its clauses re-read from the (available) sources.
            views = {i: SimpleNamespace(statement=s) for i, s in statements.items()}
            clauses = tuple(Clause(text=c.text, source_ids=c.source_ids) for c in apply.clauses_of(row, views))
    elif row.kind == "end_superseded" and row.clause_sources:
        # An update: the earlier statement, then the later one that ended it.
        views = {i: SimpleNamespace(statement=s) for i, s in statements.items()}
        clauses = tuple(Clause(text=c.text, source_ids=c.source_ids) for c in apply.clauses_of(row, views))
    cited = {i for clause_ids in (row.clause_sources or []) for i in clause_ids} | {
        str(i) for c in clauses for i in c.source_ids}
    role = {"merge_equivalent": lambda i: "member",
            "summarize_related": lambda i: "clause" if str(i) in cited else "omitted"}.get(row.kind, lambda i: "input")
    links = tuple(SourceLink(memory_id=i, content_revision=revisions[i], role=role(i)) for i in row.input_ids)
    content = OperationContent(record_kind=record_kind, derived_id=derived_id, canonical_id=canonical, clauses=clauses)
    return content, links


def _render(row: ReconsolidationOperation, ceiling: str, now: datetime) -> OwnerOperation:
    statements = available_support(row, ceiling, now)
    content, links = _content(row, statements) if statements is not None else (None, ())
    return OwnerOperation(
        id=row.id, kind=row.kind, state=row.state, revision=row.revision, reason=row.reason, policy=row.policy,
        model_identity=row.model_identity, created_at=row.created_at, committed_at=row.committed_at,
        invalidated_at=row.invalidated_at, undone_at=row.undone_at, content=content, sources=links,
    )


def operation_detail(*, principal: Principal, operation_id: UUID, ceiling: str,
                     now: Optional[datetime] = None) -> OwnerOperation:
    """The owner view of one operation, or NotFound (unknown, foreign, above the ceiling)."""
    with owner_context(principal):
        now = require_aware(now) if now is not None else utcnow()
        operation_get(principal=principal, operation_id=operation_id, ceiling=ceiling)
        revalidate(principal, now, operation_id)
        # Visibility again after validation: a lower ceiling must still see complete support.
        view = operation_get(principal=principal, operation_id=operation_id, ceiling=ceiling)
        return _render(ReconsolidationOperation.objects.get(id=view.id), ceiling, now)


def operation_page(*, principal: Principal, ceiling: str, cursor: Optional[str] = None,
                   limit: int = bounds.RECON_OPERATIONS_PAGE_DEFAULT, kind: Optional[str] = None,
                   state: Optional[str] = None, subject: Optional[str] = None,
                   now: Optional[datetime] = None) -> OwnerOperationPage:
    """A page of owner views, newest first; the state filter sees read-time validation."""
    with owner_context(principal):
        now = require_aware(now) if now is not None else utcnow()

        def read() -> OperationPage:
            return operation_list(principal=principal, ceiling=ceiling, cursor=cursor, limit=limit, kind=kind,
                                  state=state, subject=subject)

        page = read()  # validates every filter before anything may be written
        if revalidate(principal, now):
            page = read()  # states changed: filter again after validation
        rows = {r.id: r for r in ReconsolidationOperation.objects.filter(id__in=[v.id for v in page.items])}
        return OwnerOperationPage(items=tuple(_render(rows[v.id], ceiling, now) for v in page.items),
                                  next_cursor=page.next_cursor)

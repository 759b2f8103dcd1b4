"""Writes of original beliefs: create, revise, reject, review, record usage.

Each public function is one unit of work under ``owner_context``: it takes the owner
lock, changes rows, writes the revision snapshot and the change-journal entry, and
publishes to the invalidation hook — all in one transaction. Content changes increment
``content_revision`` and move ``store_position``; usage-only changes do neither.
"""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Iterable, Optional, Sequence
from uuid import UUID

from django.db import connection
from psycopg.types.json import Jsonb

from memory import claims
from memory.domain import CONTENT_FIELDS, MemoryChanges, MemoryContent, MemoryDraft, MemoryView
from memory.errors import Conflict, Invalid, MissingReference, NotFound
from memory.evidence import admitted_event
from memory.models import Memory, MemoryRevision, Rejection, Session
from memory.selectors import memory_views
from memory.services.owner_state import allocate, change_journal_append, lock_owner
from veetbot.bulk import id_array, insert_rows
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

REJECTED_CLAIM = "claim was rejected by the owner"

# What a new belief's row holds (insert_memories); the columns left out start empty (NULL).
_MEMORY_COLUMNS = ("id", "tenant_id", "principal_id", *CONTENT_FIELDS, "created_at", "updated_at", "content_revision",
                   "creation_sequence", "store_position", "utility", "review_rejected", "claim_sha256")
_NEW_UTILITY = Memory._meta.get_field("utility").get_default()
_CONTENT = frozenset(CONTENT_FIELDS)
_ENTITY_IDS = CONTENT_FIELDS.index("entity_ids")
_SOURCE_COLUMNS = ("tenant_id", "principal_id", "memory_id", "event_id", "part_id", "position")
_REVISION_COLUMNS = ("tenant_id", "principal_id", "memory_id", "revision", "snapshot", "recorded_at")


def content_snapshot(row: Memory) -> dict:
    """The JSON form of a row's content fields, as stored in MemoryRevision."""
    values = {name: getattr(row, name) for name in CONTENT_FIELDS}
    values["entity_ids"] = tuple(values["entity_ids"])
    snapshot = MemoryContent.model_construct(**values).model_dump(mode="json")
    snapshot["review_rejected"] = row.review_rejected
    return snapshot


def _first_snapshot(draft: MemoryDraft) -> str:
    """``content_snapshot`` of the row ``draft`` becomes, as JSON text: pydantic serializes it
    in one step, half the time of a dict dumped by ``json`` (an import writes 100,000)."""
    return draft.model_dump_json(include=_CONTENT)[:-1] + ',"review_rejected":false}'


def _claim_of(content) -> str:
    return claims.claim_sha256(
        statement=content.statement, claim_kind=content.claim_kind,
        polarity=content.polarity, attribution=content.attribution,
    )


def _missing_sources(drafts: Sequence[MemoryDraft], *, owner_evidence_only: bool) -> list[str]:
    """Sources that name nothing usable: an event that is not a live one of this owner's
    (or, for owner evidence, not a message the owner wrote), or a part not of that event.

    Only sources with a problem come back from the server, so an import's hundred thousand
    good ones cost the client nothing. Each source is looked up by primary key (the LATERAL
    ... LIMIT 1 keeps it a per-row index probe: a hash join over every event and part of the
    owner, planned for a batch of 2,000, read the whole bank again for each batch)."""
    cited = [(index, n, ref) for index, draft in enumerate(drafts) for n, ref in enumerate(draft.sources)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.n, e.id IS NULL, p.event_id IS DISTINCT FROM s.event_id"
            " FROM unnest(%s::uuid[], %s::uuid[]) WITH ORDINALITY AS s (event_id, part_id, n)"
            " LEFT JOIN LATERAL (SELECT id, kind, speaker, excluded, erased_at FROM memory_event"
            "  WHERE id = s.event_id AND erased_at IS NULL LIMIT 1) e ON true"
            " LEFT JOIN LATERAL (SELECT event_id FROM memory_eventpart WHERE id = s.part_id LIMIT 1) p ON true"
            " WHERE e.id IS NULL OR p.event_id IS DISTINCT FROM s.event_id"
            f" OR (%s AND NOT ({admitted_event('e')}))"
            " ORDER BY s.n",
            [id_array(ref.event for _, _, ref in cited), id_array(ref.part for _, _, ref in cited), owner_evidence_only],
        )
        problems = cursor.fetchall()
    missing = []
    for n, unknown_event, other_part in problems:
        index, position, _ = cited[n - 1]
        where = f"memories[{index}].sources[{position}]"
        if unknown_event:
            missing.append(f"{where}.event: unknown event")
        elif other_part:
            missing.append(f"{where}.part: not a part of that event")
        else:
            missing.append(f"{where}.event: not an owner message")
    return missing


def _repeated_parts(drafts: Sequence[MemoryDraft]) -> list[str]:
    return [f"memories[{index}].sources: repeated part" for index, draft in enumerate(drafts)
            if len({ref.part for ref in draft.sources}) != len(draft.sources)]


def _missing_session_scopes(drafts: Sequence[MemoryDraft]) -> list[str]:
    wanted = {d.scope.split(":", 1)[1] for d in drafts if d.scope.startswith("session:")}
    known = {str(s) for s in Session.objects.filter(id__in=wanted, erased_at__isnull=True).values_list("id", flat=True)}
    return [
        f"memories[{i}].scope: unknown session"
        for i, d in enumerate(drafts)
        if d.scope.startswith("session:") and d.scope.split(":", 1)[1] not in known
    ]


def _check_references(drafts: Sequence[MemoryDraft], *, owner_evidence_only: bool) -> None:
    """Refuse drafts whose sources or session scope name nothing usable (caller holds the lock)."""
    missing = _missing_sources(drafts, owner_evidence_only=owner_evidence_only) + _missing_session_scopes(drafts)
    if missing:
        raise MissingReference(missing)


def insert_memories(principal: Principal, drafts: Sequence[MemoryDraft], now: datetime) -> list[UUID]:
    """Create beliefs in (created_at, id) order. Caller holds the owner context.

    The one creation path: live creation passes one draft, import passes many, so both
    allocate creation_sequence and write journal entries the same way. The caller has
    checked what the drafts' sources and session scopes name, each where its input is read:
    ``memory_create`` for a live draft (``_check_references``), the importer against the
    document and the stored rows. The foreign keys refuse an unknown event or part, but not
    a part of another event, so nothing here may be called with unchecked sources. (The
    importer checked them once already: checking each of its batches again cost a
    100,000-belief import about a tenth of its time, evals/README.md, 2026-12-07.)
    """
    lock_owner(principal)
    if repeated := _repeated_parts(drafts):
        raise Invalid(repeated)
    hashes = [_claim_of(d) for d in drafts]
    if _any_rejected(hashes):
        raise Conflict(REJECTED_CLAIM)

    prepared = sorted(
        ((d.created_at or now, d.id or uuid.uuid4(), d, h) for d, h in zip(drafts, hashes)),
        key=lambda item: (item[0], item[1]),
    )
    block = allocate(principal, creations=len(prepared), positions=len(prepared))
    owner = (principal.tenant_id, principal.principal_id)
    rows, sources, revisions = [], [], []
    for offset, (created_at, memory_id, draft, claim_hash) in enumerate(prepared):
        content = [getattr(draft, name) for name in CONTENT_FIELDS]
        content[_ENTITY_IDS] = list(content[_ENTITY_IDS])
        rows.append((
            memory_id, *owner, *content, created_at, created_at, 1,
            block.creation_sequence + offset, block.store_position + offset, _NEW_UTILITY, False, claim_hash,
        ))
        sources.extend((*owner, memory_id, ref.event, ref.part, n) for n, ref in enumerate(draft.sources))
        revisions.append((*owner, memory_id, 1, Jsonb(_first_snapshot(draft), dumps=str), now))
    insert_rows("memory_memory", _MEMORY_COLUMNS, rows)
    insert_rows("memory_memorysource", _SOURCE_COLUMNS, sources, new_ids=True)
    insert_rows("memory_memoryrevision", _REVISION_COLUMNS, revisions, new_ids=True)
    change_journal_append(principal, [(row[0], "created", 1) for row in rows], now)
    return [row[0] for row in rows]


def _any_rejected(claims: Iterable[str]) -> bool:
    """Whether the owner rejected any of ``claims`` (hex digests), sent as one array: Django's
    ``__in`` binds a parameter per claim, half a second of client time in a 100,000-belief
    import (py-spy, 2026-12-06)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT EXISTS (SELECT 1 FROM memory_rejection WHERE claim_sha256 = ANY(%s::varchar[]))",
                       [id_array(set(claims))])
        return cursor.fetchone()[0]


def memory_create(
    *, principal: Principal, draft: MemoryDraft, now: Optional[datetime] = None, owner_evidence_only: bool = False,
) -> MemoryView:
    """Create one belief with its sources; refuses a claim the owner rejected."""
    now = now or utcnow()
    with owner_context(principal):
        lock_owner(principal)  # the references are checked under the lock that erasure takes
        _check_references([draft], owner_evidence_only=owner_evidence_only)
        (memory_id,) = insert_memories(principal, [draft], now)
        return memory_views([Memory.objects.get(id=memory_id)])[0]


def locked_memory(memory_id: UUID) -> Memory:
    row = Memory.objects.select_for_update().filter(id=memory_id, erased_at__isnull=True).first()
    if row is None:
        raise NotFound("memory")
    return row


def apply_content_change(principal: Principal, row: Memory, values: dict, now: datetime, *, kind: str = "revised") -> bool:
    """Write changed content fields as a new content revision. Caller holds the owner lock.

    Returns False (and writes nothing) when nothing actually changes.
    """
    changed = {name: value for name, value in values.items() if getattr(row, name) != value}
    if not changed:
        return False
    for name, value in changed.items():
        setattr(row, name, value)
    # Re-validate the whole content: a partial change must not produce an invalid belief.
    try:
        content = MemoryContent.model_validate({name: getattr(row, name) for name in CONTENT_FIELDS})
    except ValueError as error:
        raise Invalid([f"{e['loc'][0] if e['loc'] else 'memory'}: {e['msg']}" for e in error.errors()])
    new_claim = _claim_of(content)
    if new_claim != row.claim_sha256 and kind == "revised" and row.status == "active":
        if Rejection.objects.filter(claim_sha256=new_claim).exists():
            raise Conflict(REJECTED_CLAIM)
    row.claim_sha256 = new_claim
    row.content_revision += 1
    row.store_position = allocate(principal, positions=1).store_position
    row.updated_at = now
    row.save()
    MemoryRevision.objects.create(
        tenant_id=principal.tenant_id, principal_id=principal.principal_id, memory_id=row.id,
        revision=row.content_revision, snapshot=content_snapshot(row), recorded_at=now,
    )
    change_journal_append(principal, [(row.id, kind, row.content_revision)], now)
    return True


def _changes_to_values(changes: MemoryChanges) -> dict:
    values = changes.model_dump(exclude_unset=True, exclude={"clear_expiry"})
    values = {k: v for k, v in values.items() if v is not None}
    if "entity_ids" in values:
        values["entity_ids"] = list(values["entity_ids"])
    if changes.clear_expiry:
        values["expires_at"] = None
    return values


def memory_revise(
    *, principal: Principal, memory_id: UUID, changes: MemoryChanges,
    expected_revision: Optional[int] = None, now: Optional[datetime] = None,
) -> MemoryView:
    """Change content fields; each real change is one new content revision."""
    now = now or utcnow()
    with owner_context(principal):
        lock_owner(principal)
        row = locked_memory(memory_id)
        if expected_revision is not None and row.content_revision != expected_revision:
            raise Conflict("stale content revision")
        values = _changes_to_values(changes)
        kind = {"retracted": "retracted", "expired": "expired"}.get(values.get("status", ""), "revised")
        apply_content_change(principal, row, values, now, kind=kind)
        return memory_views([row])[0]


def memory_reject(*, principal: Principal, memory_id: UUID, now: Optional[datetime] = None) -> MemoryView:
    """The owner says "not true": retract the belief and block re-creating its claim."""
    now = now or utcnow()
    with owner_context(principal):
        lock_owner(principal)
        row = locked_memory(memory_id)
        Rejection.objects.get_or_create(
            tenant_id=principal.tenant_id, principal_id=principal.principal_id, claim_sha256=row.claim_sha256,
            defaults={"memory_id": row.id, "created_at": now},
        )
        apply_content_change(principal, row, {"status": "retracted", "review_rejected": True}, now, kind="retracted")
        return memory_views([row])[0]


def memory_review(*, principal: Principal, memory_id: UUID, action: str, now: Optional[datetime] = None) -> MemoryView:
    """Owner review actions on an original.

    mark_reviewed and dismiss set review flags (not content); not_true rejects the
    claim; not_here keeps the belief but stops it crossing scopes (portable=False,
    a content change).
    """
    now = now or utcnow()
    if action == "not_true":
        return memory_reject(principal=principal, memory_id=memory_id, now=now)
    with owner_context(principal):
        lock_owner(principal)
        row = locked_memory(memory_id)
        if action == "mark_reviewed":
            row.reviewed_at = now
            row.save(update_fields=["reviewed_at"])
        elif action == "dismiss":
            row.dismissed_at = now
            row.save(update_fields=["dismissed_at"])
        elif action == "not_here":
            apply_content_change(principal, row, {"portable": False}, now)
        else:
            raise Invalid("action: unknown review action")
        return memory_views([row])[0]


def memory_record_usage(
    *, principal: Principal, memory_ids: Iterable[UUID], now: Optional[datetime] = None, utility_gain: float = 0.1,
) -> int:
    """Usage only: raise utility (capped at 1) and stamp last_used_at. No revision, no position."""
    from django.db.models import F, Value
    from django.db.models.functions import Least

    now = now or utcnow()
    with owner_context(principal):
        return Memory.objects.filter(id__in=list(memory_ids), erased_at__isnull=True).update(
            last_used_at=now, utility=Least(F("utility") + Value(utility_gain), Value(1.0)),
        )

"""Erasure: remove the owner's prose from every table while keeping opaque IDs and hashes.

``session_erase``, ``person_erase`` and ``principal_erase`` do the work; ``erase_requested``
is the one entry every surface (HTTP, dashboard, ``manage.py erase``) calls: the same
erasure under an Idempotency-Key, its content-free receipt (``ErasureReceipt``) committed
with it, so a replay answers the same receipt even though what it names is gone.

Rows stay (so journals, fences, rejections and later audits can still name them) but
every text field that held the owner's words is emptied: belief subjects and statements,
every revision snapshot, event part texts, people's names, the display name. Each
erased belief gets a new content revision and an ``erased`` journal entry, so derived
work built on it is invalidated in the same transaction and queued work that read it is
fenced by that revision; the owner's erasure fence counts the erasure, and work over
other beliefs is not fenced by it.
"""
from __future__ import annotations

from datetime import datetime
from typing import Iterable, Literal, Optional
from uuid import UUID

from django.db.models import Q

from memory import hooks
from memory.domain import ErasureReceipt
from memory.errors import NotFound
from memory.models import Event, EventPart, Memory, MemoryRevision, MemorySource, Owner, OwnerToken, Person, Session
from memory.services import receipts
from memory.services.owner_state import allocate, bump_erasure_fence, change_journal_append, lock_owner
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

ERASED_SNAPSHOT = {"erased": True}


def _erase_memories(principal: Principal, memory_ids: Iterable[UUID], now: datetime) -> int:
    rows = list(Memory.objects.select_for_update().filter(id__in=list(memory_ids), erased_at__isnull=True).order_by("id"))
    if not rows:
        return 0
    first_position = allocate(principal, positions=len(rows)).store_position
    for offset, row in enumerate(rows):
        row.subject = ""
        row.statement = ""
        row.entity_ids = []
        row.status = "deleted"
        row.erased_at = now
        row.updated_at = now
        row.content_revision += 1
        row.store_position = first_position + offset
    Memory.objects.bulk_update(
        rows, ["subject", "statement", "entity_ids", "status", "erased_at", "updated_at", "content_revision", "store_position"],
    )
    ids = [row.id for row in rows]
    MemoryRevision.objects.filter(memory_id__in=ids).update(snapshot=ERASED_SNAPSHOT)
    change_journal_append(principal, [(row.id, "erased", row.content_revision) for row in rows], now)
    return len(rows)


def _erase_events(event_ids: list[UUID], now: datetime) -> int:
    EventPart.objects.filter(event_id__in=event_ids).update(text="")
    return Event.objects.filter(id__in=event_ids, erased_at__isnull=True).update(erased_at=now)


def _memories_citing(event_ids: list[UUID]) -> set[UUID]:
    return set(MemorySource.objects.filter(event_id__in=event_ids).values_list("memory_id", flat=True))


def memory_erase(*, principal: Principal, memory_id: UUID, now: Optional[datetime] = None) -> None:
    """Erase one belief (its cited messages stay: the owner erased the belief, not the talk)."""
    now = now or utcnow()
    with owner_context(principal):
        lock_owner(principal)
        if not _erase_memories(principal, [memory_id], now):
            raise NotFound("memory")
        bump_erasure_fence(principal, now)


def session_erase(*, principal: Principal, session_id: UUID, now: Optional[datetime] = None) -> int:
    """Erase a conversation, its messages and every belief formed from them or local to it;
    what later apps keep per conversation (recall's snapshot) goes through ``SessionsErased``."""
    now = now or utcnow()
    with owner_context(principal):
        lock_owner(principal)
        session = Session.objects.select_for_update().filter(id=session_id, erased_at__isnull=True).first()
        if session is None:
            raise NotFound("session")
        event_ids = list(Event.objects.filter(session_id=session_id).values_list("id", flat=True))
        local = set(Memory.objects.filter(scope=f"session:{session_id}").values_list("id", flat=True))
        erased = _erase_memories(principal, _memories_citing(event_ids) | local, now)
        _erase_events(event_ids, now)
        session.erased_at = now
        session.save(update_fields=["erased_at"])
        hooks.publish_session_erasure(hooks.SessionsErased(principal=principal, session_ids=(session_id,)))
        bump_erasure_fence(principal, now)
        return erased


def person_erase(*, principal: Principal, person_id: UUID, now: Optional[datetime] = None) -> int:
    """Erase a person: their name, their messages, beliefs attributed to or about them
    (by attribution or entity ID) and the messages those beliefs cite.

    A mention of the person in some unrelated message that no belief about them cites
    is not found: there is no name recognition here, only recorded links.
    """
    now = now or utcnow()
    ref = f"person:{person_id}"
    with owner_context(principal):
        lock_owner(principal)
        person = Person.objects.select_for_update().filter(id=person_id, erased_at__isnull=True).first()
        if person is None:
            raise NotFound("person")
        about = set(
            Memory.objects.filter(Q(attribution=ref) | Q(entity_ids__contains=[ref])).values_list("id", flat=True)
        )
        # Their own messages, and the messages that evidenced beliefs about them; every
        # belief citing an erased message goes too, since its evidence is gone.
        cited = MemorySource.objects.filter(memory_id__in=about).values_list("event_id", flat=True)
        event_ids = list(set(Event.objects.filter(speaker=ref).values_list("id", flat=True)) | set(cited))
        erased = _erase_memories(principal, about | _memories_citing(event_ids), now)
        _erase_events(event_ids, now)
        person.name = ""
        person.erased_at = now
        person.save(update_fields=["name", "erased_at"])
        bump_erasure_fence(principal, now)
        return erased


def principal_erase(*, principal: Principal, now: Optional[datetime] = None) -> int:
    """Erase the whole bank: every belief, message and name; revoke every token."""
    now = now or utcnow()
    with owner_context(principal):
        lock_owner(principal)
        erased = _erase_memories(principal, Memory.objects.values_list("id", flat=True), now)
        _erase_events(list(Event.objects.values_list("id", flat=True)), now)
        hooks.publish_session_erasure(hooks.SessionsErased(
            principal=principal, session_ids=tuple(Session.objects.values_list("id", flat=True))))
        Session.objects.filter(erased_at__isnull=True).update(erased_at=now)
        Person.objects.update(name="", erased_at=now)
        Owner.objects.update(display_name="")
        OwnerToken.objects.filter(revoked_at__isnull=True).update(revoked_at=now)
        OwnerToken.objects.update(label="")  # the owner's own words too
        bump_erasure_fence(principal, now)
        return erased


ErasureTarget = Literal["session", "person", "account"]


def erase_requested(*, principal: Principal, target: ErasureTarget, target_id: Optional[UUID], key: str,
                    request_sha256: str, now: Optional[datetime] = None) -> receipts.Outcome:
    """Erase a session, a person or the whole account once per Idempotency-Key.

    One transaction: the owner lock, the receipt check, the erasure with its reverse
    invalidation (every derived item and vector over an erased original goes with it) and
    the receipt. A replay of the same request answers the first receipt; the same key
    with another request is a conflict. A whole account's erasure also revokes every
    token, which ends every dashboard sign-in made with them.
    """
    now = now or utcnow()
    subject_id = principal.principal_id if target == "account" else target_id
    if subject_id is None:
        raise ValueError("target_id is required for a session or a person")

    def write() -> receipts.Written:
        if target == "session":
            session_erase(principal=principal, session_id=subject_id, now=now)
        elif target == "person":
            person_erase(principal=principal, person_id=subject_id, now=now)
        else:
            principal_erase(principal=principal, now=now)
        value = ErasureReceipt(erased=target, id=subject_id, erased_at=now)
        return receipts.Written(status_code=200, resource_kind=f"{target}_erasure", resource_id=subject_id, value=value)

    return receipts.idempotent_write(principal=principal, key=key, request_sha256=request_sha256, write=write, now=now)

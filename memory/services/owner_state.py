"""The owner lock, the owner's allocators, the change journal and the erasure fence.

Every write service takes the owner lock first (one row per owner, locked FOR UPDATE),
so writes of one owner serialize in a single order and numbers allocated under it are
gap-free: a rolled-back transaction rolls its allocation back too.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.db import connection

from memory import hooks
from memory.models import ErasureFence
from veetbot.bulk import insert_rows
from veetbot.identity import Principal

_JOURNAL_COLUMNS = ("tenant_id", "principal_id", "seq", "memory_id", "kind", "content_revision", "recorded_at")


@dataclass(frozen=True)
class Allocation:
    """First numbers of the blocks just allocated (each block is contiguous)."""

    creation_sequence: int
    journal_seq: int
    store_position: int


def lock_owner(principal: Principal) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_ownerlock (id, tenant_id, principal_id, next_creation_sequence,"
            " next_journal_seq, next_store_position) VALUES (%s, %s, %s, 1, 1, 1)"
            " ON CONFLICT (tenant_id, principal_id) DO NOTHING",
            [uuid.uuid4(), principal.tenant_id, principal.principal_id],
        )
        cursor.execute(
            "SELECT 1 FROM memory_ownerlock WHERE tenant_id = %s AND principal_id = %s FOR UPDATE",
            [principal.tenant_id, principal.principal_id],
        )
        if cursor.fetchone() is None:
            raise RuntimeError("owner lock not visible: is the owner context set?")


def allocate(principal: Principal, *, creations: int = 0, journal: int = 0, positions: int = 0) -> Allocation:
    """Reserve contiguous blocks; call only while holding the owner lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_ownerlock SET next_creation_sequence = next_creation_sequence + %s,"
            " next_journal_seq = next_journal_seq + %s, next_store_position = next_store_position + %s"
            " WHERE tenant_id = %s AND principal_id = %s"
            " RETURNING next_creation_sequence - %s, next_journal_seq - %s, next_store_position - %s",
            [creations, journal, positions, principal.tenant_id, principal.principal_id,
             creations, journal, positions],
        )
        row = cursor.fetchone()
    return Allocation(*row)


def change_journal_append(principal: Principal, entries: list[tuple[UUID, str, int]], now: datetime) -> None:
    """Append (memory_id, kind, content_revision) entries and publish them to the hook.

    The entries and the listeners' reactions share the caller's transaction.
    """
    if not entries:
        return
    first = allocate(principal, journal=len(entries)).journal_seq
    insert_rows("memory_changejournal", _JOURNAL_COLUMNS, [
        (principal.tenant_id, principal.principal_id, first + offset, memory_id, kind, revision, now)
        for offset, (memory_id, kind, revision) in enumerate(entries)
    ], new_ids=True)
    by_kind: dict[str, list[UUID]] = {}
    for memory_id, kind, _ in entries:
        by_kind.setdefault(kind, []).append(memory_id)
    for kind, ids in by_kind.items():
        hooks.publish(hooks.ContentChange(principal=principal, kind=kind, memory_ids=tuple(ids)))


def bump_erasure_fence(principal: Principal, now: datetime) -> int:
    """Count one more erasure of this owner (content-free). The generation says *that*
    something was erased, not what: work over the bank is fenced per source, by the
    content revisions it read (every erasure also bumps its beliefs' revisions and
    journals them), so moving this number alone stales nothing."""
    fence, _ = ErasureFence.objects.get_or_create(
        tenant_id=principal.tenant_id, principal_id=principal.principal_id,
        defaults={"generation": 0, "updated_at": now},
    )
    fence.generation += 1
    fence.updated_at = now
    fence.save(update_fields=["generation", "updated_at"])
    return fence.generation


def erasure_generation(principal: Principal) -> int:
    fence = ErasureFence.objects.filter(tenant_id=principal.tenant_id, principal_id=principal.principal_id).first()
    return fence.generation if fence else 0

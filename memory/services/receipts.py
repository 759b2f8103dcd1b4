"""Idempotency receipts: a write under an ``Idempotency-Key`` happens at most once per owner.

``idempotent_write`` opens the owner's unit of work, takes the owner lock *before* it
looks for a receipt (so two concurrent requests with one key serialize and the second
sees the first's receipt), then either replays the receipt or performs the write and
records its receipt in the same transaction: a write that fails leaves no receipt, a
receipt never outlives a rolled-back write.

``receipt_replay`` and ``receipt_record`` are the same two steps for writes that replay in
their own way (reconsolidation's operation actions and derived-memory controls): one key
namespace per owner, one table, whatever wrote the receipt.

A receipt holds digests and opaque IDs only, never prose. A replay re-renders the
*current* state of the resource it names, so erasure needs no receipt cleanup: a replayed
create of a since-erased resource answers not_found, while a replayed 204 (an erasure)
answers 204 again without looking anything up.

This module must never store request bodies, keys in clear, or rendered responses.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Optional
from uuid import UUID

from memory import selectors
from memory.domain import ErasureReceipt
from memory.errors import Conflict, NotFound
from memory.models import Event, IdempotencyReceipt, Session
from memory.services.owner_state import lock_owner
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

NO_CONTENT = 204
# An erasure's receipt is its own resource: replayed from the receipt row itself (kind, ID,
# instant), since what it names no longer exists to be re-read.
ERASURE_KINDS = {"session_erasure": "session", "person_erasure": "person", "account_erasure": "account"}
RESOURCE_KINDS = ("memory", "session", "event", *ERASURE_KINDS)


class KeyReused(Conflict):
    """The key was already used by this owner for another request (body, route or target)."""

    api_field = "Idempotency-Key"
    api_problem = "reused_with_another_request"

    def __init__(self) -> None:
        super().__init__("idempotency key reused with another request")


@dataclass(frozen=True)
class Written:
    """What a write reports to its receipt: status, the resource it names, its value."""

    status_code: int
    resource_kind: str
    resource_id: Optional[UUID]
    value: Any = None


@dataclass(frozen=True)
class Outcome:
    status_code: int
    value: Any  # the resource's current domain value; None for 204
    replayed: bool


def written(status_code: int, resource_kind: str, value: Any) -> Written:
    """A write that answers with (and names) the domain value it produced."""
    return Written(status_code=status_code, resource_kind=resource_kind, resource_id=value.id, value=value)


def key_sha256(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def request_sha256(*, route: str, params: dict, body: Any) -> str:
    """Digest of what makes two requests "the same": route, path/query values, JSON body.

    The body is the parsed JSON, re-serialized canonically, so key order and whitespace
    do not matter but every value does.
    """
    payload = json.dumps(
        {"route": route, "params": params, "body": body},
        sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def _current(kind: str, resource_id: UUID, ceiling: str):
    """The named resource as it is now; gone (erased) is NotFound."""
    if kind == "memory":
        return selectors.memory_get(memory_id=resource_id, ceiling=ceiling)
    if kind == "session":
        row = Session.objects.filter(id=resource_id, erased_at__isnull=True).first()
        if row is not None:
            return selectors.session_view(row)
    elif kind == "event":
        row = Event.objects.filter(id=resource_id, erased_at__isnull=True).first()
        if row is not None:
            return selectors.event_view(row)
    raise NotFound(kind)


def erasure_receipt(receipt: IdempotencyReceipt) -> ErasureReceipt:
    return ErasureReceipt(erased=ERASURE_KINDS[receipt.resource_kind], id=receipt.resource_id,
                          erased_at=receipt.created_at)


def receipt_replay(key: str, request_sha256: str, resource_kind: Optional[str] = None
                   ) -> Optional[IdempotencyReceipt]:
    """The receipt of an earlier use of ``key``, or None (first use). The key serving another
    request — or, given ``resource_kind``, another kind of resource — is ``KeyReused``. Call
    inside the owner's unit of work after ``lock_owner``, so concurrent replays serialize."""
    receipt = IdempotencyReceipt.objects.filter(key_sha256=key_sha256(key)).first()
    if receipt is None:
        return None
    if receipt.request_sha256 != request_sha256 or (resource_kind is not None and receipt.resource_kind != resource_kind):
        raise KeyReused()
    return receipt


def receipt_record(principal: Principal, key: str, request_sha256: str, *, status_code: int, resource_kind: str,
                   resource_id: Optional[UUID], now: datetime) -> None:
    """Record the receipt of a write in the write's own transaction (see ``receipt_replay``)."""
    IdempotencyReceipt.objects.create(
        tenant_id=principal.tenant_id, principal_id=principal.principal_id, key_sha256=key_sha256(key),
        request_sha256=request_sha256, status_code=status_code, resource_kind=resource_kind,
        resource_id=resource_id, created_at=now,
    )


def idempotent_write(
    *, principal: Principal, key: str, request_sha256: str, write: Callable[[], Written],
    ceiling: str = "restricted", now: Optional[datetime] = None,
) -> Outcome:
    """Perform ``write`` once for (owner, key); replay it for the same request afterwards.

    ``ceiling`` bounds what a replay may render (a create renders the caller's own new
    resource, so callers pass the top ceiling; review passes the request's ceiling).
    """
    with owner_context(principal):
        lock_owner(principal)
        receipt = receipt_replay(key, request_sha256)
        if receipt is not None:
            if receipt.status_code == NO_CONTENT or receipt.resource_id is None:
                return Outcome(status_code=receipt.status_code, value=None, replayed=True)
            if receipt.resource_kind in ERASURE_KINDS:
                return Outcome(status_code=receipt.status_code, value=erasure_receipt(receipt), replayed=True)
            value = _current(receipt.resource_kind, receipt.resource_id, ceiling)
            return Outcome(status_code=receipt.status_code, value=value, replayed=True)
        result = write()
        if result.resource_kind not in RESOURCE_KINDS:
            raise ValueError(f"unknown resource kind {result.resource_kind!r}")
        receipt_record(principal, key, request_sha256, status_code=result.status_code,
                       resource_kind=result.resource_kind, resource_id=result.resource_id, now=now or utcnow())
        value = None if result.status_code == NO_CONTENT else result.value
        return Outcome(status_code=result.status_code, value=value, replayed=False)

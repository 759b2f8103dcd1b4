"""Idempotency of owner actions on operations (approve, reject, undo).

Receipts share ``memory.models.IdempotencyReceipt`` — and so the owner's key namespace —
with ordinary memory writes, under resource kind ``recon_operation``. A receipt holds the
key's and the request's SHA-256 and the operation's opaque ID only. Same key and same
request: the action is not repeated and the caller re-renders the operation as it is
now; same key with another request: ``KeyReused`` (a conflict). Call these inside the
owner's unit of work after ``lock_owner`` so concurrent replays serialize.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional
from uuid import UUID

from memory.models import IdempotencyReceipt
from memory.services.receipts import KeyReused, key_sha256, request_sha256
from reconsolidation import bounds
from reconsolidation.errors import Invalid
from veetbot.identity import Principal

RESOURCE_KIND = "recon_operation"


def check_key(key: str) -> None:
    if not isinstance(key, str) or not key.strip() or len(key) > bounds.RECON_IDEMPOTENCY_KEY_MAX_CHARS:
        raise Invalid(f"Idempotency-Key: nonblank, at most {bounds.RECON_IDEMPOTENCY_KEY_MAX_CHARS} characters")


def check_revision(revision) -> None:
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        raise Invalid("expected_revision: a positive integer")


def request_digest(action: str, operation_id: UUID, expected_revision: int) -> str:
    return request_sha256(route=f"reconsolidation.{action}", params={"id": str(operation_id)},
                          body={"expected_revision": expected_revision})


def replayed(key: str, request: str) -> Optional[UUID]:
    """The operation a previous identical request acted on, or None (first use)."""
    receipt = IdempotencyReceipt.objects.filter(key_sha256=key_sha256(key)).first()
    if receipt is None:
        return None
    if receipt.request_sha256 != request or receipt.resource_kind != RESOURCE_KIND:
        raise KeyReused()
    return receipt.resource_id


def record(principal: Principal, key: str, request: str, operation_id: UUID, now: datetime) -> None:
    IdempotencyReceipt.objects.create(
        tenant_id=principal.tenant_id, principal_id=principal.principal_id, key_sha256=key_sha256(key),
        request_sha256=request, status_code=200, resource_kind=RESOURCE_KIND, resource_id=operation_id,
        created_at=now,
    )

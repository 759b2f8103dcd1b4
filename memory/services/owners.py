"""Owners and their bearer tokens.

A token is ``vbt_`` + 32 random bytes (URL-safe). Only its SHA-256 is stored; the plain
token is returned once, at creation, and never logged. Authentication resolves a hash
to its owner through a SECURITY DEFINER function, the one place that looks across owners.
"""
from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import datetime
from typing import Iterable, Optional
from uuid import UUID

from django.db import connection

from memory.domain import OwnerCreated
from memory.errors import Invalid, NotFound
from memory.models import ErasureFence, OwnerToken, Owner
from memory.services.owner_state import lock_owner
from veetbot.clock import utcnow
from veetbot.identity import ALL_SCOPES, Principal
from veetbot.rls import owner_context

TOKEN_PREFIX = "vbt_"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _fits(value: str, row, field: str) -> str:
    """``value`` when it fits its column; refused whole, never cut to fit."""
    bound = row._meta.get_field(field).max_length
    if len(value) > bound:
        raise Invalid(f"{field}: at most {bound} characters")
    return value


def _check_scopes(scopes: Iterable[str]) -> list[str]:
    scopes = sorted(set(scopes))
    if not scopes or any(s not in ALL_SCOPES for s in scopes):
        raise Invalid(f"scopes: choose from {', '.join(ALL_SCOPES)}")
    return scopes


def token_create(
    *, principal: Principal, scopes: Iterable[str] = ALL_SCOPES, label: str = "", now: Optional[datetime] = None,
) -> str:
    scopes = _check_scopes(scopes)
    label = _fits(label, OwnerToken, "label")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with owner_context(principal):
        OwnerToken.objects.create(
            tenant_id=principal.tenant_id, principal_id=principal.principal_id, token_hash=token_hash(token),
            scopes=scopes, label=label, created_at=now or utcnow(),
        )
    return token


def token_revoke(*, principal: Principal, token_id: UUID, now: Optional[datetime] = None) -> None:
    with owner_context(principal):
        if not OwnerToken.objects.filter(id=token_id, revoked_at__isnull=True).update(revoked_at=now or utcnow()):
            raise NotFound("token")


def token_authenticate(token: str, *, now: Optional[datetime] = None) -> Optional[Principal]:
    """The owner and scopes of a live token, or None. Records last use."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT tenant_id, principal_id, scopes FROM authenticate_owner_token(%s, %s)",
                       [token_hash(token), now or utcnow()])
        row = cursor.fetchone()
    if row is None:
        return None
    return Principal(tenant_id=row[0], principal_id=row[1], scopes=frozenset(row[2]))


def owner_create(
    *, tenant_id: Optional[UUID] = None, principal_id: Optional[UUID] = None, display_name: str = "",
    scopes: Iterable[str] = ALL_SCOPES, now: Optional[datetime] = None,
) -> OwnerCreated:
    """Create (or reuse) an owner and issue a new token for it."""
    now = now or utcnow()
    scopes = _check_scopes(scopes)
    display_name = _fits(display_name, Owner, "display_name")
    principal = Principal(tenant_id=tenant_id or uuid.uuid4(), principal_id=principal_id or uuid.uuid4())
    with owner_context(principal):
        lock_owner(principal)
        row, created = Owner.objects.get_or_create(
            tenant_id=principal.tenant_id, principal_id=principal.principal_id,
            defaults={"display_name": display_name, "created_at": now},
        )
        if not created and display_name and row.display_name != display_name:
            row.display_name = display_name
            row.save(update_fields=["display_name"])
        ErasureFence.objects.get_or_create(
            tenant_id=principal.tenant_id, principal_id=principal.principal_id,
            defaults={"generation": 0, "updated_at": now},
        )
        token = token_create(principal=principal, scopes=scopes, label="create_owner", now=now)
    return OwnerCreated(tenant_id=principal.tenant_id, principal_id=principal.principal_id, token=token, created_owner=created)

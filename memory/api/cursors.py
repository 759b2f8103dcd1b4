"""Cursors of the memory list: signed, bound to the request that produced them.

A cursor holds the last visible ``(store_position, id)`` of a page and the SHA-256
fingerprint of the owner, the effective filters and the ceiling. It is signed with
``django.core.signing`` (the project's SECRET_KEY, a salt of its own), so clients cannot
forge or edit one, and it is rejected as validation_error when presented with another
owner, other filters or another ceiling — a cursor never widens what a request may see.
Clients must treat it as opaque; the page size (``limit``) is deliberately not bound.
"""
from __future__ import annotations

import hashlib
import json
from uuid import UUID

from django.core import signing

from veetbot.api_errors import ValidationFailed, problem
from veetbot.identity import Principal

SALT = "memory.api.cursors.memory-list.v1"
MAX_CURSOR_CHARS = 512


def fingerprint(*, principal: Principal, ceiling: str, filters: dict) -> str:
    payload = json.dumps(
        {"owner": [str(principal.tenant_id), str(principal.principal_id)], "ceiling": ceiling, "filters": filters},
        sort_keys=True, separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def encode(*, store_position: int, memory_id: UUID, bound_to: str) -> str:
    return signing.dumps({"p": store_position, "i": str(memory_id), "f": bound_to}, salt=SALT)


def decode(cursor: str, *, bound_to: str) -> tuple[int, UUID]:
    """The ``after`` position of a cursor issued for this very request shape."""
    if len(cursor) > MAX_CURSOR_CHARS:
        raise ValidationFailed([problem("cursor", "invalid")])
    try:
        payload = signing.loads(cursor, salt=SALT)
        position, memory_id, bound = payload["p"], UUID(payload["i"]), payload["f"]
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise ValidationFailed([problem("cursor", "invalid")])
    if not isinstance(position, int) or isinstance(position, bool) or bound != bound_to:
        raise ValidationFailed([problem("cursor", "does_not_match_request")])
    return position, memory_id

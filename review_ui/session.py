"""The persistent review sign-in (ADR-0186): one bearer authentication becomes a signed,
thirty-day review cookie.

The cookie holds the token's opaque ID, the owner pair and the scopes the token had at
sign-in — never the bearer itself — signed with a salt of its own so no other signed value
of the project can stand in for it. Every request checks it against the token row again
(``current_session``): a revoked token or any change of its scopes ends the session at
once, which is the stateless-revocation limit ADR-0186 records. The cookie is scoped to
``/review/`` and read only by the review views, so it admits nothing else.

Never logs or returns the bearer; failures are ``None`` without a reason that could help
someone guessing tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional
from uuid import UUID

from django.core import signing

from memory.selectors import live_token
from memory.services.owners import token_authenticate, token_hash
from review_ui import bounds
from veetbot.identity import SCOPE_READ, SCOPE_WRITE, Principal
from veetbot.rls import owner_context

SALT = "review_ui.session.v1"
COOKIE_PATH = "/review/"


@dataclass(frozen=True)
class ReviewSession:
    principal: Principal
    token_id: UUID

    @property
    def can_write(self) -> bool:
        return SCOPE_WRITE in self.principal.scopes


def _token_id(principal: Principal, bearer: str) -> Optional[UUID]:
    with owner_context(principal):
        found = live_token(token_hash=token_hash(bearer))
    return found[0] if found is not None else None


def sign_in(bearer: str) -> Optional[str]:
    """The signed cookie value for a live token that may read memory, else None."""
    bearer = (bearer or "").strip()
    if not bearer or len(bearer) > bounds.REVIEW_TOKEN_MAX_CHARS:
        return None
    principal = token_authenticate(bearer)
    if principal is None or SCOPE_READ not in principal.scopes:
        return None
    token_id = _token_id(principal, bearer)
    if token_id is None:
        return None
    return signing.dumps({"t": str(token_id), "o": principal.label, "s": sorted(principal.scopes)}, salt=SALT,
                         compress=True)


def current_session(cookie: Optional[str]) -> Optional[ReviewSession]:
    """The session a cookie still stands for: signature and age valid, and its token
    unrevoked with exactly the scopes it had at sign-in."""
    if not cookie or len(cookie) > 1024:
        return None
    try:
        payload = signing.loads(cookie, salt=SALT, max_age=bounds.REVIEW_COOKIE_MAX_AGE_SECONDS)
        owner = Principal.parse(payload["o"])
        token_id, scopes = UUID(payload["t"]), sorted(payload["s"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None
    with owner_context(owner):
        found = live_token(token_id=token_id)
    if found is None or sorted(found[1]) != scopes or SCOPE_READ not in scopes:
        return None
    principal = Principal(tenant_id=owner.tenant_id, principal_id=owner.principal_id, scopes=frozenset(scopes))
    return ReviewSession(principal=principal, token_id=token_id)

"""Owner bearer-token authentication and per-method scope checks for the DRF API.

``Authorization: Bearer <token>`` resolves, through ``memory.services.token_authenticate``
(which sees only the token's SHA-256), to a ``Principal`` carrying the token's scopes.
A missing, malformed, unknown or revoked token is 401; a live token without the scope a
view declares for the method is 403.

This module must never log, store or echo a token, and never trusts an owner named by
the request instead of the one the token resolves to.
"""
from __future__ import annotations

from dataclasses import dataclass

from rest_framework import authentication, exceptions, permissions

from memory.services import token_authenticate
from veetbot.identity import Principal

AUTH_SCHEME = "Bearer"
WWW_AUTHENTICATE = 'Bearer realm="veetbot"'


@dataclass(frozen=True)
class OwnerUser:
    """What DRF puts in ``request.user``: the authenticated owner, nothing else."""

    principal: Principal
    is_authenticated: bool = True
    is_anonymous: bool = False

    @property
    def scopes(self) -> frozenset[str]:
        return self.principal.scopes


class OwnerTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None  # no credentials: the permission check answers 401
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != AUTH_SCHEME.lower() or not token or any(c.isspace() for c in token):
            raise exceptions.AuthenticationFailed()
        principal = token_authenticate(token)
        if principal is None:
            raise exceptions.AuthenticationFailed()
        return OwnerUser(principal=principal), None

    def authenticate_header(self, request) -> str:
        # Without this DRF would turn every 401 into a 403.
        return WWW_AUTHENTICATE


class HasOwnerScopes(permissions.BasePermission):
    """Grant a method only to an owner holding the scope the view declares for it.

    Views declare ``required_scopes = {"GET": "memory.read", ...}``; a value may also be
    a tuple of scopes that are all needed. HEAD needs GET's scope. A method the view
    implements but declares no scope for is refused, so a new handler cannot become
    reachable by accident; a method the view does not implement passes here so the
    caller gets 405.
    """

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not getattr(user, "is_authenticated", False) or not isinstance(user, OwnerUser):
            return False
        method = "GET" if request.method == "HEAD" else request.method
        required = getattr(view, "required_scopes", {}).get(method)
        if required is None:
            return request.method not in getattr(view, "allowed_methods", ())
        return holds(user.scopes, required)


def holds(scopes: frozenset[str], required) -> bool:
    """Whether ``scopes`` cover a ``required_scopes`` value (one scope, or a tuple of all
    needed). Also what the MCP tools check, each against its REST route's declaration."""
    needed = {required} if isinstance(required, str) else set(required)
    return needed <= scopes

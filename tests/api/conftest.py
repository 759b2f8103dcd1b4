"""Fixtures of the owner-API tests: an enabled API, a client that speaks JSON with bearer
tokens and Idempotency-Keys, owners with tokens of chosen scopes, and row counts read
through the owner's own RLS context."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Optional

import pytest
from django.test import Client, override_settings

from memory import services
from memory.models import Event, IdempotencyReceipt, Memory, Session
from memory.services.owners import token_hash
from tests.factories import make_owner, owner_message
from veetbot.identity import Principal
from veetbot.rls import owner_context

_unset = object()


@dataclass
class Owner:
    principal: Principal
    token: str

    def token_with(self, scopes: Iterable[str]) -> str:
        return services.token_create(principal=self.principal, scopes=scopes)

    def message(self, text: str = "I prefer Celsius for weather.", **kwargs):
        return owner_message(self.principal, text, **kwargs)

    def counts(self) -> dict[str, int]:
        with owner_context(self.principal):
            return {
                "memories": Memory.objects.count(),
                "live_memories": Memory.objects.filter(erased_at__isnull=True).count(),
                "receipts": IdempotencyReceipt.objects.count(),
                "sessions": Session.objects.count(),
                "events": Event.objects.count(),
            }


class Api:
    """A thin JSON client: ``api.post("/v1/memories", owner.token, body)``."""

    def __init__(self, client: Client):
        self.client = client

    def request(
        self, method: str, path: str, token: Optional[str] = None, body: Any = _unset, *,
        raw: Optional[bytes] = None, key: Optional[str] = "key-1", query: Optional[dict] = None,
        headers: Optional[dict] = None,
    ):
        meta = {}
        if token is not None:
            meta["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        if key is not None and method in {"POST", "DELETE"}:
            meta["HTTP_IDEMPOTENCY_KEY"] = key
        for name, value in (headers or {}).items():
            meta["HTTP_" + name.upper().replace("-", "_")] = value
        data = raw if raw is not None else (b"" if body is _unset else json.dumps(body).encode())
        if query:
            from urllib.parse import urlencode

            path = f"{path}?{urlencode(query, doseq=True)}"
        return self.client.generic(method, path, data=data, content_type="application/json", **meta)

    def get(self, path, token=None, **query):
        return self.request("GET", path, token, query=query or None)

    def post(self, path, token=None, body: Any = _unset, **kwargs):
        return self.request("POST", path, token, body, **kwargs)

    def delete(self, path, token=None, **kwargs):
        return self.request("DELETE", path, token, **kwargs)


@pytest.fixture
def api(db):
    with override_settings(AGENT_MEMORY_API_ENABLED=True):
        yield Api(Client())


@pytest.fixture
def owner(db) -> Owner:
    principal, token = make_owner("Owner A")
    return Owner(principal, token)


@pytest.fixture
def other_owner(db) -> Owner:
    principal, token = make_owner("Owner B")
    return Owner(principal, token)


def revoke(owner: Owner, token: str) -> None:
    from memory.models import OwnerToken

    with owner_context(owner.principal):
        token_id = OwnerToken.objects.get(token_hash=token_hash(token)).id
    services.token_revoke(principal=owner.principal, token_id=token_id)


def memory_body(event, **overrides) -> dict:
    body = {
        "subject": "weather units",
        "statement": "The owner prefers Celsius.",
        "belief_type": "preference",
        "sources": [{"event": str(event.id), "part": str(event.parts[0].id)}],
    }
    body.update(overrides)
    return body


def assert_error(response, status: int, code: str) -> list:
    """The one envelope, exactly: {"error": {"code": ..., "details": [...]}}, never cached."""
    assert response.status_code == status, response.content
    payload = response.json()
    assert set(payload) == {"error"}
    assert set(payload["error"]) == {"code", "details"}
    assert payload["error"]["code"] == code
    assert isinstance(payload["error"]["details"], list)
    assert response["Cache-Control"] == "private, no-store"
    return payload["error"]["details"]



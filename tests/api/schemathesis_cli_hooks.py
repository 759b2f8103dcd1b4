"""Schemathesis CLI hooks for a run against a served API (gunicorn): load with
``SCHEMATHESIS_HOOKS=tests.api.schemathesis_cli_hooks`` from the repository root.

Needs ``VEETBOT_API_URL`` (e.g. ``http://127.0.0.1:8765``) and ``VEETBOT_API_TOKEN`` (an
owner token with memory.read and memory.write, as ``quickstart --json`` prints). On load
it finds the owner's real rows through the API itself — it opens one session and records
one owner message there, both under fixed Idempotency-Keys so a second run replays them —
and registers ``tests.api.schemathesis_semantics.make_meaningful`` as a global
``map_case`` hook. Nothing here talks to the database or reads settings.
"""
from __future__ import annotations

import os
from typing import Optional

import requests
import schemathesis

from tests.api.schemathesis_semantics import Fixtures, make_meaningful

BASE = os.environ.get("VEETBOT_API_URL", "http://127.0.0.1:8765").rstrip("/")
TOKEN = os.environ.get("VEETBOT_API_TOKEN", "")
TIMEOUT = 30


def _call(method: str, path: str, *, key: Optional[str] = None, **kwargs) -> requests.Response:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return requests.request(method, BASE + path, headers=headers, timeout=TIMEOUT, **kwargs)


def _items(path: str, **query) -> list[dict]:
    response = _call("GET", path, params={"ceiling": "restricted", "limit": 100, **query})
    return response.json()["items"] if response.status_code == 200 else []


def _cursor_for(path: str, query: dict) -> Optional[str]:
    response = _call("GET", path, params={**query, "limit": 1})
    return response.json().get("next_cursor") if response.status_code == 200 else None


def discover() -> Fixtures:
    if not TOKEN:
        raise RuntimeError("set VEETBOT_API_TOKEN (and VEETBOT_API_URL) for tests.api.schemathesis_cli_hooks")
    session = _call("POST", "/v1/sessions", key="schemathesis-hooks-session", json={"scope": "user"})
    session.raise_for_status()
    session_id = session.json()["id"]
    event = _call("POST", f"/v1/sessions/{session_id}/events", key="schemathesis-hooks-event", json={
        "kind": "user.message.created", "speaker": "owner", "parts": ["I keep my bike in the hallway."]})
    event.raise_for_status()
    # With derived rows too (when the reconsolidation API is on), so their controls are reached.
    memories = _items("/v1/memories", include_derived="true") or _items("/v1/memories")
    people = sorted({m["attribution"].split(":", 1)[1] for m in memories
                     if m.get("attribution", "").startswith("person:")})
    return Fixtures(
        source={"event": event.json()["id"], "part": event.json()["parts"][0]["id"]},
        session_id=session_id,
        person_id=people[0] if people else None,
        memory_ids=[m["id"] for m in memories],
        session_ids=[session_id],
        operation_ids=[op["id"] for op in _items("/v1/memory-reconsolidations")],
        cursor_for=_cursor_for,
        disposable=_disposable,
    )


def _disposable(kind: str) -> Optional[str]:
    """A fresh session with one owner message for DELETE /v1/sessions/{id} to erase (people
    have no create route: their erasure keeps its generated ID)."""
    if kind != "session":
        return None
    session = _call("POST", "/v1/sessions", key=f"schemathesis-erasable-{os.urandom(8).hex()}", json={"scope": "user"})
    if session.status_code != 201:
        return None
    _call("POST", f"/v1/sessions/{session.json()['id']}/events", key=f"schemathesis-erasable-{os.urandom(8).hex()}",
          json={"kind": "user.message.created", "speaker": "owner", "parts": ["A conversation made to be erased."]})
    return session.json()["id"]


FIXTURES = discover()


@schemathesis.hook
def map_case(context, case):
    return make_meaningful(case, FIXTURES)

"""What the OpenAPI document cannot say, for schemathesis: rewrite *positive* generated
cases so they also satisfy the rules no JSON Schema can state, and name real rows.

The document states every rule of shape (closed bodies, bounds, patterns, formats). A few
rules are about the world, not the shape, and each is documented in prose on its route:
a memory cites parts of the owner's own messages and a session scope names a live
session; ``expires_at`` is after ``valid_from``; ``as_of`` is not in the future; a
``person:<uuid>`` speaker is a live person; a cursor is one the server issued for this
very request. A request breaking one of them is refused as validation_error, correctly,
so a generated case that breaks one says nothing about schema and server agreeing:
these hooks give such cases real references instead, the way a client would.

Only components generated in positive mode are touched: a negative case keeps exactly
the violation it was generated for. Path IDs are pointed at real rows for two of three
generated values (chosen by the value itself, so runs stay deterministic), so detail,
review, erase and the operation actions reach their success paths, not only not_found.

Used in-process by ``tests/api/test_schema_conformance.py`` and, through
``tests/api/schemathesis_cli_hooks.py``, by the schemathesis CLI against a server.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from schemathesis.core.parameters import ParameterLocation

# Which fixture list a path parameter draws real IDs from.
PATH_IDS = {"memory_id": "memory_ids", "session_id": "session_ids", "operation_id": "operation_ids"}
# Erasure routes get a fresh row of their own instead of a shared fixture row: erasing the
# fixture session would take the message every generated memory cites.
ERASURES = {("DELETE", "/v1/sessions/{session_id}"): ("session_id", "session"),
            ("DELETE", "/v1/people/{person_id}"): ("person_id", "person")}
# Whole-account erasure revokes the token every later case authenticates with, so the
# fuzz runs leave it out (tests/api/test_erasure_routes.py covers it, replay included).
NOT_FUZZED = ("/v1/account/erase",)


@dataclass
class Fixtures:
    """Real rows of the owner the run authenticates as."""

    source: dict  # {"event": ..., "part": ...}: a part of one of the owner's own messages
    session_id: str
    person_id: Optional[str]
    memory_ids: list[str] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    operation_ids: list[str] = field(default_factory=list)
    # (route path, query without cursor) -> a cursor the server issues for it, or None.
    cursor_for: Callable[[str, dict], Optional[str]] = lambda path, query: None
    # "session" | "person" -> the ID of a fresh row made to be erased, or None (none can be made).
    disposable: Callable[[str], Optional[str]] = lambda kind: None


def _positive(case, location: ParameterLocation) -> bool:
    meta = case.meta
    if meta is None:
        return False
    component = meta.components.get(location)
    return component is not None and component.mode.is_positive


def _instant(value: Any) -> Optional[datetime]:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _pick(value: str, choices: list[str]) -> Optional[str]:
    """A real ID for two of three generated values, the same one for the same value."""
    if not choices:
        return None
    digest = int.from_bytes(hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()[:8], "big")
    if digest % 3 == 0:
        return None
    return choices[(digest // 3) % len(choices)]


def _memory_create(body: dict, fixtures: Fixtures, now: datetime) -> None:
    if "sources" in body:
        body["sources"] = [dict(fixtures.source)]  # one: the same part twice is refused
    if isinstance(body.get("scope"), str) and body["scope"].startswith("session:"):
        body["scope"] = f"session:{fixtures.session_id}"
    expires = _instant(body.get("expires_at"))
    valid_from = _instant(body.get("valid_from")) or now
    if expires is not None and expires <= valid_from:
        body["expires_at"] = None


def _search(body: dict, now: datetime) -> None:
    as_of = _instant(body.get("as_of"))
    if as_of is not None and as_of > now:
        body["as_of"] = None


def _event(body: dict, fixtures: Fixtures) -> None:
    speaker = body.get("speaker")
    if isinstance(speaker, str) and speaker.startswith("person:"):
        body["speaker"] = f"person:{fixtures.person_id}" if fixtures.person_id else "owner"


def make_meaningful(case, fixtures: Fixtures, now: Optional[datetime] = None):
    """The case, its positive components given real references (see the module doc)."""
    now = now or datetime.now(timezone.utc)  # the server's own "now" comes a little later
    route = (case.method.upper(), case.operation.path)
    if _positive(case, ParameterLocation.BODY) and isinstance(case.body, dict):
        if route == ("POST", "/v1/memories"):
            _memory_create(case.body, fixtures, now)
        elif route in (("POST", "/v1/memories/search"), ("POST", "/v1/memories/context")):
            _search(case.body, now)
        elif route == ("POST", "/v1/sessions/{session_id}/events"):
            _event(case.body, fixtures)
    if _positive(case, ParameterLocation.PATH) and case.path_parameters:
        erased = ERASURES.get(route, ("",))[0]  # never a shared fixture row: a fresh one or the generated ID
        for name, value in list(case.path_parameters.items()):
            if name in PATH_IDS and name != erased and isinstance(value, str):
                real = _pick(value, getattr(fixtures, PATH_IDS[name]))
                if real is not None:
                    case.path_parameters[name] = real
        if route in ERASURES:
            name, kind = ERASURES[route]
            fresh = fixtures.disposable(kind) if _pick(str(case.path_parameters.get(name)), ["real"]) else None
            if fresh is not None:
                case.path_parameters[name] = fresh
    if _positive(case, ParameterLocation.QUERY) and case.query and "cursor" in case.query:
        rest = {name: value for name, value in case.query.items() if name != "cursor"}
        issued = fixtures.cursor_for(case.operation.path, rest)
        if issued is None:
            del case.query["cursor"]
        else:
            case.query["cursor"] = issued
    return case

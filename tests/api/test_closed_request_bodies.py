"""Closed, strictly typed JSON bodies: anything unexpected is validation_error and nothing is written.

Details name fields and problem codes only; no submitted value is ever echoed.
"""
from __future__ import annotations

import json

import pytest

from tests.api.conftest import assert_error, memory_body

SECRET = "my-private-words"


def _refused(api, owner, *, body=None, raw=None, path="/v1/memories") -> list:
    response = api.post(path, owner.token, body, raw=raw) if raw is not None else api.post(path, owner.token, body)
    details = assert_error(response, 400, "validation_error")
    counts = owner.counts()
    assert counts["memories"] == 0 and counts["receipts"] == 0 and counts["sessions"] == owner.sessions_before
    assert SECRET not in response.content.decode()
    return details


@pytest.fixture
def event(owner):
    event = owner.message()
    owner.sessions_before = owner.counts()["sessions"]
    return event


def test_unknown_field_is_refused_and_nothing_written(api, owner, event):
    details = _refused(api, owner, body=memory_body(event, mood=SECRET))
    assert details == [{"field": "mood", "problem": "extra_forbidden"}]


@pytest.mark.parametrize("fixed", ["derivation", "attribution", "authority", "status", "claim_kind", "id", "created_at"])
def test_fields_the_api_fixes_cannot_be_sent(api, owner, event, fixed):
    details = _refused(api, owner, body=memory_body(event, **{fixed: "x"}))
    assert details == [{"field": fixed, "problem": "extra_forbidden"}]


def test_unknown_field_with_a_non_identifier_name_is_not_echoed(api, owner, event):
    details = _refused(api, owner, body=memory_body(event, **{f"{SECRET} ☂": 1}))
    assert details == [{"field": "body", "problem": "extra_forbidden"}]


def test_unknown_field_in_a_nested_source_is_refused(api, owner, event):
    body = memory_body(event)
    body["sources"][0]["note"] = SECRET
    assert _refused(api, owner, body=body) == [{"field": "sources.0.note", "problem": "extra_forbidden"}]


@pytest.mark.parametrize("field,value,problem", [
    ("portable", "true", "bool_type"),
    ("portable", 1, "bool_type"),
    ("confidence", "0.5", "float_type"),
    ("confidence", True, "float_type"),
    ("confidence", 1.5, "less_than_equal"),
    ("subject", 7, "string_type"),
    ("entity_ids", SECRET, "list_type"),
    ("sources", [{"event": SECRET, "part": SECRET}], None),
    ("belief_type", SECRET, "literal_error"),
    ("sensitivity", "secret", "literal_error"),
    ("scope", "session", "string_pattern_mismatch"),
    ("statement", "", "string_too_short"),
    ("statement", "x" * 4001, "string_too_long"),
    ("sources", [], "too_short"),
])
def test_wrong_types_and_values_are_refused(api, owner, event, field, value, problem):
    details = _refused(api, owner, body=memory_body(event, **{field: value}))
    if problem is None:
        assert {d["problem"] for d in details} == {"uuid_parsing"}
    else:
        assert details == [{"field": field, "problem": problem}]


def test_missing_required_fields_are_named(api, owner, event):
    details = _refused(api, owner, body={"subject": "s"})
    assert {(d["field"], d["problem"]) for d in details} == {
        ("statement", "missing"), ("belief_type", "missing"), ("sources", "missing"),
    }


@pytest.mark.parametrize("value", ["2026-09-01T09:00:00", "2026-09-01", "yesterday", 1788253200])
def test_naive_or_unparseable_datetime_is_refused(api, owner, event, value):
    details = _refused(api, owner, body=memory_body(event, valid_from=value))
    assert [d["field"] for d in details] == ["valid_from"]
    assert details[0]["problem"] in {"timezone_aware", "datetime_parsing", "datetime_type"}


def test_naive_datetime_problem_is_timezone_aware(api, owner, event):
    details = _refused(api, owner, body=memory_body(event, expires_at="2027-01-01T00:00:00"))
    assert details == [{"field": "expires_at", "problem": "timezone_aware"}]


def test_expiry_not_after_validity_is_refused(api, owner, event):
    body = memory_body(event, valid_from="2026-09-02T00:00:00Z", expires_at="2026-09-01T00:00:00Z")
    assert _refused(api, owner, body=body) == [{"field": "expires_at", "problem": "not_after_valid_from"}]


def test_aware_datetimes_with_offsets_are_accepted_and_answered_in_utc(api, owner, event):
    body = memory_body(event, valid_from="2026-09-01T11:00:00+02:00", evidence_at="2026-09-01T09:00:00Z",
                       expires_at="2027-09-01T09:00:00Z", confidence=1, entity_ids=["person:x"])
    memory = api.post("/v1/memories", owner.token, body).json()
    assert (memory["valid_from"], memory["expires_at"]) == ("2026-09-01T09:00:00Z", "2027-09-01T09:00:00Z")
    assert memory["confidence"] == 1.0 and memory["entity_ids"] == ["person:x"]


@pytest.mark.parametrize("raw", [
    b"{", b"not json", b'{"subject": "a",}', b"\xff\xfe\x00", b'{"confidence": NaN}', b'{"confidence": Infinity}',
    b"[" * 100000,
])
def test_malformed_json_is_refused(api, owner, event, raw):
    assert _refused(api, owner, raw=raw) == [{"field": "body", "problem": "malformed_json"}]


@pytest.mark.parametrize("raw", [b"[]", b'"text"', b"1", b"null"])
def test_body_that_is_not_an_object_is_refused(api, owner, event, raw):
    assert _refused(api, owner, raw=raw) == [{"field": "body", "problem": "not_an_object"}]


def test_empty_body_is_refused(api, owner, event):
    assert _refused(api, owner, raw=b"   ") == [{"field": "body", "problem": "missing"}]


def test_duplicate_keys_are_refused_and_nothing_written(api, owner, event):
    body = json.dumps(memory_body(event))
    raw = body[:-1] + f', "statement": "{SECRET}"}}'
    assert _refused(api, owner, raw=raw.encode()) == [{"field": "statement", "problem": "duplicate_key"}]


def test_duplicate_keys_in_a_nested_object_are_refused(api, owner, event):
    part = str(event.parts[0].id)
    raw = json.dumps(memory_body(event)).replace(f'"part": "{part}"', f'"part": "{part}", "part": "{part}"')
    assert _refused(api, owner, raw=raw.encode()) == [{"field": "part", "problem": "duplicate_key"}]


@pytest.mark.parametrize("text", ["nul\u0000inside", "lone \ud800 surrogate"])
def test_strings_postgres_cannot_store_are_refused(api, owner, event, text):
    raw = json.dumps(memory_body(event, statement=text)).encode()
    assert _refused(api, owner, raw=raw) == [{"field": "statement", "problem": "invalid_character"}]


def test_session_body_is_closed_and_typed(api, owner, event):
    assert _refused(api, owner, path="/v1/sessions", body={"scope": "user", "name": SECRET}) == [
        {"field": "name", "problem": "extra_forbidden"}]
    assert _refused(api, owner, path="/v1/sessions", body={"scope": "session:abc"}) == [
        {"field": "scope", "problem": "string_pattern_mismatch"}]
    assert _refused(api, owner, path="/v1/sessions", body={"scope": "user", "started_at": "2026-09-01T09:00:00"}) == [
        {"field": "started_at", "problem": "timezone_aware"}]


def test_event_body_is_closed_and_typed(api, owner, event):
    path = f"/v1/sessions/{event.session}/events"
    good = {"kind": "user.message.created", "speaker": "owner", "parts": ["Hi"]}
    cases = [
        (good | {"excluded": True}, [{"field": "excluded", "problem": "extra_forbidden"}]),
        (good | {"parts": SECRET}, [{"field": "parts", "problem": "list_type"}]),
        (good | {"parts": []}, [{"field": "parts", "problem": "too_short"}]),
        (good | {"parts": [""]}, [{"field": "parts.0", "problem": "string_too_short"}]),
        (good | {"speaker": "someone"}, [{"field": "speaker", "problem": "string_pattern_mismatch"}]),
        (good | {"kind": "email"}, [{"field": "kind", "problem": "literal_error"}]),
    ]
    events_before = owner.counts()["events"]
    for body, expected in cases:
        assert _refused(api, owner, path=path, body=body) == expected
    assert owner.counts()["events"] == events_before


def test_event_naming_an_unknown_person_is_not_found(api, owner, event):
    path = f"/v1/sessions/{event.session}/events"
    body = {"kind": "user.message.created", "speaker": "person:00000000-0000-4000-8000-000000000000", "parts": ["Hi"]}
    events_before = owner.counts()["events"]
    response = api.post(path, owner.token, body, key="unknown-person")
    assert assert_error(response, 404, "not_found") == [{"field": "speaker", "problem": "unknown person"}]
    assert owner.counts()["events"] == events_before


def test_delete_refuses_a_body(api, owner, event):
    memory = api.post("/v1/memories", owner.token, memory_body(event), key="a").json()
    response = api.request("DELETE", f"/v1/memories/{memory['id']}", owner.token, {"reason": SECRET}, key="b",
                           query={"ceiling": "internal"})
    assert assert_error(response, 400, "validation_error") == [{"field": "body", "problem": "not_allowed"}]
    assert owner.counts()["live_memories"] == 1

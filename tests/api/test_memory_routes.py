"""The owner API's routes doing their job: create, read, review, erase, sessions, events."""
from __future__ import annotations

from memory.domain import MemoryView
from tests.api.conftest import assert_error, memory_body

MEMORY_FIELDS = [
    "id", "subject", "statement", "belief_type", "claim_kind", "polarity", "derivation", "attribution",
    "authority", "sensitivity", "scope", "portable", "confidence", "evidence_at", "valid_from", "expires_at",
    "entity_ids", "status", "created_at", "updated_at", "content_revision", "creation_sequence",
    "store_position", "utility", "last_used_at", "reviewed_at", "dismissed_at", "sources",
]


def test_memory_response_has_exactly_the_memory_view_fields_in_wire_order(api, owner):
    event = owner.message()
    response = api.post("/v1/memories", owner.token, memory_body(event))
    assert response.status_code == 201
    assert list(response.json()) == MEMORY_FIELDS
    assert set(MEMORY_FIELDS) == set(MemoryView.model_fields)


def test_create_fixes_explicit_owner_user_and_applies_documented_defaults(api, owner):
    event = owner.message()
    memory = api.post("/v1/memories", owner.token, memory_body(event)).json()
    assert (memory["derivation"], memory["attribution"], memory["authority"]) == ("explicit", "owner", "USER")
    assert (memory["sensitivity"], memory["scope"], memory["portable"], memory["confidence"]) == ("internal", "user", True, 1.0)
    assert memory["polarity"] == "affirmed" and memory["status"] == "active"
    assert memory["sources"] == [{"event": str(event.id), "part": str(event.parts[0].id)}]
    assert memory["created_at"].endswith("Z")


def test_create_answers_not_found_for_a_source_that_is_not_an_owner_message(api, owner):
    event = owner.message("Noted.", speaker="assistant", kind="assistant.message.created")
    details = assert_error(api.post("/v1/memories", owner.token, memory_body(event)), 404, "not_found")
    assert details == [{"field": "sources.0.event", "problem": "not an owner message"}]
    assert owner.counts()["memories"] == 0


def test_create_answers_not_found_for_a_session_scope_that_names_no_session(api, owner):
    event = owner.message("I keep my bike in the hallway.")
    body = memory_body(event) | {"scope": "session:00000000-0000-4000-8000-000000000000"}
    details = assert_error(api.post("/v1/memories", owner.token, body), 404, "not_found")
    assert details == [{"field": "scope", "problem": "unknown session"}]
    assert owner.counts()["memories"] == 0


def test_create_refuses_the_same_source_twice_as_malformed(api, owner):
    event = owner.message("I keep my bike in the hallway.")
    body = memory_body(event)
    body["sources"] = body["sources"] * 2
    details = assert_error(api.post("/v1/memories", owner.token, body), 400, "validation_error")
    assert details == [{"field": "sources", "problem": "repeated_source"}]
    assert owner.counts()["memories"] == 0


def test_get_returns_the_created_memory(api, owner):
    created = api.post("/v1/memories", owner.token, memory_body(owner.message())).json()
    response = api.get(f"/v1/memories/{created['id']}", owner.token, ceiling="internal")
    assert response.status_code == 200
    assert response.json() == created


def test_list_defaults_to_active_memories_newest_first(api, owner):
    first = api.post("/v1/memories", owner.token, memory_body(owner.message(), statement="One."), key="a").json()
    second = api.post("/v1/memories", owner.token, memory_body(owner.message(), statement="Two."), key="b").json()
    api.post(f"/v1/memories/{first['id']}/review", owner.token, {"action": "not_true"}, key="c", query={"ceiling": "internal"})
    active = api.get("/v1/memories", owner.token, ceiling="internal").json()
    assert [m["id"] for m in active["items"]] == [second["id"]] and active["next_cursor"] is None
    every = api.get("/v1/memories", owner.token, ceiling="internal", status="all").json()
    assert [m["id"] for m in every["items"]] == [first["id"], second["id"]]  # the retraction moved it up
    retracted = api.get("/v1/memories", owner.token, ceiling="internal", status="retracted").json()
    assert [m["id"] for m in retracted["items"]] == [first["id"]]


def test_list_filters_by_belief_type_and_scope(api, owner):
    api.post("/v1/memories", owner.token, memory_body(owner.message(), belief_type="goal"), key="a")
    api.post("/v1/memories", owner.token, memory_body(owner.message(), statement="B.", scope="project:veet"), key="b")
    goals = api.get("/v1/memories", owner.token, ceiling="internal", belief_type="goal").json()["items"]
    assert [m["belief_type"] for m in goals] == ["goal"]
    project = api.get("/v1/memories", owner.token, ceiling="internal", scope="project:veet").json()["items"]
    assert [m["scope"] for m in project] == ["project:veet"]


def test_review_actions_change_the_memory(api, owner):
    memory = api.post("/v1/memories", owner.token, memory_body(owner.message()), key="create").json()
    path = f"/v1/memories/{memory['id']}/review"
    reviewed = api.post(path, owner.token, {"action": "mark_reviewed"}, key="r1", query={"ceiling": "internal"})
    assert reviewed.status_code == 200 and reviewed.json()["reviewed_at"] is not None
    not_here = api.post(path, owner.token, {"action": "not_here"}, key="r2", query={"ceiling": "internal"}).json()
    assert not_here["portable"] is False and not_here["content_revision"] == 2
    dismissed = api.post(path, owner.token, {"action": "dismiss"}, key="r3", query={"ceiling": "internal"}).json()
    assert dismissed["dismissed_at"] is not None
    not_true = api.post(path, owner.token, {"action": "not_true"}, key="r4", query={"ceiling": "internal"}).json()
    assert not_true["status"] == "retracted"


def test_review_refuses_an_unknown_action(api, owner):
    memory = api.post("/v1/memories", owner.token, memory_body(owner.message()), key="create").json()
    response = api.post(f"/v1/memories/{memory['id']}/review", owner.token, {"action": "forget"}, key="r",
                        query={"ceiling": "internal"})
    assert assert_error(response, 400, "validation_error") == [{"field": "action", "problem": "literal_error"}]


def test_recreating_a_claim_the_owner_rejected_is_conflict(api, owner):
    event = owner.message()
    memory = api.post("/v1/memories", owner.token, memory_body(event), key="a").json()
    api.post(f"/v1/memories/{memory['id']}/review", owner.token, {"action": "not_true"}, key="b", query={"ceiling": "internal"})
    details = assert_error(api.post("/v1/memories", owner.token, memory_body(event), key="c"), 409, "conflict")
    assert details == [{"field": "statement", "problem": "rejected_claim"}]


def test_delete_erases_and_answers_204_without_a_body(api, owner):
    memory = api.post("/v1/memories", owner.token, memory_body(owner.message()), key="a").json()
    response = api.delete(f"/v1/memories/{memory['id']}", owner.token, key="b", query={"ceiling": "internal"})
    assert response.status_code == 204 and response.content == b""
    assert_error(api.get(f"/v1/memories/{memory['id']}", owner.token, ceiling="restricted"), 404, "not_found")
    assert owner.counts()["live_memories"] == 0


def test_delete_of_an_erased_memory_with_a_new_key_is_not_found(api, owner):
    memory = api.post("/v1/memories", owner.token, memory_body(owner.message()), key="a").json()
    api.delete(f"/v1/memories/{memory['id']}", owner.token, key="b", query={"ceiling": "internal"})
    response = api.delete(f"/v1/memories/{memory['id']}", owner.token, key="c", query={"ceiling": "internal"})
    assert_error(response, 404, "not_found")


def test_session_and_event_then_memory_citing_the_new_part(api, owner):
    session = api.post("/v1/sessions", owner.token, {"scope": "session"}, key="s")
    assert session.status_code == 201
    session = session.json()
    assert session["scope"] == f"session:{session['id']}"
    event = api.post(f"/v1/sessions/{session['id']}/events", owner.token,
                     {"kind": "user.message.created", "speaker": "owner", "parts": ["I run on Tuesdays.", "And Fridays."],
                      "created_at": "2026-09-01T10:00:00+02:00"}, key="e")
    assert event.status_code == 201
    event = event.json()
    assert [p["text"] for p in event["parts"]] == ["I run on Tuesdays.", "And Fridays."]
    assert event["created_at"] == "2026-09-01T08:00:00Z" and event["session"] == session["id"]
    body = {"subject": "running", "statement": "The owner runs on Tuesdays.", "belief_type": "routine",
            "scope": session["scope"], "sources": [{"event": event["id"], "part": event["parts"][0]["id"]}]}
    memory = api.post("/v1/memories", owner.token, body, key="m")
    assert memory.status_code == 201 and memory.json()["scope"] == session["scope"]


def test_event_for_an_unknown_session_is_not_found(api, owner):
    response = api.post("/v1/sessions/00000000-0000-4000-8000-000000000000/events", owner.token,
                        {"kind": "user.message.created", "speaker": "owner", "parts": ["Hi"]})
    assert_error(response, 404, "not_found")
    assert owner.counts()["events"] == 0


def test_malformed_path_id_is_not_found_in_the_envelope(api, owner):
    assert_error(api.get("/v1/memories/not-a-uuid", owner.token, ceiling="internal"), 404, "not_found")


def test_unsupported_method_is_405_in_the_envelope(api, owner):
    assert_error(api.request("PATCH", "/v1/memories", owner.token, {}), 405, "method_not_allowed")
    assert_error(api.request("OPTIONS", "/v1/memories", owner.token), 405, "method_not_allowed")

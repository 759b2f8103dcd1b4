"""Idempotency-Key on every write: replay, conflict, key rules, receipts without prose."""
from __future__ import annotations

import json

import pytest

from memory.models import IdempotencyReceipt
from tests.api.conftest import assert_error, memory_body
from veetbot.rls import owner_context


def test_same_key_and_body_replays_the_same_status_and_resource(api, owner):
    body = memory_body(owner.message())
    first = api.post("/v1/memories", owner.token, body, key="same")
    again = api.post("/v1/memories", owner.token, body, key="same")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json()["id"] == first.json()["id"]
    assert again["Idempotency-Replayed"] == "true" and not first.has_header("Idempotency-Replayed")
    assert owner.counts()["memories"] == 1 and owner.counts()["receipts"] == 1


def test_replay_matches_when_only_key_order_and_whitespace_differ(api, owner):
    event = owner.message()
    body = memory_body(event)
    api.post("/v1/memories", owner.token, body, key="k")
    reordered = ("{ " + ", ".join(f'"{k}": {json.dumps(v)}' for k, v in reversed(body.items())) + " }").encode()
    assert api.post("/v1/memories", owner.token, raw=reordered, key="k").status_code == 201
    assert owner.counts()["memories"] == 1


def test_replay_renders_the_current_state_of_the_resource(api, owner):
    body = memory_body(owner.message())
    created = api.post("/v1/memories", owner.token, body, key="create").json()
    api.post(f"/v1/memories/{created['id']}/review", owner.token, {"action": "not_here"}, key="r",
             query={"ceiling": "internal"})
    replay = api.post("/v1/memories", owner.token, body, key="create")
    assert replay.status_code == 201
    assert replay.json()["portable"] is False and replay.json()["content_revision"] == 2


def test_same_key_with_another_body_is_conflict_and_writes_nothing(api, owner):
    event = owner.message()
    api.post("/v1/memories", owner.token, memory_body(event), key="k")
    other = api.post("/v1/memories", owner.token, memory_body(event, statement="Something else."), key="k")
    assert assert_error(other, 409, "conflict") == [{"field": "Idempotency-Key", "problem": "reused_with_another_request"}]
    assert owner.counts()["memories"] == 1


def test_same_key_on_another_route_is_conflict(api, owner):
    api.post("/v1/sessions", owner.token, {"scope": "user"}, key="k")
    session = api.post("/v1/sessions", owner.token, {"scope": "user"}, key="other").json()
    events = api.post(f"/v1/sessions/{session['id']}/events", owner.token,
                      {"kind": "user.message.created", "speaker": "owner", "parts": ["Hi"]}, key="k")
    assert_error(events, 409, "conflict")
    assert owner.counts()["events"] == 0


def test_same_key_on_another_target_or_ceiling_is_conflict(api, owner):
    a = api.post("/v1/memories", owner.token, memory_body(owner.message(), statement="A."), key="a").json()
    b = api.post("/v1/memories", owner.token, memory_body(owner.message(), statement="B."), key="b").json()
    api.post(f"/v1/memories/{a['id']}/review", owner.token, {"action": "dismiss"}, key="r", query={"ceiling": "internal"})
    other_target = api.post(f"/v1/memories/{b['id']}/review", owner.token, {"action": "dismiss"}, key="r",
                            query={"ceiling": "internal"})
    assert_error(other_target, 409, "conflict")
    other_ceiling = api.post(f"/v1/memories/{a['id']}/review", owner.token, {"action": "dismiss"}, key="r",
                             query={"ceiling": "restricted"})
    assert_error(other_ceiling, 409, "conflict")
    assert api.get(f"/v1/memories/{b['id']}", owner.token, ceiling="internal").json()["dismissed_at"] is None


def test_keys_belong_to_one_owner(api, owner, other_owner):
    mine = api.post("/v1/sessions", owner.token, {"scope": "user"}, key="shared").json()
    theirs = api.post("/v1/sessions", other_owner.token, {"scope": "user"}, key="shared")
    assert theirs.status_code == 201 and theirs.json()["id"] != mine["id"]


@pytest.mark.parametrize("key,problem", [(None, "missing"), ("", "blank"), ("   ", "blank"), ("k" * 129, "too_long")])
def test_bad_idempotency_key_is_validation_error_and_writes_nothing(api, owner, key, problem):
    response = api.post("/v1/memories", owner.token, memory_body(owner.message()), key=key)
    assert assert_error(response, 400, "validation_error") == [{"field": "Idempotency-Key", "problem": problem}]
    assert owner.counts()["memories"] == 0 and owner.counts()["receipts"] == 0


@pytest.mark.parametrize("method,path,body", [
    ("POST", "/v1/sessions", {"scope": "user"}),
    ("DELETE", "/v1/memories/00000000-0000-4000-8000-000000000000?ceiling=internal", None),
    ("POST", "/v1/memories/00000000-0000-4000-8000-000000000000/review?ceiling=internal", {"action": "dismiss"}),
    ("POST", "/v1/sessions/00000000-0000-4000-8000-000000000000/events",
     {"kind": "user.message.created", "speaker": "owner", "parts": ["Hi"]}),
])
def test_every_write_requires_an_idempotency_key(api, owner, method, path, body):
    args = () if body is None else (body,)
    response = api.request(method, path, owner.token, *args, key=None)
    assert assert_error(response, 400, "validation_error") == [{"field": "Idempotency-Key", "problem": "missing"}]


def test_key_of_exactly_128_characters_is_accepted(api, owner):
    assert api.post("/v1/sessions", owner.token, {"scope": "user"}, key="k" * 128).status_code == 201


def test_replay_of_a_create_whose_resource_was_erased_is_not_found(api, owner):
    body = memory_body(owner.message())
    created = api.post("/v1/memories", owner.token, body, key="create").json()
    api.delete(f"/v1/memories/{created['id']}", owner.token, key="erase", query={"ceiling": "internal"})
    assert_error(api.post("/v1/memories", owner.token, body, key="create"), 404, "not_found")
    assert owner.counts()["memories"] == 1


def test_replayed_delete_answers_the_same_status_as_the_first_time(api, owner):
    created = api.post("/v1/memories", owner.token, memory_body(owner.message()), key="create").json()
    path = f"/v1/memories/{created['id']}"
    first = api.delete(path, owner.token, key="erase", query={"ceiling": "internal"})
    again = api.delete(path, owner.token, key="erase", query={"ceiling": "internal"})
    assert (first.status_code, again.status_code) == (204, 204)
    assert again["Idempotency-Replayed"] == "true"


def test_replay_of_an_erased_session_is_not_found(api, owner):
    from memory import services

    session = api.post("/v1/sessions", owner.token, {"scope": "user"}, key="s").json()
    services.session_erase(principal=owner.principal, session_id=session["id"])
    assert_error(api.post("/v1/sessions", owner.token, {"scope": "user"}, key="s"), 404, "not_found")


def test_replay_of_an_event_renders_the_same_event(api, owner):
    session = api.post("/v1/sessions", owner.token, {"scope": "user"}, key="s").json()
    body = {"kind": "user.message.created", "speaker": "owner", "parts": ["Hello"]}
    first = api.post(f"/v1/sessions/{session['id']}/events", owner.token, body, key="e")
    again = api.post(f"/v1/sessions/{session['id']}/events", owner.token, body, key="e")
    assert again.status_code == 201 and again.json() == first.json()
    assert owner.counts()["events"] == 1


def test_failed_write_leaves_no_receipt_so_the_key_can_be_retried(api, owner):
    event = owner.message("Noted.", speaker="assistant", kind="assistant.message.created")
    assert_error(api.post("/v1/memories", owner.token, memory_body(event), key="k"), 404, "not_found")
    assert owner.counts()["receipts"] == 0
    good = api.post("/v1/memories", owner.token, memory_body(owner.message()), key="k")
    assert good.status_code == 201


def test_receipt_holds_digests_and_ids_only(api, owner):
    secret = "The owner's private diary entry."
    created = api.post("/v1/memories", owner.token, memory_body(owner.message(secret), statement=secret), key="my-key").json()
    with owner_context(owner.principal):
        (receipt,) = IdempotencyReceipt.objects.values()
    stored = " ".join(str(v) for v in receipt.values())
    assert secret not in stored and "my-key" not in stored and "diary" not in stored
    assert receipt["resource_kind"] == "memory" and str(receipt["resource_id"]) == created["id"]
    assert len(receipt["key_sha256"]) == 64 and len(receipt["request_sha256"]) == 64

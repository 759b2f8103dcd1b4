"""Sensitivity ceilings and ownership: above the ceiling, foreign and unknown all look alike."""
from __future__ import annotations

import pytest

from tests.api.conftest import assert_error, memory_body

UNKNOWN = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def restricted(api, owner):
    return api.post("/v1/memories", owner.token, memory_body(owner.message(), sensitivity="restricted"), key="r").json()


@pytest.fixture
def internal(api, owner):
    return api.post("/v1/memories", owner.token, memory_body(owner.message(), statement="Plain."), key="i").json()


def test_above_ceiling_memory_is_not_found_on_detail(api, owner, restricted):
    assert_error(api.get(f"/v1/memories/{restricted['id']}", owner.token, ceiling="sensitive"), 404, "not_found")
    assert api.get(f"/v1/memories/{restricted['id']}", owner.token, ceiling="restricted").status_code == 200


def test_above_ceiling_answer_is_identical_to_unknown(api, owner, restricted):
    above = api.get(f"/v1/memories/{restricted['id']}", owner.token, ceiling="internal")
    unknown = api.get(f"/v1/memories/{UNKNOWN}", owner.token, ceiling="internal")
    assert (above.status_code, above.content) == (unknown.status_code, unknown.content)


def test_above_ceiling_memory_is_absent_from_the_list(api, owner, restricted, internal):
    listed = api.get("/v1/memories", owner.token, ceiling="internal").json()["items"]
    assert [m["id"] for m in listed] == [internal["id"]]
    everything = api.get("/v1/memories", owner.token, ceiling="restricted").json()["items"]
    assert {m["id"] for m in everything} == {internal["id"], restricted["id"]}


def test_public_ceiling_hides_internal(api, owner, internal):
    assert api.get("/v1/memories", owner.token, ceiling="public").json()["items"] == []


def test_review_above_ceiling_is_not_found_and_changes_nothing(api, owner, restricted):
    response = api.post(f"/v1/memories/{restricted['id']}/review", owner.token, {"action": "not_true"}, key="x",
                        query={"ceiling": "sensitive"})
    assert_error(response, 404, "not_found")
    after = api.get(f"/v1/memories/{restricted['id']}", owner.token, ceiling="restricted").json()
    assert after == restricted
    assert owner.counts()["receipts"] == 1  # only the create's


def test_delete_above_ceiling_is_not_found_and_erases_nothing(api, owner, restricted):
    response = api.delete(f"/v1/memories/{restricted['id']}", owner.token, key="x", query={"ceiling": "internal"})
    assert_error(response, 404, "not_found")
    assert api.get(f"/v1/memories/{restricted['id']}", owner.token, ceiling="restricted").json() == restricted


@pytest.mark.parametrize("query", [{}, {"ceiling": "secret"}, {"ceiling": "INTERNAL"}, {"ceiling": ""}])
def test_reads_require_a_known_ceiling(api, owner, internal, query):
    detail = api.request("GET", f"/v1/memories/{internal['id']}", owner.token, query=query)
    problem = "missing" if not query else "invalid_choice"
    assert assert_error(detail, 400, "validation_error") == [{"field": "ceiling", "problem": problem}]
    assert_error(api.request("GET", "/v1/memories", owner.token, query=query), 400, "validation_error")


def test_review_and_delete_require_a_ceiling(api, owner, internal):
    review = api.post(f"/v1/memories/{internal['id']}/review", owner.token, {"action": "dismiss"}, key="x")
    assert assert_error(review, 400, "validation_error") == [{"field": "ceiling", "problem": "missing"}]
    erase = api.delete(f"/v1/memories/{internal['id']}", owner.token, key="y")
    assert assert_error(erase, 400, "validation_error") == [{"field": "ceiling", "problem": "missing"}]
    assert owner.counts()["live_memories"] == 1


def test_other_owner_gets_not_found_for_a_foreign_memory_id(api, owner, other_owner, internal):
    path = f"/v1/memories/{internal['id']}"
    assert_error(api.get(path, other_owner.token, ceiling="restricted"), 404, "not_found")
    review = api.post(f"{path}/review", other_owner.token, {"action": "not_true"}, key="x", query={"ceiling": "restricted"})
    assert_error(review, 404, "not_found")
    assert_error(api.delete(path, other_owner.token, key="y", query={"ceiling": "restricted"}), 404, "not_found")
    assert api.get(path, owner.token, ceiling="internal").json() == internal


def test_other_owners_list_does_not_include_foreign_memories(api, owner, other_owner, internal):
    assert api.get("/v1/memories", other_owner.token, ceiling="restricted").json()["items"] == []


def test_memory_cannot_cite_a_foreign_event(api, owner, other_owner):
    foreign_event = other_owner.message()
    response = api.post("/v1/memories", owner.token, memory_body(foreign_event))
    assert assert_error(response, 404, "not_found") == [{"field": "sources.0.event", "problem": "unknown event"}]
    assert owner.counts()["memories"] == 0 and other_owner.counts()["memories"] == 0


def test_events_cannot_be_added_to_a_foreign_session(api, owner, other_owner):
    session = api.post("/v1/sessions", owner.token, {"scope": "user"}, key="s").json()
    response = api.post(f"/v1/sessions/{session['id']}/events", other_owner.token,
                        {"kind": "user.message.created", "speaker": "owner", "parts": ["Hi"]})
    assert_error(response, 404, "not_found")
    assert owner.counts()["events"] == 0 and other_owner.counts()["events"] == 0

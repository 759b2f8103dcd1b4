"""The conversation-snapshot routes over HTTP: POST /v1/sessions/{id}/turns, GET
/v1/sessions/{id}/snapshot and POST /v1/sessions/{id}/turns/{turn}/citations — status codes,
no-store, idempotency of citation reports, not_found for foreign IDs with nothing written, the
bound on citations, and the document."""
from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator

from memory import services
from memory.models import Memory
from recall.models import CitationReport, ContextSnapshot
from tests.api.conftest import assert_error
from tests.recall.helpers import Bank
from veetbot.rls import owner_context

TURN = {"current_message": "When is the passport renewal?", "ceiling": "internal"}


@pytest.fixture
def world(owner):
    bank = Bank(owner.principal)
    fee = bank.add("The passport renewal fee is 80 euros.", subject="passport renewal")
    session = services.session_create(principal=owner.principal).id
    return owner, session, fee


def _turns(session) -> str:
    return f"/v1/sessions/{session}/turns"


def _citations(session, turn=1) -> str:
    return f"/v1/sessions/{session}/turns/{turn}/citations"


def test_turns_freeze_the_prefix_and_answer_it_again_byte_for_byte(api, world):
    owner, session, fee = world
    assert_error(api.get(f"/v1/sessions/{session}/snapshot", owner.token), 404, "not_found")
    first = api.post(_turns(session), owner.token, TURN, key=None)
    assert first.status_code == 200 and first["Cache-Control"] == "private, no-store"
    body = first.json()
    assert body["turn"] == 1 and f"[m:{fee}]" in body["snapshot"]["prefix"] and body["items"] == []
    second = api.post(_turns(session), owner.token, TURN, key=None).json()
    assert second["turn"] == 2 and second["snapshot"]["prefix"] == body["snapshot"]["prefix"]
    read = api.get(f"/v1/sessions/{session}/snapshot", owner.token)
    assert read.status_code == 200 and read["Cache-Control"] == "private, no-store"
    assert read.json()["turns"] == 2 and read.json()["prefix_sha256"] == body["snapshot"]["prefix_sha256"]


def test_a_later_turn_with_other_filters_is_a_conflict_with_the_frozen_conversation(api, world):
    """Well formed (a fresh conversation takes it), refused only by this conversation's state."""
    owner, session, _fee = world
    api.post(_turns(session), owner.token, TURN, key=None)
    details = assert_error(api.post(_turns(session), owner.token, {**TURN, "ceiling": "public"}, key=None), 409,
                           "conflict")
    assert details == [{"field": "ceiling", "problem": "differs_from_snapshot"}]


def test_the_turn_limit_is_a_conflict(api, world, settings):
    owner, session, _fee = world
    settings.RECALL_SNAPSHOT_MAX_TURNS = 1
    api.post(_turns(session), owner.token, TURN, key=None)
    details = assert_error(api.post(_turns(session), owner.token, TURN, key=None), 409, "conflict")
    assert details == [{"field": "turn", "problem": "limit_reached"}]


def test_foreign_and_unknown_conversations_are_not_found(api, world, other_owner):
    owner, session, fee = world
    assert_error(api.post(_turns(session), other_owner.token, TURN, key=None), 404, "not_found")
    assert_error(api.get(f"/v1/sessions/{session}/snapshot", other_owner.token), 404, "not_found")
    assert_error(api.post(_turns("not-a-uuid"), owner.token, TURN, key=None), 404, "not_found")
    api.post(_turns(session), owner.token, TURN, key=None)
    assert_error(api.post(_citations(session), other_owner.token, {"citations": [str(fee)]}), 404, "not_found")
    for turn in ("2", "0", "x"):
        assert_error(api.post(_citations(session, turn), owner.token, {"citations": [str(fee)]}), 404, "not_found")


def test_a_citation_report_credits_once_and_replays_with_its_key(api, world):
    owner, session, fee = world
    with owner_context(owner.principal):
        Memory.objects.filter(id=fee).update(utility=0.5)
    api.post(_turns(session), owner.token, TURN, key=None)
    first = api.post(_citations(session), owner.token, {"citations": [str(fee)]}, key="cite")
    assert first.status_code == 200 and first["Cache-Control"] == "private, no-store"
    assert "Idempotency-Replayed" not in first
    assert [(c["outcome"], c["id"]) for c in first.json()["citations"]] == [("credited", str(fee))]
    again = api.post(_citations(session), owner.token, {"citations": [str(fee)]}, key="cite")
    assert again.status_code == 200 and again["Idempotency-Replayed"] == "true" and again.json() == first.json()
    with owner_context(owner.principal):
        assert Memory.objects.get(id=fee).utility == pytest.approx(0.6)
    details = assert_error(api.post(_citations(session), owner.token, {"citations": [str(fee)[:8]]}, key="cite"),
                           409, "conflict")
    assert details == [{"field": "Idempotency-Key", "problem": "reused_with_another_request"}]
    assert_error(api.post(_citations(session), owner.token, {"citations": [str(fee)]}, key=None), 400,
                 "validation_error")


def test_another_owners_ids_are_not_found_with_the_field_and_nothing_is_written(api, world, other_owner):
    owner, session, fee = world
    foreign = Bank(other_owner.principal).add("The passport renewal fee is 80 euros.", subject="passport renewal")
    api.post(_turns(session), owner.token, TURN, key=None)
    response = api.post(_citations(session), owner.token, {"citations": [str(fee), str(foreign)]}, key="mixed")
    assert assert_error(response, 404, "not_found") == [{"field": "citations.1", "problem": "not_found"}]
    with owner_context(owner.principal):
        assert not CitationReport.objects.exists() and Memory.objects.get(id=fee).last_used_at is None


def test_citations_per_report_are_bounded(api, world, settings):
    owner, session, fee = world
    api.post(_turns(session), owner.token, TURN, key=None)
    bound = settings.RECALL_CITATIONS_MAX_PER_REPORT
    at_bound = api.post(_citations(session), owner.token, {"citations": [str(fee)] * bound}, key="at")
    assert at_bound.status_code == 200 and len(at_bound.json()["citations"]) == bound
    past = api.post(_citations(session), owner.token, {"citations": [str(fee)] * (bound + 1)}, key="past")
    assert assert_error(past, 400, "validation_error") == [{"field": "citations", "problem": "too_long"}]


def test_erasing_the_conversation_takes_its_snapshot(api, world):
    owner, session, _fee = world
    api.post(_turns(session), owner.token, TURN, key=None)
    assert api.delete(f"/v1/sessions/{session}", owner.token, key="erase").status_code == 200
    with owner_context(owner.principal):
        assert not ContextSnapshot.objects.exists()
    assert_error(api.get(f"/v1/sessions/{session}/snapshot", owner.token), 404, "not_found")


def test_the_document_declares_the_routes_their_shapes_and_errors():
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    turns = paths["/v1/sessions/{session_id}/turns"]["post"]
    assert set(turns["responses"]) == {"200", "400", "401", "403", "404", "406", "409", "414"}
    assert "Idempotency-Key" not in {p["name"] for p in turns.get("parameters", [])}
    citations = paths["/v1/sessions/{session_id}/turns/{turn}/citations"]["post"]
    assert {"Idempotency-Key", "turn", "session_id"} <= {p["name"] for p in citations["parameters"]}
    assert set(citations["responses"]) == {"200", "400", "401", "403", "404", "406", "409", "414"}
    snapshot = paths["/v1/sessions/{session_id}/snapshot"]["get"]
    assert set(snapshot["responses"]) == {"200", "400", "401", "403", "404", "406", "414"}


def test_scopes_and_the_api_flag(api, world, settings):
    owner, session, fee = world
    read_only = owner.token_with(["memory.read"])
    assert_error(api.post(_turns(session), read_only, TURN, key=None), 403, "authorization_error")
    api.post(_turns(session), owner.token, TURN, key=None)
    assert api.get(f"/v1/sessions/{session}/snapshot", read_only).status_code == 200
    assert_error(api.post(_citations(session), read_only, {"citations": [str(fee)]}), 403, "authorization_error")
    settings.AGENT_MEMORY_API_ENABLED = False
    assert_error(api.post(_turns(session), owner.token, TURN, key=None), 404, "not_found")

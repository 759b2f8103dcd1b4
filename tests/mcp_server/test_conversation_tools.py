"""The conversation tools end to end: ``turn`` and ``cite`` through the official SDK client
over real HTTP, held to their REST routes (POST /v1/sessions/{id}/turns and
…/turns/{turn}/citations).

One conversation is one snapshot whichever surface takes which turn: the prefix bytes stay
identical from turn to turn, a change between turns comes back as a correction naming the
item by its citation, an erased item's words never come back. Citations credit exactly the
cited item — a summary's supports are not reinforced — and an ambiguous short ID credits
nothing; a report replays by its key across MCP and REST.
"""
from __future__ import annotations

import uuid
from datetime import timedelta
from types import SimpleNamespace
from uuid import UUID

import httpx
import pytest

from memory import services
from memory.domain import MemoryChanges
from memory.models import Memory
from recall.models import ContextSnapshot
from reconsolidation.models import DerivedMemory, ReconsolidationOperation
from tests.factories import T0
from tests.mcp_server.test_tools import envelope
from tests.recall.helpers import Bank
from tests.reconsolidation.recall_builders import summary
from veetbot.clock import utcnow
from veetbot.identity import SCOPE_READ, SCOPE_WRITE
from veetbot.rls import owner_context

QUESTION = "When is the passport renewal?"
TURN = {"current_message": QUESTION, "ceiling": "internal"}
# What a citation must never touch on a summary's supporting originals.
SUPPORT_FIELDS = ("utility", "last_used_at", "evidence_at", "expires_at", "content_revision", "store_position")


@pytest.fixture
def conversation(owner, settings):
    """An owner's bank — two passport facts, a committed summary of two embassy facts anchored
    on the appointment, an original whose ID shares the summary's first eight characters (that
    short ID is ambiguous) — and a new conversation, no turn taken yet."""
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    bank = Bank(owner.principal)
    anchor = bank.add("The passport renewal appointment is on Friday.", subject="passport renewal")
    fee = bank.add("The passport renewal fee is 80 euros.", subject="passport renewal")
    embassy = [bank.add("The embassy is closed on Mondays.", subject="embassy"),
               bank.add("The embassy asks for printed photos.", subject="embassy")]
    made = summary(owner.principal, [[embassy[0]], [embassy[1]]], omitted=[anchor], now=T0 + timedelta(days=1))
    lookalike = bank.add("The passport renewal form is blue.", subject="passport renewal",
                         id=UUID(str(made.id)[:9] + "0000-4000-8000-000000000001"))
    session = services.session_create(principal=owner.principal).id
    return SimpleNamespace(owner=owner, session=str(session), anchor=anchor, fee=fee, embassy=embassy,
                           summary=made.id, lookalike=lookalike)


def turn(mcp, world, token=None, **overrides):
    return mcp.call(token or world.owner.token, "turn", {"session_id": world.session, **TURN, **overrides})


def rest(live_server, token: str, path: str, body: dict, **headers) -> httpx.Response:
    return httpx.post(f"{live_server.url}{path}", json=body,
                      headers={"Authorization": f"Bearer {token}", **headers}, timeout=60)


def corrections(body: dict) -> dict[str, str]:
    return {c["id"]: c["reason"] for c in body["corrections"]}


def _support_usage(principal, ids) -> dict:
    with owner_context(principal):
        return {r["id"]: tuple(r[f] for f in SUPPORT_FIELDS)
                for r in Memory.objects.filter(id__in=ids).values("id", *SUPPORT_FIELDS)}


def _derived(principal, derived_id) -> tuple:
    with owner_context(principal):
        row = DerivedMemory.objects.get(id=derived_id)
        operation = ReconsolidationOperation.objects.get(id=row.operation_id)
        return row.utility, row.last_used_at, row.revision, operation.revision, row.evidence_at, row.expires_at


def test_the_tools_are_listed_with_the_routes_inputs(mcp, owner):
    async def work(client):
        return {tool.name: tool for tool in (await client.list_tools()).tools}

    tools = mcp.run(owner.token, work)
    assert set(tools["turn"].input_schema["required"]) == {"session_id", "current_message", "ceiling"}
    assert set(tools["cite"].input_schema["required"]) == {"session_id", "turn", "citations", "idempotency_key"}
    assert tools["turn"].input_schema["additionalProperties"] is False
    assert "idempotency_key" not in tools["turn"].input_schema["properties"]  # each call is the next turn
    assert tools["turn"].annotations.idempotent_hint is False and tools["cite"].annotations.idempotent_hint is True


def test_a_conversation_keeps_its_prefix_bytes_on_either_surface_and_corrects_what_changed(
        mcp, conversation, live_server):
    world, principal = conversation, conversation.owner.principal
    first = turn(mcp, world)
    assert not first.is_error
    body = first.structured_content
    prefix = body["snapshot"]["prefix"]
    assert body["turn"] == 1 and body["items"] == []
    assert all(f"[m:{item}]" in prefix for item in (world.fee, world.summary, world.anchor))
    # Turn two through the REST route: the same conversation, the same prefix bytes.
    second = rest(live_server, world.owner.token, f"/v1/sessions/{world.session}/turns", TURN)
    assert second.status_code == 200, second.text
    assert second.json()["turn"] == 2 and second.json()["snapshot"]["prefix"].encode() == prefix.encode()
    assert second.json()["corrections"] == []
    # Between turns: the owner corrects the fee the prefix holds.
    services.memory_revise(principal=principal, memory_id=world.fee,
                           changes=MemoryChanges(statement="The passport renewal fee is 95 euros."), now=utcnow())
    third = turn(mcp, world).structured_content
    assert third["turn"] == 3 and third["snapshot"]["prefix"].encode() == prefix.encode()
    assert corrections(third) == {str(world.fee): "corrected"}
    assert f"The owner corrected [m:{world.fee}]" in third["context"] and "95 euros" in third["context"]
    # Erasing what the prefix copied withholds the prefix: its words never return, the
    # citation still names what went.
    services.memory_erase(principal=principal, memory_id=world.fee, now=utcnow())
    fourth = turn(mcp, world).structured_content
    assert fourth["snapshot"]["prefix"] == "" and fourth["snapshot"]["prefix_withheld"] is True
    assert fourth["snapshot"]["prefix_sha256"] == body["snapshot"]["prefix_sha256"]  # of the prefix as frozen
    assert corrections(fourth)[str(world.fee)] == "erased"
    assert f"[m:{world.fee}] was erased" in fourth["context"]
    assert "euros" not in fourth["context"] and "euros" not in str(fourth["items"])
    with owner_context(principal):
        assert ContextSnapshot.objects.get(session_id=world.session).prefix == ""


def test_citations_credit_only_the_cited_summary_refuse_an_ambiguous_short_id_and_replay_by_key(
        mcp, conversation, live_server, settings):
    world, principal = conversation, conversation.owner.principal
    given = turn(mcp, world).structured_content["snapshot"]["items"]
    assert {str(world.summary), str(world.lookalike)} <= {item["id"] for item in given}
    supports = [world.anchor, *world.embassy, world.lookalike]
    before_supports, before = _support_usage(principal, supports), _derived(principal, world.summary)
    arguments = {"session_id": world.session, "turn": 1, "idempotency_key": "cite-1",
                 "citations": [str(world.summary).upper(), str(world.summary)[:8]]}
    first = mcp.call(world.owner.token, "cite", arguments)
    assert not first.is_error
    outcomes = [(c["outcome"], c["id"], c["record_kind"]) for c in first.structured_content["citations"]]
    assert outcomes == [("credited", str(world.summary), "summary"), ("ambiguous", None, None)]
    after = _derived(principal, world.summary)
    assert after[0] == pytest.approx(before[0] + settings.RECALL_CITATION_UTILITY_GAIN)
    assert after[2:] == before[2:]  # no new revision, operation revision, evidence time or expiry
    assert _support_usage(principal, supports) == before_supports  # its supports are not reinforced
    # The same key and citations replay — by MCP and by REST — and credit nothing again.
    again = mcp.call(world.owner.token, "cite", arguments)
    assert again.meta["idempotency_replayed"] is True and again.structured_content == first.structured_content
    body = {"citations": arguments["citations"]}
    replayed = rest(live_server, world.owner.token, f"/v1/sessions/{world.session}/turns/1/citations", body,
                    **{"Idempotency-Key": "cite-1"})
    assert replayed.status_code == 200 and replayed.headers["Idempotency-Replayed"] == "true"
    assert replayed.json() == first.structured_content
    assert _derived(principal, world.summary) == after
    # Another key: a repeat of an item already credited for the turn changes nothing.
    repeat = mcp.call(world.owner.token, "cite", {**arguments, "idempotency_key": "cite-2",
                                                  "citations": [str(world.summary)]})
    assert [c["outcome"] for c in repeat.structured_content["citations"]] == ["repeated"]
    assert _derived(principal, world.summary) == after


def test_scopes_are_the_routes(mcp, conversation):
    world = conversation
    reader, writer = world.owner.token_with(SCOPE_READ), world.owner.token_with(SCOPE_WRITE)
    for token in (reader, writer):  # a turn reads memory and records the snapshot: both scopes
        assert envelope(turn(mcp, world, token)) == {"code": "authorization_error", "details": []}
    with owner_context(world.owner.principal):
        assert not ContextSnapshot.objects.exists()
    assert not turn(mcp, world).is_error
    cite = {"session_id": world.session, "turn": 1, "citations": [str(world.fee)], "idempotency_key": "k"}
    assert envelope(mcp.call(reader, "cite", cite)) == {"code": "authorization_error", "details": []}
    assert not mcp.call(writer, "cite", cite).is_error  # reporting is a write only


def test_bad_arguments_refuse_as_the_routes_do_and_record_nothing(mcp, conversation, other_owner):
    world = conversation
    token = world.owner.token
    no_session = mcp.call(token, "turn", TURN)
    assert envelope(no_session) == {"code": "validation_error",
                                    "details": [{"field": "session_id", "problem": "missing"}]}
    for session in ("42", str(uuid.uuid4()), str(services.session_create(principal=other_owner.principal).id)):
        assert envelope(turn(mcp, world, session_id=session)) == {"code": "not_found", "details": []}
    assert envelope(turn(mcp, world, current_message="   ")) == {
        "code": "validation_error", "details": [{"field": "current_message", "problem": "blank"}]}
    assert envelope(turn(mcp, world, colour="blue")) == {
        "code": "validation_error", "details": [{"field": "colour", "problem": "extra_forbidden"}]}
    with owner_context(world.owner.principal):
        assert not ContextSnapshot.objects.exists()
    assert not turn(mcp, world).is_error
    assert envelope(turn(mcp, world, ceiling="public")) == {
        "code": "conflict", "details": [{"field": "ceiling", "problem": "differs_from_snapshot"}]}

    cite = {"session_id": world.session, "turn": 1, "citations": [str(world.fee)], "idempotency_key": "k"}
    cases = [
        ({**cite, "turn": "1"}, "validation_error", [{"field": "turn", "problem": "int_type"}]),
        ({**cite, "turn": True}, "validation_error", [{"field": "turn", "problem": "int_type"}]),
        ({**cite, "turn": 0}, "not_found", []),
        ({**cite, "turn": 9}, "not_found", []),  # no such turn yet
        ({k: v for k, v in cite.items() if k != "idempotency_key"}, "validation_error",
         [{"field": "idempotency_key", "problem": "missing"}]),
        ({**cite, "citations": []}, "validation_error", [{"field": "citations", "problem": "too_short"}]),
        ({**cite, "citations": [str(uuid.uuid4())]}, "not_found", [{"field": "citations.0", "problem": "not_found"}]),
    ]
    for arguments, code, details in cases:
        assert envelope(mcp.call(token, "cite", arguments)) == {"code": code, "details": details}, arguments
    with owner_context(world.owner.principal):
        assert Memory.objects.get(id=world.fee).last_used_at is None
    assert world.owner.counts()["receipts"] == 0

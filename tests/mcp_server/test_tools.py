"""The MCP route end to end: the official SDK client over real HTTP against the live app.

Each tool is its REST route by another wire, so these tests hold it to the route: the
same rows, the same scopes, the same envelope on refusal, the same idempotency receipts.
"""
from __future__ import annotations

import json
import logging
import threading
import uuid

import httpx
import pytest
from drf_spectacular.generators import SchemaGenerator
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import LATEST_MODERN_VERSION

from reconsolidation.store import ReconsolidationStore
from tests.api.recon_builders import committed_merge
from tests.factories import make_memory
from veetbot.identity import SCOPE_READ, SCOPE_WRITE

TOOLS = {"context", "search", "remember", "forget", "journal", "turn", "cite"}
STATEMENT = "The owner prefers Celsius for weather."


def envelope(result) -> dict:
    """A refused call: a tool error carrying the route's envelope, as structure and as text."""
    assert result.is_error
    assert json.loads(result.content[0].text) == result.structured_content
    assert set(result.structured_content) == {"error"}
    return result.structured_content["error"]


def raised(exc: BaseException, kind: type):
    """The ``kind`` exception in ``exc``, looking inside the task groups' exception groups."""
    if isinstance(exc, kind):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        if (found := raised(inner, kind)) is not None:
            return found
    return None


def remember_args(event, key="remember-1", **overrides) -> dict:
    arguments = {"subject": "weather units", "statement": STATEMENT, "belief_type": "preference",
                 "sources": [{"event": str(event.id), "part": str(event.parts[0].id)}], "idempotency_key": key}
    arguments.update(overrides)
    return arguments


# --- the exchange ---------------------------------------------------------------------------

def test_the_sdk_client_negotiates_the_sessionless_revision_and_lists_the_tools(mcp, owner):
    async def work(client):
        return client.protocol_version, await client.list_tools()

    version, listed = mcp.run(owner.token, work)
    assert version == LATEST_MODERN_VERSION
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == TOOLS
    # The routes' own inputs: closed objects; the writes add the route's Idempotency-Key.
    assert tools["search"].input_schema["additionalProperties"] is False
    assert {"query", "ceiling"} <= set(tools["search"].input_schema["required"])
    assert {"subject", "statement", "belief_type", "sources", "idempotency_key"} <= set(
        tools["remember"].input_schema["required"])
    assert set(tools["forget"].input_schema["required"]) == {"memory_id", "ceiling", "idempotency_key"}
    assert tools["forget"].annotations.destructive_hint is True


def test_a_client_of_an_earlier_revision_connects_through_the_initialize_handshake(mcp, owner):
    memory = make_memory(owner.principal)

    async def work(session):
        listed = await session.list_tools()
        return listed, await session.call_tool("search", {"query": "Celsius weather", "ceiling": "internal"})

    listed, found = mcp.run(owner.token, work, legacy=True)
    assert {tool.name for tool in listed.tools} == TOOLS
    assert [item["id"] for item in found.structured_content["items"]] == [str(memory.id)]


def test_every_response_is_private_and_never_stored(mcp, owner):
    responses = []

    async def work(client):
        await client.list_tools()
        await client.call_tool("search", {"query": "Celsius", "ceiling": "internal"})
        await client.call_tool("search", {"query": " ", "ceiling": "internal"})  # a refusal too

    mcp.run(owner.token, work, responses=responses)
    assert len(responses) >= 4  # discover, list, two calls
    assert [r.headers.get("cache-control") for r in responses] == ["private, no-store"] * len(responses)
    assert {r.headers["content-type"] for r in responses} == {"application/json"}
    # Methods other than POST (no server-sent stream is offered) answer 405, also no-store.
    got = httpx.get(mcp.url, headers={"Authorization": f"Bearer {owner.token}"})
    assert (got.status_code, got.headers["cache-control"]) == (405, "private, no-store")


# --- the memory operations ----------------------------------------------------------------------

def test_context_assembles_the_turn_exactly_as_the_rest_route_does(mcp, owner, live_server):
    memory = make_memory(owner.principal)
    turn = {"current_message": "Which units do I like for the weather?", "ceiling": "internal"}
    result = mcp.call(owner.token, "context", turn)
    assert not result.is_error
    rest = httpx.post(f"{live_server.url}/v1/memories/context", json=turn,
                      headers={"Authorization": f"Bearer {owner.token}"}).json()
    assert [item["id"] for item in result.structured_content["items"]] == [str(memory.id)]
    assert result.structured_content["context"] == rest["context"]
    assert result.structured_content["items"] == rest["items"]
    assert f"[m:{memory.id}]" in result.structured_content["context"]


def test_search_recalls_the_owners_memory_and_never_another_owners(mcp, owner, other_owner):
    mine = make_memory(owner.principal)
    make_memory(other_owner.principal)
    result = mcp.call(owner.token, "search", {"query": "Celsius weather", "ceiling": "internal"})
    assert not result.is_error
    assert [item["id"] for item in result.structured_content["items"]] == [str(mine.id)]
    assert result.structured_content["trace_id"]


def test_remember_writes_once_per_key_and_replays_across_surfaces(mcp, owner, live_server):
    event = owner.message()
    first = mcp.call(owner.token, "remember", remember_args(event))
    again = mcp.call(owner.token, "remember", remember_args(event))
    assert not first.is_error and not again.is_error
    assert first.structured_content["statement"] == STATEMENT
    assert first.structured_content["authority"] == "USER"
    assert again.structured_content["id"] == first.structured_content["id"]
    assert first.meta is None or "idempotency_replayed" not in first.meta
    assert again.meta["idempotency_replayed"] is True
    assert owner.counts() == {"memories": 1, "live_memories": 1, "receipts": 1}
    # One receipt namespace: the REST route with that key and body replays the same write.
    body = remember_args(event)
    key = body.pop("idempotency_key")
    rest = httpx.post(f"{live_server.url}/v1/memories", json=body,
                      headers={"Authorization": f"Bearer {owner.token}", "Idempotency-Key": key})
    assert rest.status_code == 201 and rest.headers["Idempotency-Replayed"] == "true"
    assert rest.json()["id"] == first.structured_content["id"]


def test_remember_with_a_used_key_and_other_arguments_is_a_conflict_and_writes_nothing(mcp, owner):
    event = owner.message()
    mcp.call(owner.token, "remember", remember_args(event))
    refused = mcp.call(owner.token, "remember", remember_args(event, statement="The owner prefers Fahrenheit."))
    assert envelope(refused) == {"code": "conflict",
                                 "details": [{"field": "idempotency_key", "problem": "reused_with_another_request"}]}
    assert owner.counts() == {"memories": 1, "live_memories": 1, "receipts": 1}


def test_forget_erases_the_memory_once_per_key(mcp, owner):
    memory = make_memory(owner.principal)
    arguments = {"memory_id": str(memory.id), "ceiling": "internal", "idempotency_key": "forget-1"}
    first = mcp.call(owner.token, "forget", arguments)
    again = mcp.call(owner.token, "forget", arguments)
    assert first.structured_content == {"memory_id": str(memory.id), "erased": True}
    assert again.meta["idempotency_replayed"] is True
    assert owner.counts()["live_memories"] == 0
    gone = mcp.call(owner.token, "search", {"query": "Celsius weather", "ceiling": "internal"})
    assert gone.structured_content["items"] == []
    # Another key on an erased memory: it names nothing now.
    assert envelope(mcp.call(owner.token, "forget", {**arguments, "idempotency_key": "forget-2"}))["code"] == (
        "not_found")


def test_forget_above_the_ceiling_is_not_found_and_erases_nothing(mcp, owner):
    memory = make_memory(owner.principal, sensitivity="sensitive")
    refused = mcp.call(owner.token, "forget",
                       {"memory_id": str(memory.id), "ceiling": "internal", "idempotency_key": "k"})
    assert envelope(refused) == {"code": "not_found", "details": []}
    assert owner.counts() == {"memories": 1, "live_memories": 1, "receipts": 0}


def test_journal_pages_the_operation_history_like_the_rest_route(mcp, owner, settings, live_server):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    merge = committed_merge(ReconsolidationStore(), owner.principal)
    result = mcp.call(owner.token, "journal", {"ceiling": "internal", "limit": 10})
    assert not result.is_error
    rest = httpx.get(f"{live_server.url}/v1/memory-reconsolidations", params={"ceiling": "internal", "limit": 10},
                     headers={"Authorization": f"Bearer {owner.token}"}).json()
    assert result.structured_content == rest
    assert [item["id"] for item in rest["items"]] == [str(merge.id)]


def test_the_journal_follows_the_operation_routes_flag_and_their_detail_free_errors(mcp, owner, settings):
    bad = mcp.call(owner.token, "journal", {"ceiling": "internal", "limit": 0})
    assert envelope(bad) == {"code": "validation_error", "details": []}
    settings.AGENT_MEMORY_RECONSOLIDATION_API_ENABLED = False
    assert envelope(mcp.call(owner.token, "journal", {"ceiling": "internal"})) == {"code": "not_found",
                                                                                   "details": []}


# --- authentication and scopes ------------------------------------------------------------------

@pytest.mark.parametrize("token", [None, "vbt_not-a-real-token"])
def test_a_missing_or_unknown_token_is_refused_before_any_mcp_exchange(mcp, owner, token):
    with pytest.raises(BaseException) as refused:
        mcp.run(token, lambda client: client.list_tools())
    assert raised(refused.value, MCPError)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    raw = httpx.post(mcp.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     headers={**headers, "Accept": "application/json, text/event-stream"})
    assert raw.status_code == 401
    assert raw.json() == {"error": {"code": "authorization_error", "details": []}}
    assert raw.headers["cache-control"] == "private, no-store"
    assert raw.headers["www-authenticate"] == 'Bearer realm="veetbot"'


def test_a_read_only_token_reads_but_may_not_remember_or_forget(mcp, owner):
    memory = make_memory(owner.principal)
    reader = owner.token_with(SCOPE_READ)
    assert not mcp.call(reader, "search", {"query": "Celsius", "ceiling": "internal"}).is_error
    refused = mcp.call(reader, "remember", remember_args(owner.message()))
    assert envelope(refused) == {"code": "authorization_error", "details": []}
    refused = mcp.call(reader, "forget", {"memory_id": str(memory.id), "ceiling": "internal", "idempotency_key": "k"})
    assert envelope(refused) == {"code": "authorization_error", "details": []}
    assert owner.counts() == {"memories": 1, "live_memories": 1, "receipts": 0}


def test_a_write_only_token_writes_but_may_not_read(mcp, owner):
    writer = owner.token_with(SCOPE_WRITE)
    for tool, arguments in (("search", {"query": "Celsius", "ceiling": "internal"}),
                            ("context", {"current_message": "Celsius?", "ceiling": "internal"}),
                            ("journal", {"ceiling": "internal"})):
        assert envelope(mcp.call(writer, tool, arguments))["code"] == "authorization_error", tool
    assert not mcp.call(writer, "remember", remember_args(owner.message())).is_error


# --- validation -----------------------------------------------------------------------------------

def test_bad_arguments_are_the_routes_validation_errors_and_write_nothing(mcp, owner):
    event = owner.message()
    cases = [
        (remember_args(event, colour="blue"), [{"field": "colour", "problem": "extra_forbidden"}]),
        (remember_args(event, sources=[]), [{"field": "sources", "problem": "too_short"}]),
        (remember_args(event, confidence="high"), [{"field": "confidence", "problem": "float_type"}]),
        (remember_args(event, key="   "), [{"field": "idempotency_key", "problem": "blank"}]),
        ({k: v for k, v in remember_args(event).items() if k != "idempotency_key"},
         [{"field": "idempotency_key", "problem": "missing"}]),
    ]
    for arguments, details in cases:
        assert envelope(mcp.call(owner.token, "remember", arguments)) == {"code": "validation_error",
                                                                          "details": details}
    # A well-formed citation of nothing of the owner's is not_found, naming the field.
    cited = envelope(mcp.call(owner.token, "remember", remember_args(
        event, sources=[{"event": str(uuid.uuid4()), "part": str(uuid.uuid4())}])))
    assert cited["code"] == "not_found" and cited["details"][0]["field"].startswith("sources")
    assert owner.counts() == {"memories": 0, "live_memories": 0, "receipts": 0}


def test_bad_read_and_forget_arguments_refuse_as_their_routes_do(mcp, owner):
    blank = mcp.call(owner.token, "search", {"query": "   ", "ceiling": "internal"})
    assert envelope(blank) == {"code": "validation_error", "details": [{"field": "query", "problem": "blank"}]}
    no_ceiling = mcp.call(owner.token, "context", {"current_message": "hello"})
    assert envelope(no_ceiling) == {"code": "validation_error", "details": [{"field": "ceiling", "problem": "missing"}]}
    not_an_id = mcp.call(owner.token, "forget", {"memory_id": "42", "ceiling": "internal", "idempotency_key": "k"})
    assert envelope(not_an_id) == {"code": "not_found", "details": []}
    bad_ceiling = mcp.call(owner.token, "forget", {"memory_id": str(uuid.uuid4()), "ceiling": "secret",
                                                   "idempotency_key": "k"})
    assert envelope(bad_ceiling) == {"code": "validation_error",
                                     "details": [{"field": "ceiling", "problem": "invalid_choice"}]}


def test_an_unknown_tool_is_an_invalid_params_error(mcp, owner):
    with pytest.raises(BaseException) as refused:
        mcp.call(owner.token, "recall_everything", {})
    error = raised(refused.value, MCPError)
    assert error.error.code == INVALID_PARAMS and "recall_everything" not in error.error.message


# --- surface flags and the body -------------------------------------------------------------------

def test_the_route_is_not_found_unless_both_flags_are_on(mcp, owner, settings):
    settings.AGENT_MEMORY_MCP_ENABLED = False
    raw = httpx.post(mcp.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     headers={"Authorization": f"Bearer {owner.token}"})
    assert (raw.status_code, raw.json()["error"]["code"]) == (404, "not_found")
    assert raw.headers["cache-control"] == "private, no-store"


def test_a_body_with_duplicate_keys_is_refused_as_on_rest(mcp, owner):
    raw = httpx.post(mcp.url, content=b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "tools/list"}',
                     headers={"Authorization": f"Bearer {owner.token}", "Content-Type": "application/json",
                              "Accept": "application/json, text/event-stream"})
    assert raw.status_code == 400
    assert raw.json() == {"error": {"code": "validation_error", "details": [{"field": "id", "problem": "duplicate_key"}]}}


# --- content-free logs -------------------------------------------------------------------------------

def test_no_log_line_carries_a_token_or_memory_text(mcp, owner, caplog):
    secret = "The owner's locker code is 4417-SECRET."
    caplog.set_level(logging.DEBUG)
    event = owner.message(secret)
    mcp.call(owner.token, "remember", remember_args(event, statement=secret))
    mcp.call(owner.token, "remember", remember_args(event, statement=secret, colour=secret))
    mcp.call(owner.token, "search", {"query": secret, "ceiling": "internal"})
    mcp.call(owner.token, "search", {"query": secret, "ceiling": secret})
    # The server's records: those of the live server's threads (the client runs in this one,
    # and the SDK *client* logs every message it sends at debug, which is its caller's affair).
    served = [r for r in caplog.records if r.threadName != threading.current_thread().name]
    assert {r.name.split(".")[0] for r in served} >= {"mcp"}  # the SDK's server side did log
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in served)
    # The code's words, not its digits alone: "4417" may be four hex digits of a logged ID.
    assert "code is 4417" not in logged and owner.token not in logged


def test_the_route_stays_out_of_the_openapi_document():
    """JSON-RPC over one URL has no REST shape to fuzz; tools/list publishes the inputs."""
    document = SchemaGenerator().get_schema(request=None, public=True)
    assert "/v1/mcp" not in document["paths"]
    assert "/v1/memories/context" in document["paths"]

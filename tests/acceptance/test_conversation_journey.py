"""An owner's conversation of several turns against the running product, every feature on
(gate 18, frozen sessions see correct invalidation): turns alternate between the REST route
and a real MCP client session (the official SDK's client at gunicorn's /v1/mcp) while beat
keeps dreaming on the Celery workers and the owner reviews in the browser.

Import a bank -> beat backfills vectors and dreams (a merge of the two Celsius copies is
proposed) -> the owner approves the merge in the dashboard -> turn 1 (REST) freezes a prefix
holding the merged item once and an original whose ID shares its first eight characters ->
one MCP client session reports what the answer to turn 1 cited — the merged item and the
ambiguous short ID: only the merged item is credited, never the merged twin, nothing for the
short ID — and takes turn 2: the same prefix bytes, the river run delivered -> the owner
undoes the merge in the browser -> turn 3 (MCP) reports the undo by the merged item's
citation, the twin back as a memory of its own -> the river run is forgotten (MCP) -> turn 4
(REST) keeps the prefix and names it erased, its words gone -> the look-alike in the prefix
is erased (REST) -> turn 5 (MCP) withholds the prefix, its words gone for good.

The derived item cited is the merge set's rendering. An approved summary of this bank never
reaches a turn: recall offers a summary only in slots the originals leave and only when none
of its clauses repeats a rendered original, and in hybrid recall the clause originals are
always found first (the expansion arm brings a seed's siblings). Summary citations through
both surfaces are held to the same rule in tests/mcp_server/test_conversation_tools.py.

Every wait is a bounded look at observable state (vectors, proposals, settled dreaming);
what the turns hold is fixed by the bank and the owner's actions, never by how far the
workers got: in reviewed mode dreaming only proposes, and nothing proposed is recalled.
"""
from __future__ import annotations

import re

import pytest

from tests.acceptance import stack
from tests.acceptance.bank import AcceptanceBank
from tests.acceptance.dashboard import approve, browser_page, undo
from tests.acceptance.waiting import eventually
from tests.mcp_server.client import Mcp
from tests.review_ui.browser import sign_in

pytestmark = pytest.mark.acceptance

MARKER = "juniper-kestrel-5521"
LOOKALIKE = "The owner checks the weather forecast every morning on the balcony."
WEATHER = "Which temperature units do I prefer, and when do I check the weather forecast?"
RIVER = "Where do I run along the river?"
USAGE = ("utility", "last_used_at")  # what a credited citation changes, and only on the cited item
EVIDENCE = ("evidence_at", "valid_from", "expires_at", "content_revision")  # what it never changes


class ConversationBank(AcceptanceBank):
    """The acceptance bank plus one original whose ID shares the first eight characters of
    the Celsius copy a merge keeps as its canonical (the older copy), so that a short
    citation of the merged item is ambiguous. Its own message and conversation, the tea
    belief's shape otherwise."""

    def document(self) -> dict:
        document = super().document()
        canonical = self.ids["celsius"][0]
        memory_id = canonical[:8] + self._id("memory/lookalike")[8:]
        session, event, part = (self._id(f"{kind}/lookalike") for kind in ("session", "event", "part"))
        tea = self.ids["tea"][0]
        template = next(m for m in document["memories"] if m["id"] == tea)
        template_event = next(e for e in document["events"] if e["id"] == template["sources"][0]["event"])
        document["sessions"].append({**document["sessions"][0], "id": session})
        document["events"].append({**template_event, "id": event, "session": session,
                                   "parts": [{"id": part, "text": "I check the forecast every morning."}]})
        document["memories"].append({**template, "id": memory_id, "subject": "weather forecast",
                                     "statement": LOOKALIKE, "sources": [{"event": event, "part": part}]})
        self.ids["lookalike"] = [memory_id]
        return document


def items(body: dict) -> set[str]:
    return {item["id"] for item in body["items"]}


def corrections(body: dict) -> dict[str, str]:
    return {c["id"]: c["reason"] for c in body["corrections"]}


def test_a_conversation_keeps_its_prefix_while_the_owner_reviews_undoes_cites_and_erases(product, tmp_path):
    api = product.api()
    mcp = Mcp(url=f"{product.base_url}/v1/mcp")
    owner = product.new_owner("Conversation owner")
    token = owner["token"]
    bank = ConversationBank(seed="conversation-journey", marker=MARKER)
    stack.manage_json(product.env, "import_memory_bank", str(bank.write(tmp_path / "bank.json")),
                      "--owner", f"{owner['tenant_id']}/{owner['principal_id']}")
    (canonical, twin), (lookalike,), (river,) = bank.ids["celsius"], bank.ids["lookalike"], bank.ids["run_river"]
    assert canonical[:8] == lookalike[:8] and twin[:8] != canonical[:8]

    # Beat: vectors for every original (hybrid recall), then dreaming proposes the merge.
    eventually(lambda: product.vectors_backfilled(owner["principal_id"], bank.memory_count), timeout=180,
               what="beat backfilled a vector for every original")
    merge = eventually(lambda: next((op for op in api.journal(token, state="proposed")
                                     if op["kind"] == "merge_equivalent"), None),
                       timeout=120, what="dreaming proposed the merge of the Celsius copies")
    eventually(lambda: product.dreaming_settled(owner["principal_id"]), timeout=120, what="dreaming settled")

    with browser_page(product.base_url) as page:
        sign_in(page, token)
        approve(page, merge["id"])

    session = api.post("/v1/sessions", token, {"scope": "user"})
    assert session.status_code == 201, session.text
    session_id = session.json()["id"]
    turns_path = f"/v1/sessions/{session_id}/turns"

    def rest_turn(message: str) -> dict:
        response = api.post(turns_path, token, {"current_message": message, "ceiling": "restricted"}, key=False)
        assert response.status_code == 200, response.text
        return response.json()

    def mcp_call(tool: str, arguments: dict) -> dict:
        result = mcp.call(token, tool, arguments)
        assert not result.is_error, result.structured_content
        return result.structured_content

    def mcp_turn(message: str) -> dict:
        return mcp_call("turn", {"session_id": session_id, "current_message": message, "ceiling": "restricted"})

    def memory(memory_id: str) -> dict:
        response = api.get(f"/v1/memories/{memory_id}", token, ceiling="restricted")
        assert response.status_code == 200, response.text
        return response.json()

    # Turn 1 (REST) freezes the prefix: the merged pair once, by its canonical, and the look-alike.
    first = rest_turn(WEATHER)
    prefix = first["snapshot"]["prefix"]
    frozen = {item["id"]: item for item in first["snapshot"]["items"]}
    assert first["turn"] == 1 and {canonical, lookalike} <= set(frozen) and twin not in frozen
    assert frozen[canonical]["operation_id"] == merge["id"] and f"[m:{canonical}]" in prefix
    assert river not in frozen and MARKER not in prefix

    # One MCP client session: the answer to turn 1 is reported — it cited the merged item and
    # the look-alike's short ID, which is ambiguous — and turn 2 is taken.
    watched = (canonical, twin, lookalike)
    before = {i: memory(i) for i in watched}

    async def cite_then_turn(client):
        cited = await client.call_tool("cite", {"session_id": session_id, "turn": 1, "citations": [
            canonical, lookalike[:8]], "idempotency_key": "conversation-cite-1"})
        return cited, await client.call_tool("turn", {"session_id": session_id, "current_message": RIVER,
                                                      "ceiling": "restricted"})

    cited, turned = mcp.run(token, cite_then_turn)
    assert not cited.is_error and not turned.is_error, (cited.structured_content, turned.structured_content)
    report, second = cited.structured_content, turned.structured_content
    # Turn 2: the same prefix bytes; this turn's own finds are new items.
    assert second["turn"] == 2 and second["snapshot"]["prefix"].encode() == prefix.encode()
    assert river in items(second) and second["corrections"] == []
    # Only the merged item is credited: never its merged twin, never its evidence; the short ID nothing.
    assert [(c["outcome"], c["id"]) for c in report["citations"]] == [("credited", canonical), ("ambiguous", None)]
    after = {i: memory(i) for i in watched}
    # Imported memories start at full utility (bounded at 1.0): the credit shows as their last use.
    assert before[canonical]["last_used_at"] is None and after[canonical]["last_used_at"] is not None
    assert after[canonical]["utility"] == before[canonical]["utility"] == 1.0
    assert {f: after[canonical][f] for f in EVIDENCE} == {f: before[canonical][f] for f in EVIDENCE}
    for other in (twin, lookalike):
        assert {f: after[other][f] for f in (*USAGE, *EVIDENCE)} == {f: before[other][f] for f in (*USAGE, *EVIDENCE)}

    # The owner undoes the merge in the browser.
    with browser_page(product.base_url) as page:
        sign_in(page, token)
        undo(page, merge["id"], affected=2)

    # Turn 3 (MCP), the turn after the undo: the prefix unchanged, the undo reported by the
    # merged item's citation, the twin a memory of its own again.
    third = mcp_turn(WEATHER)
    assert third["turn"] == 3 and third["snapshot"]["prefix"].encode() == prefix.encode()
    assert corrections(third) == {canonical: "undone"}
    assert re.search(rf"undid the grouping of \[m:{canonical}\]", third["context"])
    assert twin in items(third)

    # The owner forgets the river run turn 2 delivered (MCP); turn 4 (REST) names it erased
    # and never repeats it, and the prefix, which did not copy it, stays.
    assert mcp_call("forget", {"memory_id": river, "ceiling": "restricted",
                               "idempotency_key": "conversation-forget-river"}) == {"memory_id": river, "erased": True}
    fourth = rest_turn(RIVER)
    assert fourth["snapshot"]["prefix"].encode() == prefix.encode() and not fourth["snapshot"]["prefix_withheld"]
    assert corrections(fourth)[river] == "erased" and river not in items(fourth)
    assert f"[m:{river}] was erased" in fourth["context"]

    # Erasing what the prefix copied (REST) withholds the prefix: turn 5 (MCP) and the
    # snapshot carry none of its words, and the citation still says what went.
    erased = api.delete(f"/v1/memories/{lookalike}", token, params={"ceiling": "restricted"})
    assert erased.status_code == 204, erased.text
    fifth = mcp_turn(WEATHER)
    assert fifth["snapshot"]["prefix"] == "" and fifth["snapshot"]["prefix_withheld"] is True
    assert fifth["snapshot"]["prefix_sha256"] == first["snapshot"]["prefix_sha256"]  # of the prefix as frozen
    assert corrections(fifth)[lookalike] == "erased" and lookalike not in items(fifth)
    snapshot = api.get(f"/v1/sessions/{session_id}/snapshot", token)
    assert snapshot.status_code == 200 and snapshot.json()["prefix"] == ""
    later = (fourth, fifth, snapshot.json())
    assert all(MARKER not in str(body) for body in later)
    assert all("balcony" not in str(body) for body in (fifth, snapshot.json()))
    assert MARKER not in product.logs() and "balcony" not in product.logs()

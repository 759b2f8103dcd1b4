"""An owner's whole journey through the running product, every feature on.

Import a bank (operator command) -> Celery beat backfills vectors and runs dreaming on
the workers -> the dashboard (headless Chromium) lists the proposals -> approve a merge
and a summary in the browser -> search answers hybrid, one rendering per merge set, the
summary only in slots the originals left -> automatic context for a turn assembles the
same evidence -> ask the dashboard the same question -> pause and resume dreaming from the
status panel -> undo the merge in the browser -> search renders both
copies again -> erase a summarised belief through the API -> its words are gone from
search, context assembly, the journal and the derived detail, and a full data dump of the database holds
them only in the owner's own message.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.acceptance import stack
from tests.acceptance.bank import AcceptanceBank
from tests.acceptance.dashboard import approve, browser_page, undo
from tests.acceptance.waiting import dump_tables_containing, eventually
from tests.review_ui.browser import sign_in

pytestmark = pytest.mark.acceptance

MARKER = "saffron-heron-4417"
MESSAGE_PARTS_TABLE = "memory_eventpart"


def beliefs(result: dict) -> list[dict]:
    return [item for item in result["items"] if item["record_kind"] == "belief"]


@pytest.fixture
def page(product):
    with browser_page(product.base_url) as page:
        yield page


def test_an_owner_imports_reviews_searches_undoes_and_erases_with_every_feature_on(product, page, tmp_path):
    api = product.api()
    owner = product.new_owner("Journey owner")
    token = owner["token"]
    bank = AcceptanceBank(seed="owner-journey", marker=MARKER)
    path = bank.write(tmp_path / "bank.json")
    imported = stack.manage_json(product.env, "import_memory_bank", str(path),
                                 "--owner", f"{owner['tenant_id']}/{owner['principal_id']}")
    assert imported["memories"] == bank.memory_count

    # Beat: vectors for every original, then the day's dreaming pass, on the workers.
    eventually(lambda: product.vectors_backfilled(owner["principal_id"], bank.memory_count), timeout=180,
               what="beat backfilled a vector for every original")

    def proposals() -> dict:
        found = {op["kind"]: op for op in api.journal(token, state="proposed")}
        return found if {"merge_equivalent", "summarize_related"} <= set(found) else {}

    proposed = eventually(proposals, timeout=120, what="beat's dreaming pass proposed a merge and a summary")
    merge, summary = proposed["merge_equivalent"], proposed["summarize_related"]

    # Reviewed mode: nothing proposed is used before the owner approves it.
    before = api.search(token, "Which temperature units do I prefer for weather?")
    assert before["channel"] == "hybrid" and before["fallback_reason"] == ""
    assert set(bank.ids["celsius"]) <= {item["id"] for item in beliefs(before)}

    # The dashboard lists them; the owner approves both in the browser.
    sign_in(page, token)
    for operation in (merge, summary):
        expect(page.locator(f'li.card[data-operation="{operation["id"]}"]')).to_be_visible()
    for operation in (merge, summary):
        approve(page, operation["id"])

    # One rendering per merge set, hybrid, with citations.
    after = api.search(token, "Which temperature units do I prefer for weather?")
    assert after["channel"] == "hybrid" and after["fallback_reason"] == ""
    rendered_copies = [item for item in beliefs(after) if item["id"] in bank.ids["celsius"]]
    assert len(rendered_copies) == 1 and rendered_copies[0]["operation_id"] == merge["id"]
    assert f"[m:{rendered_copies[0]['id']}]" in after["rendered"]

    # Automatic context for a turn assembles the same evidence through the same read path.
    turn = api.post("/v1/memories/context", token, {
        "current_message": "Which temperature units do I prefer for weather?", "ceiling": "restricted",
        "working_state": [{"text": "plan the weekend hike", "completed": True}]})
    assert turn.status_code == 200, turn.text
    assembled = turn.json()
    assert {s["channel"] for s in assembled["trace"]["searches"]} == {"hybrid"}
    in_context = [item for item in assembled["items"] if item["id"] in bank.ids["celsius"]]
    assert len(in_context) == 1 and f"[m:{in_context[0]['id']}]" in assembled["context"]
    # A turn that names someone by role: round two searches the reference on its own.
    turn = api.post("/v1/memories/context", token, {"current_message": "Where does my sister live these days?",
                                                     "ceiling": "restricted"})
    assert turn.status_code == 200, turn.text
    searches = turn.json()["trace"]["searches"]
    assert [s["purpose"] for s in searches][:2] == ["message", "reference"] and {s["round"] for s in searches} == {1, 2}
    assert bank.ids["sister"][0] in {item["id"] for item in turn.json()["items"]}

    # Ask your memory in the browser: the same recall, the merged pair marked as such.
    page.click('nav a:has-text("Ask your memory")')
    page.fill("#ask-query", "Which temperature units do I prefer for weather?")
    page.click("#ask-submit")
    expect(page.locator("#answer-channel")).to_contain_text("keywords and meaning together")
    expect(page.locator(f'li.answer[data-citation="{rendered_copies[0]["id"]}"]')).to_contain_text(
        "standing for merged duplicates")

    # Pause dreaming from the status panel, see it said in words, resume.
    page.goto("/review/")
    page.click("#pause-toggle")
    expect(page.locator("#status-processing")).to_contain_text("You paused dreaming")
    page.click("#pause-toggle")
    expect(page.locator("#status-processing")).to_have_text("Dreaming is on.")

    # The approved summary only in the slots the originals left: never before an original,
    # never repeating one already rendered (here every original fits, so it stays out).
    committed = api.get(f"/v1/memory-reconsolidations/{summary['id']}", token, ceiling="restricted").json()
    assert committed["state"] == "committed" and committed["content"]["derived_id"]
    derived_id = committed["content"]["derived_id"]
    running = api.search(token, "When and where do I go running?")
    kinds = [item["record_kind"] for item in running["items"]]
    rendered = {item["id"] for item in beliefs(running)}
    assert set(bank.ids["run_tuesday"] + bank.ids["run_river"]) <= rendered
    for position, item in enumerate(running["items"]):
        if item["record_kind"] == "summary":
            assert "belief" not in kinds[position:]
            assert not rendered & {i for clause in item["clauses"] for i in clause["source_ids"]}
    assert derived_id not in {item["id"] for item in running["items"]}

    # Undo the merge in the browser: both copies render again.
    undo(page, merge["id"], affected=2)
    undone = api.search(token, "Which temperature units do I prefer for weather?")
    assert set(bank.ids["celsius"]) <= {item["id"] for item in beliefs(undone)}

    # Erase the summarised belief that carries the marker.
    (erased_id,) = bank.ids["run_river"]
    response = api.delete(f"/v1/memories/{erased_id}", token, params={"ceiling": "restricted"})
    assert response.status_code == 204, response.text
    assert api.get(f"/v1/memories/{erased_id}", token, ceiling="restricted").status_code == 404
    for query in ("Where do I run along the river?", MARKER, "When and where do I go running?"):
        result = api.search(token, query)
        assert MARKER not in result["rendered"] and MARKER not in str(result["items"])
        assert erased_id not in {item["id"] for item in result["items"]}
    context = api.post("/v1/memories/context", token, {"current_message": "When and where do I go running?",
                                                        "ceiling": "restricted"})
    assert context.status_code == 200 and MARKER not in context.text
    journal = api.journal(token)
    assert MARKER not in str(journal)
    for operation in journal:
        detail = api.get(f"/v1/memory-reconsolidations/{operation['id']}", token, ceiling="restricted")
        assert detail.status_code == 200 and MARKER not in detail.text
    derived = api.get(f"/v1/memories/{derived_id}", token, ceiling="restricted")
    assert derived.status_code in (200, 404) and MARKER not in derived.text
    page.goto(f"/review/operations/{summary['id']}")
    assert MARKER not in page.content()

    # Every byte the app stored: the marker survives only in the owner's own message part.
    dump = product.database.dump_data()
    assert f"runs along the river past the {MARKER}" not in dump
    assert dump_tables_containing(dump, MARKER) == {MESSAGE_PARTS_TABLE}
    assert MARKER not in product.logs()

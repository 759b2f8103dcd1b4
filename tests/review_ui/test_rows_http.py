"""Journal rows and their one-step actions over Django's test client: the "Approve N exact
copies" button approves what it showed (a resubmission replays, a stale item is left), the
conflict sides' "No longer true" ends the belief with one checked revision and returns to the
journal, and neither puts a word of content in a URL or a log line."""
from __future__ import annotations

import logging
import re
from datetime import timedelta

import pytest
from django.test import override_settings

from memory import selectors as memory_selectors
from memory.services.owners import token_create
from reconsolidation.selectors.operations import operation_get
from reconsolidation.services.operations import operation_reject
from reconsolidation.store import ReconsolidationStore
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import by_kind, process
from tests.review_ui.seed import SECRET, build_bank
from tests.review_ui.test_triage_http import signed_in
from veetbot.identity import SCOPE_READ
from veetbot.rls import owner_context


@pytest.fixture
def bank(db):
    return build_bank()


def exact_form(html: str) -> dict:
    form = html.split('id="exact-copies"')[1].split("</form>")[0]
    return {"idempotency_key": re.search(r'name="idempotency_key" value="([^"]+)"', form).group(1),
            "operation": re.findall(r'name="operation" value="([^"]+)"', form)}


def state(bank, operation) -> str:
    return operation_get(principal=bank.owner, operation_id=operation.id, ceiling="restricted").state


def test_the_exact_copies_button_approves_what_it_showed_and_a_resubmission_replays(bank, caplog):
    client = signed_in(bank.token)
    html = client.get("/review/").content.decode()
    assert "Approve 1 exact copy" in html
    form = exact_form(html)
    assert form["operation"] == [f"{bank.merge.id}|{bank.merge.revision}"]
    with caplog.at_level(logging.DEBUG):
        first = client.post("/review/journal/bulk/exact-copies", form)
    assert first.status_code == 200 and "Approved 1 of 1 exact copy." in first.content.decode()
    assert 'id="exact-copies"' not in first.content.decode()  # nothing left to offer
    assert state(bank, bank.merge) == "committed" and state(bank, bank.summary) == "proposed"
    again = client.post("/review/journal/bulk/exact-copies", form).content.decode()
    assert "Approved 1 of 1 exact copy." in again  # the receipts answer; nothing acts twice
    assert SECRET not in caplog.text


def test_an_exact_copy_decided_since_the_journal_was_shown_is_left(bank):
    client = signed_in(bank.token)
    form = exact_form(client.get("/review/").content.decode())
    operation_reject(principal=bank.owner, operation_id=bank.merge.id, expected_revision=bank.merge.revision,
                     idempotency_key="meanwhile")
    text = client.post("/review/journal/bulk/exact-copies", form).content.decode()
    assert "Approved 0 of 1 exact copy." in text and state(bank, bank.merge) == "rejected"


@pytest.mark.parametrize("form", [
    {"idempotency_key": "review-00000000-0000-4000-8000-000000000000"},
    {"idempotency_key": "nope", "operation": ["00000000-0000-4000-8000-000000000000|1"]},
    {"idempotency_key": "review-00000000-0000-4000-8000-000000000000", "operation": ["not-an-id|1"]},
    {"idempotency_key": "review-00000000-0000-4000-8000-000000000000",
     "operation": ["00000000-0000-4000-8000-000000000000|1", "00000000-0000-4000-8000-000000000000|2"]},
])
def test_a_malformed_exact_copies_form_is_refused(bank, form):
    assert signed_in(bank.token).post("/review/journal/bulk/exact-copies", form).status_code == 400
    assert state(bank, bank.merge) == "proposed"


def test_a_read_only_sign_in_is_offered_no_button_and_may_not_post(bank):
    client = signed_in(token_create(principal=bank.owner, scopes=[SCOPE_READ]))
    html = client.get("/review/").content.decode()
    assert 'id="exact-copies"' not in html and 'data-action="no_longer_true"' not in html
    form = {"idempotency_key": "review-00000000-0000-4000-8000-000000000000",
            "operation": [f"{bank.merge.id}|{bank.merge.revision}"]}
    assert client.post("/review/journal/bulk/exact-copies", form).status_code == 403
    assert state(bank, bank.merge) == "proposed"


def side_form(html: str, memory_id, action: str) -> dict:
    form = html.split(f'action="/review/memories/{memory_id}/{action}"')[1].split("</form>")[0]
    return dict(re.findall(r'name="(expected_revision|idempotency_key|back)" value="([^"]+)"', form))


def test_no_longer_true_on_a_conflict_side_ends_it_in_one_step_and_returns_to_the_journal(bank, caplog):
    client = signed_in(bank.token)
    floor_three = bank.originals["conflict"][0]
    html = client.get("/review/").content.decode()
    form = side_form(html, floor_three.id, "no_longer_true")
    assert form["back"] == "journal" and int(form["expected_revision"]) == floor_three.content_revision
    with caplog.at_level(logging.DEBUG):
        response = client.post(f"/review/memories/{floor_three.id}/no_longer_true", form)
    assert response.status_code == 303 and response["Location"] == "/review/?feedback=ended"
    with owner_context(bank.owner):
        ended = memory_selectors.memory_get(memory_id=floor_three.id, ceiling="restricted")
    assert ended.expires_at is not None and ended.content_revision == floor_three.content_revision + 1
    assert state(bank, bank.conflict) != "proposed"
    assert "Marked no longer true" in client.get(response["Location"]).content.decode()
    assert SECRET not in caplog.text
    stale = client.post(f"/review/memories/{floor_three.id}/no_longer_true", form)  # the revision it saw is gone
    assert stale.status_code == 409


def test_a_summary_row_lists_every_clause(bank):
    html = signed_in(bank.token).get("/review/").content.decode()
    row = html.split(f'data-operation="{bank.summary.id}"')[1].split("</li>\n    \n")[0]
    assert re.findall(r"<li>([^<]+)</li>", row.split('class="clauses"')[1].split("</ol>")[0]) == [
        f"The owner runs on Tuesdays {SECRET}.", f"The owner runs along the river {SECRET}."]
    assert " more" not in row.split("</ol>")[0]


def test_an_update_row_shows_the_earlier_statement_then_the_later_one(db):
    owner, token = make_owner()
    later_at = T0 + timedelta(days=10)
    with override_settings(AGENT_MEMORY_RECONSOLIDATION_ENABLED=True):
        pair = [original(owner, "Theo lives in Rotterdam.", subject="Theo", at=T0),
                original(owner, "Theo moved to Porto.", subject="Theo", at=later_at)]
        (update,) = by_kind(process(ReconsolidationStore(), owner, pair, later_at + timedelta(days=1)),
                            "end_superseded")
    html = signed_in(token).get("/review/").content.decode()
    row = html.split(f'data-operation="{update.id}"')[1]
    clauses = row.split('class="clauses"')[1].split("</ol>")[0]
    assert re.findall(r'<li><span class="muted">(\w+:)</span> ([^<]+)</li>', clauses) == [
        ("Earlier:", "Theo lives in Rotterdam."), ("Later:", "Theo moved to Porto.")]

"""Journal triage and bulk review over Django's test client: the subject filter keeps its
text out of every URL and log line, the preview writes nothing, each confirmed item is its
own revision-checked, idempotent review (a resubmission replays, a stale item conflicts
without stopping its siblings), and only a sign-in that may write may act."""
from __future__ import annotations

import logging
import re

import pytest
from django.test import Client

from memory.services.owners import token_create
from review_ui import bounds
from tests.review_ui.seed import SECRET, build_bank
from reconsolidation.selectors.operations import operation_get
from reconsolidation.services.operations import operation_approve, operation_reject
from veetbot.identity import SCOPE_READ


@pytest.fixture
def bank(db):
    return build_bank()


def signed_in(token: str) -> Client:
    client = Client()
    assert client.post("/review/sign-in", {"token": token}).status_code == 303
    return client


def state(bank, operation) -> str:
    return operation_get(principal=bank.owner, operation_id=operation.id, ceiling="restricted").state


def confirmation_items(html: str) -> list[str]:
    return re.findall(r'<input type="hidden" name="item" value="([^"]+)">', html)


def test_the_subject_filter_redirects_to_an_id_and_logs_nothing_private(bank, caplog):
    client = signed_in(bank.token)
    with caplog.at_level(logging.DEBUG):
        response = client.post("/review/journal/subject", {"subject": "  RUNNING ", "lens": "all", "state": ""})
        assert response.status_code == 303
        location = response["Location"]
        assert re.fullmatch(r"/review/\?lens=all&subject=[0-9a-f-]{36}", location), location
        html = client.get(location).content.decode()
    assert html.count('class="card ') == 1 and f'data-operation="{bank.summary.id}"' in html
    assert "running" not in location.lower() and SECRET not in caplog.text and "running" not in caplog.text.lower()


def test_an_unknown_subject_token_is_refused_without_saying_why(bank):
    client = signed_in(bank.token)
    response = client.get("/review/?subject=00000000-0000-4000-8000-000000000000")
    assert response.status_code == 400 and "That filter is not known" in response.content.decode()
    other = build_bank()  # another owner's original cannot stand for a subject here
    response = client.get(f"/review/?subject={other.originals['summary'][0].id}")
    assert response.status_code == 400


def test_the_subject_cursor_pages_and_is_bound_to_its_filters(bank, monkeypatch):
    client = signed_in(bank.token)
    location = client.post("/review/journal/subject", {"subject": "units", "lens": "all"})["Location"]
    monkeypatch.setattr(bounds, "REVIEW_JOURNAL_PAGE_SIZE", 1)
    html = client.get(location).content.decode()
    assert html.count('class="card ') == 1 and 'id="next-page"' not in html  # one operation about units
    from reconsolidation.store import ReconsolidationStore
    from tests.reconsolidation.helpers import original
    from tests.reconsolidation.work_builders import by_kind, process
    from tests.review_ui.seed import DAY_ONE
    from django.test import override_settings

    with override_settings(AGENT_MEMORY_RECONSOLIDATION_ENABLED=True):
        pair = [original(bank.owner, "The owner likes kilometres.", subject="units") for _ in range(2)]
        by_kind(process(ReconsolidationStore(), bank.owner, pair, DAY_ONE), "merge_equivalent")
    html = client.get(location).content.decode()
    older = re.search(r'id="next-page" href="([^"]+)"', html).group(1).replace("&amp;", "&")
    assert "units" not in older
    rest = client.get(f"/review/{older}").content.decode()
    assert rest.count('class="card ') == 1
    assert set(re.findall(r'data-operation="([^"]+)"', html)).isdisjoint(re.findall(r'data-operation="([^"]+)"', rest))
    tampered = older.replace("lens=all", "lens=merges")
    assert client.get(f"/review/{tampered}").status_code == 400  # a cursor is bound to its filters


def test_the_preview_writes_nothing_and_lists_what_is_not_pending_apart(bank):
    client = signed_in(bank.token)
    operation_approve(principal=bank.owner, operation_id=bank.conflict.id, expected_revision=bank.conflict.revision, idempotency_key="elsewhere")
    response = client.post("/review/journal/bulk/preview",
                           {"action": "approve", "operation": [str(bank.merge.id), str(bank.conflict.id)]})
    html = response.content.decode()
    assert response.status_code == 200 and "Approve 1 proposal?" in html
    assert 'id="bulk-skipped"' in html and f'data-operation="{bank.conflict.id}"' in html.split('id="bulk-skipped"')[1]
    assert len(confirmation_items(html)) == 1
    assert state(bank, bank.merge) == "proposed"


def test_a_resubmitted_confirmation_replays_and_acts_once(bank):
    client = signed_in(bank.token)
    html = client.post("/review/journal/bulk/preview",
                       {"action": "reject", "operation": [str(bank.merge.id), str(bank.summary.id)]}).content.decode()
    items = confirmation_items(html)
    first = client.post("/review/journal/bulk/apply", {"action": "reject", "item": items}).content.decode()
    assert first.count('data-outcome="rejected"') == 2
    again = client.post("/review/journal/bulk/apply", {"action": "reject", "item": items}).content.decode()
    assert again.count('data-outcome="rejected"') == 2  # the receipts answer; nothing acts twice
    assert operation_get(principal=bank.owner, operation_id=bank.merge.id, ceiling="restricted").revision == bank.merge.revision + 1


def test_an_item_changed_since_the_preview_conflicts_and_its_siblings_still_apply(bank):
    client = signed_in(bank.token)
    html = client.post("/review/journal/bulk/preview",
                       {"action": "approve", "operation": [str(bank.merge.id), str(bank.conflict.id)]}).content.decode()
    operation_reject(principal=bank.owner, operation_id=bank.merge.id, expected_revision=bank.merge.revision, idempotency_key="meanwhile")
    result = client.post("/review/journal/bulk/apply", {"action": "approve", "item": confirmation_items(html)})
    text = result.content.decode()
    assert 'data-outcome="conflict"' in text and 'data-outcome="approved"' in text
    assert "Approved 1 of 2." in text
    assert state(bank, bank.merge) == "rejected" and state(bank, bank.conflict) == "committed"


def test_a_read_only_sign_in_may_preview_nothing_and_apply_nothing(bank):
    client = signed_in(token_create(principal=bank.owner, scopes=[SCOPE_READ]))
    html = client.get("/review/").content.decode()
    assert 'id="bulk"' not in html and 'type="checkbox"' not in html
    response = client.post("/review/journal/bulk/preview", {"action": "approve", "operation": [str(bank.merge.id)]})
    assert response.status_code == 403
    token = f"{bank.merge.id}|{bank.merge.revision}|review-00000000-0000-4000-8000-000000000000"
    assert client.post("/review/journal/bulk/apply", {"action": "approve", "item": [token]}).status_code == 403
    assert state(bank, bank.merge) == "proposed"


@pytest.mark.parametrize("form", [
    {"action": "approve"},
    {"action": "delete", "operation": ["00000000-0000-4000-8000-000000000000"]},
    {"action": "approve", "operation": ["not-a-uuid"]},
])
def test_a_malformed_selection_is_refused(bank, form):
    assert signed_in(bank.token).post("/review/journal/bulk/preview", form).status_code == 400


@pytest.mark.parametrize("items", [["garbage"], ["00000000-0000-4000-8000-000000000000|0|review-x"], []])
def test_a_malformed_confirmation_is_refused_without_effect(bank, items):
    response = signed_in(bank.token).post("/review/journal/bulk/apply", {"action": "approve", "item": items})
    assert response.status_code == 400
    assert state(bank, bank.merge) == "proposed"


def test_bulk_posts_need_the_csrf_token(bank):
    client = Client(enforce_csrf_checks=True)
    client.post("/review/sign-in", {"token": bank.token})
    response = client.post("/review/journal/bulk/preview", {"action": "approve", "operation": [str(bank.merge.id)]})
    assert response.status_code == 403

"""The memory browser and the owner's erasures over Django's test client: pages of
originals and derived items with closed filters and a bound cursor, an original with the
operations that used it, its actions (revision-checked), erasing a conversation through a
confirmation page, and the whole account behind its typed phrase."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from memory import services
from memory.models import Memory
from memory.services.owners import token_create
from review_ui import memories
from tests.memory.test_services_erasure import tables_containing
from tests.review_ui.seed import SECRET, build_bank
from veetbot.identity import SCOPE_READ
from veetbot.rls import owner_context


@pytest.fixture
def bank(db, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    return build_bank(approve_kinds=("summary",))


def signed_in(token: str) -> Client:
    client = Client()
    assert client.post("/review/sign-in", {"token": token}).status_code == 303
    return client


def rows(html: str) -> list[str]:
    return re.findall(r'data-memory="([0-9a-f-]{36})"', html)


def test_the_browser_lists_originals_and_derived_items_newest_first(bank):
    client = signed_in(bank.token)
    html = client.get("/review/memories").content.decode()
    assert len(rows(html)) == 6 and SECRET in html
    derived = client.get("/review/memories?kind=derived").content.decode()
    assert rows(derived) == [str(bank.summary.id)] and "Summary (derived from originals" in derived
    assert client.get("/review/memories?status=retracted").status_code == 200
    assert client.get("/review/memories?kind=everything").status_code == 400
    assert client.get("/review/memories?type=feelings").status_code == 400


def test_the_cursor_pages_and_is_bound_to_owner_and_filters(bank, monkeypatch):
    monkeypatch.setattr(memories, "PAGE_SIZE", 4)
    client = signed_in(bank.token)
    first = client.get("/review/memories").content.decode()
    cursor = re.search(r'cursor=([^"]+)"', first).group(1).replace("&amp;", "&")
    second = client.get(f"/review/memories?cursor={cursor}").content.decode()
    assert len(rows(first)) == 4 and len(rows(second)) == 2 and not set(rows(first)) & set(rows(second))
    assert client.get(f"/review/memories?type=fact&cursor={cursor}").status_code == 400  # other filters
    other = build_bank()
    assert signed_in(other.token).get(f"/review/memories?cursor={cursor}").status_code == 400  # other owner


def test_an_original_shows_the_operations_that_used_it_and_its_conversation(bank):
    c, _d = bank.originals["summary"]
    html = signed_in(bank.token).get(f"/review/memories/{c.id}").content.decode()
    assert f'href="/review/operations/{bank.summary.id}"' in html and "Summary — Active" in html
    assert "Erase this conversation" in html


def test_an_action_is_revision_checked_and_redirects_with_a_fixed_phrase(bank):
    a, _b = bank.originals["merge"]
    client = signed_in(bank.token)
    html = client.get(f"/review/memories/{a.id}").content.decode()
    key = re.search(r'name="idempotency_key" value="([^"]+)"', html).group(1)
    stale = client.post(f"/review/memories/{a.id}/not_true", {"expected_revision": 99, "idempotency_key": key})
    assert stale.status_code == 409
    done = client.post(f"/review/memories/{a.id}/mark_reviewed", {"expected_revision": 1, "idempotency_key": key})
    assert done.status_code == 303 and done["Location"] == f"/review/memories/{a.id}?feedback=reviewed"
    assert client.post(f"/review/memories/{a.id}/whatever", {"expected_revision": 1, "idempotency_key": key}).status_code == 404
    gone = client.post(f"/review/memories/{a.id}/delete", {"expected_revision": 1, "idempotency_key": key})
    assert gone.status_code == 303
    with owner_context(bank.owner):
        assert Memory.objects.get(id=a.id).status == "deleted"


def test_a_read_only_sign_in_may_browse_but_not_act(bank):
    token = token_create(principal=bank.owner, scopes=[SCOPE_READ])
    client = signed_in(token)
    a, _b = bank.originals["merge"]
    assert "action-delete" not in client.get(f"/review/memories/{a.id}").content.decode()
    refused = client.post(f"/review/memories/{a.id}/delete", {"expected_revision": 1, "idempotency_key": "k"})
    assert refused.status_code == 403


def test_erasing_a_conversation_confirms_in_numbers_then_erases(live_db, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    bank = build_bank()
    c, _d = bank.originals["summary"]
    client = signed_in(bank.token)
    html = client.get(f"/review/memories/{c.id}").content.decode()
    link = re.search(r'href="(/review/conversations/[0-9a-f-]{36}/erase)"', html).group(1)
    page = client.get(link).content.decode()
    assert "1 message and every memory formed from them (1)" in page
    key = re.search(r'name="idempotency_key" value="([^"]+)"', page).group(1)
    done = client.post(link, {"idempotency_key": key})
    assert done.status_code == 303 and done["Location"] == "/review/memories?feedback=session_erased"
    assert tables_containing(c.statement) == []
    assert client.post(link, {"idempotency_key": key}).status_code == 404  # nothing left to confirm


def test_the_whole_account_needs_the_exact_phrase_and_ends_the_sign_in(live_db):
    bank = build_bank()
    client = signed_in(bank.token)
    page = client.get("/review/account/erase").content.decode()
    key = re.search(r'name="idempotency_key" value="([^"]+)"', page).group(1)
    wrong = client.post("/review/account/erase", {"idempotency_key": key, "confirm": "erase my memory"})
    assert wrong.status_code == 400 and tables_containing(SECRET)
    done = client.post("/review/account/erase", {"idempotency_key": key, "confirm": "erase my whole memory bank"})
    assert done.status_code == 303 and done["Location"] == "/review/sign-in"
    assert tables_containing(SECRET) == [] and services.token_authenticate(bank.token) is None
    assert client.get("/review/memories").status_code == 302  # signed out

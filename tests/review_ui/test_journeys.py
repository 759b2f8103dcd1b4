"""The dashboard's journeys in real headless Chromium against the live server on
127.0.0.1: sign in, every lens, detail and a source, undo with preview, approve and
reject, a stale-revision conflict, processing switched off, sign-out. Each journey
saves a screenshot into test-artifacts/review_ui/."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.review_ui.browser import assert_accessible, screenshot, sign_in
from tests.review_ui.seed import SECRET, build_bank
from reconsolidation.services.operations import operation_approve


@pytest.fixture(scope="module")
def shared(committed_db):
    """One bank (merge and summary approved, conflict pending) for the journeys that only
    read; each journey that writes builds its own owner."""
    return build_bank(approve_kinds=("merge", "summary"))


def open_card(page, operation_id) -> None:
    page.goto("/review/?lens=all")
    page.click(f'li.card[data-operation="{operation_id}"] a')
    page.wait_for_url(re.compile(f"/review/operations/{operation_id}"))


def feedback_in_view(page) -> None:
    page.mouse.wheel(0, 5000)
    box = page.locator("#feedback").bounding_box()
    assert box is not None and 0 <= box["y"] < 700


def test_sign_in_exchanges_the_token_for_a_cookie_the_page_cannot_read(page, shared):
    bank = shared
    sign_in(page, bank.token)
    expect(page.locator("li.card")).to_have_count(3)
    cookies = {c["name"]: c for c in page.context.cookies()}
    review_cookie = cookies["veetbot_review"]
    assert review_cookie["httpOnly"] and review_cookie["secure"] and review_cookie["sameSite"] == "Strict"
    assert "veetbot_review" not in page.evaluate("document.cookie")
    assert page.evaluate("window.localStorage.length + window.sessionStorage.length") == 0
    assert bank.token not in page.content()
    assert_accessible(page)
    screenshot(page, "sign_in")


def test_each_lens_shows_only_its_kind_and_cards_name_kind_and_state(page, shared):
    bank = shared
    sign_in(page, bank.token)
    expected = {"all": 3, "summaries": 1, "connections": 0, "conflicts": 1, "merges": 1}
    labels = {"summaries": "Summary", "conflicts": "Conflict", "merges": "Merge"}
    for lens, count in expected.items():
        page.click(f'a.lens[data-lens="{lens}"]')
        page.wait_for_url(re.compile(f"lens={lens}"))
        expect(page.locator("li.card")).to_have_count(count)
        if lens in labels:
            expect(page.locator("li.card .kind")).to_have_text(labels[lens])
        if count == 0:
            expect(page.locator("#journal-empty")).to_be_visible()
    page.click('a.lens[data-lens="summaries"]')
    expect(page.locator("li.card .state")).to_have_text("Active")
    expect(page.locator("li.card .derived-label")).to_have_text("Derived, not an original")
    page.select_option("#state", "proposed")
    page.click("#apply-state")
    expect(page.locator("li.card")).to_have_count(0)
    page.click('a.lens[data-lens="all"]')
    expect(page.locator("li.card")).to_have_count(1)  # the state filter survives a lens change
    expect(page.locator("li.card .kind")).to_have_text("Conflict")
    expect(page.locator("svg.chart g.day")).to_have_count(14)
    expect(page.locator("#status-mode")).to_contain_text("Reviewed: dreaming proposes")
    assert_accessible(page)
    screenshot(page, "lenses")


def test_detail_discloses_each_claims_sources_and_a_source_is_read_again(page, shared):
    bank = shared
    sign_in(page, bank.token)
    open_card(page, bank.summary.id)
    expect(page.locator("#derived-label")).to_contain_text("not an original memory")
    claims = page.locator(".claim")
    expect(claims).to_have_count(2)
    c, d = bank.originals["summary"]
    first = claims.nth(0)
    first.locator("summary").click()
    expect(first.locator("li[data-source]")).to_have_count(1)
    expect(first.locator(f'li[data-source="{c.id}"]')).to_be_visible()
    assert_accessible(page)
    screenshot(page, "detail_summary")
    first.locator("a.source-link").click()
    page.wait_for_url(re.compile(f"/review/sources/{c.id}"))
    expect(page.locator("#source-statement")).to_have_text(c.statement)
    expect(page.locator("#source-omitted")).to_have_text("cited support")
    assert SECRET not in page.url
    assert_accessible(page)
    screenshot(page, "source")


def test_conflict_detail_shows_both_sides_with_the_fixed_notice(page, shared):
    bank = shared
    sign_in(page, bank.token)
    open_card(page, bank.conflict.id)
    expect(page.locator("#conflict-notice")).to_contain_text("has not decided which one is true")
    expect(page.locator(".claim")).to_have_count(2)
    e, f = bank.originals["conflict"]
    assert set(page.locator(".claim-text").all_inner_texts()) == {e.statement, f.statement}
    assert_accessible(page)
    screenshot(page, "conflict")


def test_undo_previews_every_affected_original_then_confirms(page):
    bank = build_bank(approve_kinds=("merge",))
    sign_in(page, bank.token)
    open_card(page, bank.merge.id)
    expect(page.locator("#detail-state")).to_have_text("Active")
    page.click("#action-undo-preview")
    expect(page.locator("#undo-explanation")).to_contain_text("only duplicate suppression")
    a, b = bank.originals["merge"]
    expect(page.locator("#affected li")).to_have_count(2)
    for memory in (a, b):
        expect(page.locator(f'#affected li[data-source="{memory.id}"]')).to_contain_text(memory.statement)
    assert_accessible(page)
    screenshot(page, "undo_preview")
    page.click("#action-undo")
    page.wait_for_url(re.compile(r"feedback=undone"))
    expect(page.locator("#feedback")).to_contain_text("Undone")
    expect(page.locator("#detail-state")).to_have_text("Undone")
    expect(page.locator("#action-undo-preview")).to_have_count(0)
    feedback_in_view(page)
    assert_accessible(page)
    screenshot(page, "undo_done")


def test_approve_and_reject_pending_proposals_with_competing_actions_disabled_in_flight(page):
    bank = build_bank()
    sign_in(page, bank.token)
    open_card(page, bank.merge.id)
    # In flight: the first submit marks the page busy and disables every competing action.
    # (A window listener holds this submit back, so the state can be read before navigation.)
    page.evaluate("window.addEventListener('submit', (event) => event.preventDefault())")
    page.click("#action-approve")
    in_flight = page.evaluate('[document.body.getAttribute("aria-busy"), '
                              'document.getElementById("action-reject").disabled, '
                              'document.getElementById("feedback").textContent]')
    assert in_flight == ["true", True, "Working…"]
    page.reload()
    page.click("#action-approve")
    page.wait_for_url(re.compile(r"feedback=approved"))
    expect(page.locator("#feedback")).to_contain_text("Approved")
    expect(page.locator("#detail-state")).to_have_text("Active")
    assert_accessible(page)
    screenshot(page, "approved")
    open_card(page, bank.conflict.id)
    page.click("#action-reject")
    page.wait_for_url(re.compile(r"feedback=rejected"))
    expect(page.locator("#detail-state")).to_have_text("Rejected")
    expect(page.locator("#action-approve")).to_have_count(0)
    assert_accessible(page)
    screenshot(page, "rejected")


def test_a_stale_revision_shows_the_conflict_and_the_current_state(page):
    bank = build_bank()
    sign_in(page, bank.token)
    open_card(page, bank.merge.id)
    # Meanwhile, another client approves the same proposal.
    operation_approve(principal=bank.owner, operation_id=bank.merge.id, expected_revision=bank.merge.revision, idempotency_key="elsewhere")
    page.click("#action-reject")
    expect(page.locator("#feedback")).to_contain_text("Conflict")
    expect(page.locator("#detail-state")).to_have_text("Active")
    expect(page.locator("#action-reject")).to_have_count(0)
    feedback_in_view(page)
    assert_accessible(page)
    screenshot(page, "stale_conflict")


def test_history_stays_browsable_with_processing_switched_off(page, settings, shared):
    bank = shared
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    sign_in(page, bank.token)
    expect(page.locator("#status-processing")).to_contain_text("off")
    expect(page.locator("li.card")).to_have_count(3)
    open_card(page, bank.merge.id)
    expect(page.locator("#action-undo-preview")).to_be_visible()
    assert_accessible(page)
    screenshot(page, "processing_off")


def test_sign_out_clears_the_cookie_and_the_journal_needs_a_new_sign_in(page, shared):
    bank = shared
    sign_in(page, bank.token)
    page.click("#sign-out")
    page.wait_for_url(re.compile(r"/review/sign-in$"))
    assert "veetbot_review" not in {c["name"] for c in page.context.cookies()}
    page.goto("/review/")
    assert page.url.endswith("/review/sign-in")
    assert_accessible(page)
    screenshot(page, "signed_out")


def test_deleting_a_summary_retires_it_and_keeps_its_originals(page):
    bank = build_bank(approve_kinds=("summary",))
    sign_in(page, bank.token)
    open_card(page, bank.summary.id)
    page.click("#action-dismiss")
    page.wait_for_url(re.compile(r"feedback=dismissed"))
    expect(page.locator("#derived-status")).to_contain_text("dismissed")
    page.click("#action-delete")
    page.wait_for_url(re.compile(r"feedback=deleted"))
    expect(page.locator("#feedback")).to_contain_text("Deleted")
    expect(page.locator("#detail-state")).to_have_text("Invalidated")
    expect(page.locator(".claim")).to_have_count(0)
    expect(page.locator("#action-delete")).to_have_count(0)
    c, _d = bank.originals["summary"]
    page.goto(f"/review/sources/{c.id}")
    expect(page.locator("#source-statement")).to_have_text(c.statement)  # the original is untouched
    assert_accessible(page)
    screenshot(page, "summary_deleted")

"""Journal triage and bulk review in real headless Chromium: each row says in words what
it is, filters by kind, state and subject (the subject never in the URL), keyboard-only
selection of several proposals, the preview of every affected original before anything
is written, and the per-item results. Every page is checked with axe-core and at 360 px."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.review_ui.browser import assert_accessible, assert_fits, screenshot, sign_in
from tests.review_ui.seed import SECRET, build_bank
from reconsolidation.selectors.operations import operation_get


@pytest.fixture(scope="module")
def shared(committed_db):
    return build_bank(approve_kinds=("merge",))


def card(page, operation_id):
    return page.locator(f'li.card[data-operation="{operation_id}"]')


def test_each_row_says_what_it_is_in_words(page, shared):
    bank = shared
    sign_in(page, bank.token)
    merge, summary, conflict = card(page, bank.merge.id), card(page, bank.summary.id), card(page, bank.conflict.id)
    expect(merge).to_contain_text("Merge · units")
    expect(merge).to_contain_text("Duplicates merged into one — in use")
    expect(merge).to_contain_text(f"“The owner prefers Celsius {SECRET}.”")
    expect(merge).to_contain_text("Supported by 2 originals")
    expect(merge).to_contain_text("Why: the statements match word for word")
    expect(summary).to_contain_text("Summary · running")
    expect(summary).to_contain_text("A summary derived from originals — waiting for your review")
    expect(summary.locator(".clauses li")).to_have_count(2)  # every clause, not "and 1 more"
    expect(summary).to_contain_text("Why: related memories about one subject, quoted word for word")
    expect(conflict).to_contain_text("Originals that disagree")
    expect(conflict).to_contain_text("2 originals disagree")
    expect(conflict).to_contain_text("Why: they give different values for the same subject")
    texts = page.locator("li.card").all_inner_texts()
    assert len(set(texts)) == len(texts) == 3  # no two rows read alike
    # Only pending proposals can be picked for bulk review, each with a label.
    expect(page.locator('li.card input[type="checkbox"]')).to_have_count(2)
    expect(page.get_by_label(re.compile("Select this summary about running"))).to_be_visible()
    assert_accessible(page)
    screenshot(page, "triage")


def test_filters_by_kind_state_and_subject_without_the_subject_in_the_url(page, shared):
    bank = shared
    sign_in(page, bank.token)
    page.click('a.lens[data-lens="merges"]')
    expect(page.locator("li.card")).to_have_count(1)
    page.click('a.lens[data-lens="all"]')
    page.select_option("#state", "proposed")
    page.click("#apply-state")
    expect(page.locator("li.card")).to_have_count(2)
    page.fill("#subject", "running")
    page.click("#apply-subject")
    page.wait_for_url(re.compile(r"subject=[0-9a-f-]{36}"))
    assert "running" not in page.url and SECRET not in page.url and "state=proposed" in page.url
    expect(page.locator("li.card")).to_have_count(1)
    expect(card(page, bank.summary.id)).to_be_visible()
    expect(page.locator("#subject-in-force")).to_have_text("Showing operations about “running”.")
    expect(page.locator("#subject")).to_have_value("running")
    assert_accessible(page)
    screenshot(page, "triage_subject")
    page.click('a.lens[data-lens="conflicts"]')  # the subject survives a kind change
    expect(page.locator("li.card")).to_have_count(0)
    expect(page.locator("#journal-empty")).to_be_visible()
    page.click("#clear-subject")
    expect(page.locator("li.card")).to_have_count(1)
    expect(card(page, bank.conflict.id)).to_be_visible()
    page.fill("#subject", "no such subject here")
    page.click("#apply-subject")
    expect(page.locator("#feedback")).to_contain_text("No memory has that subject")
    assert "no such subject" not in page.url


def test_bulk_review_by_keyboard_previews_every_affected_original_before_writing(page):
    bank = build_bank()  # all three pending
    sign_in(page, bank.token)
    # Keyboard only: focus each checkbox, Space ticks it, Enter on the button submits.
    for operation in (bank.merge, bank.conflict):
        page.focus(f"#pick-{operation.id}")
        page.keyboard.press("Space")
    page.focus("#bulk-approve")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/review/journal/bulk/preview$"))
    expect(page.locator("#bulk-title")).to_have_text("Approve 2 proposals?")
    expect(page.locator("#bulk-explanation")).to_contain_text("Nothing has been written yet.")
    items = page.locator("#bulk-items > li")
    expect(items).to_have_count(2)
    for name in ("merge", "conflict"):
        for original in bank.originals[name]:
            expect(page.locator(f'#bulk-items li[data-source="{original.id}"]')).to_contain_text(original.statement)
    for operation in (bank.merge, bank.conflict, bank.summary):  # nothing written by the preview
        assert operation_get(principal=bank.owner, operation_id=operation.id, ceiling="restricted").state == "proposed"
    assert SECRET not in page.url
    assert_accessible(page)
    screenshot(page, "bulk_preview")
    page.focus("#bulk-confirm")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/review/journal/bulk/apply$"))
    expect(page.locator("#feedback")).to_have_text("Approved 2 of 2.")
    rows = page.locator("#bulk-results tbody tr")
    expect(rows).to_have_count(2)
    for operation, kind in ((bank.merge, "Merge"), (bank.conflict, "Conflict")):
        row = page.locator(f'#bulk-results tr[data-operation="{operation.id}"]')
        expect(row.locator("td").nth(0)).to_have_text(kind)
        expect(row.locator(".now")).to_have_text("Active")
        expect(row.locator(".outcome")).to_have_text("Approved: it is now in use.")
    assert_accessible(page)
    screenshot(page, "bulk_result")
    page.click("#back")
    expect(card(page, bank.merge.id).locator(".state")).to_have_text("Active")
    expect(card(page, bank.summary.id).locator(".state")).to_have_text("Pending review")  # not selected


def test_bulk_reject_from_a_phone_sized_screen(phone):
    bank = build_bank()
    sign_in(phone, bank.token)
    assert_fits(phone, 360)
    assert_accessible(phone)
    screenshot(phone, "triage_360")
    phone.check(f"#pick-{bank.summary.id}")
    phone.click("#bulk-reject")
    expect(phone.locator("#bulk-title")).to_have_text("Reject 1 proposal?")
    assert_fits(phone, 360)
    phone.click("#bulk-confirm")
    expect(phone.locator("#bulk-results .outcome")).to_have_text("Rejected: it will not be proposed again.")
    assert_fits(phone, 360)
    assert operation_get(principal=bank.owner, operation_id=bank.summary.id, ceiling="restricted").state == "rejected"

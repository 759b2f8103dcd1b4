"""The memory browser in real headless Chromium: filter by keyboard, open an original and
see what dreaming did with it, erase its conversation through the confirmation page.
Checked with axe-core and at 360 px."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.review_ui.browser import assert_accessible, assert_fits, sign_in
from tests.review_ui.seed import SECRET, build_bank


@pytest.fixture
def own(committed_db):
    return build_bank(approve_kinds=("summary",))


def test_browse_open_and_erase_a_conversation(page, own, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    sign_in(page, own.token)
    page.click('nav a:has-text("Memories")')
    expect(page.locator("li.memory")).to_have_count(6)
    assert_accessible(page)
    page.select_option("#kind", "derived")
    page.focus("#apply-filters")
    page.keyboard.press("Enter")
    expect(page.locator("li.memory")).to_have_count(1)
    page.select_option("#kind", "originals")
    page.click("#apply-filters")
    c, _d = own.originals["summary"]
    page.locator(f'li.memory[data-memory="{c.id}"] a').click()
    expect(page.locator("#uses")).to_contain_text("Summary — Active")
    assert_accessible(page)
    page.locator("a.erase-conversation").first.click()
    expect(page.locator("#erase-what")).to_contain_text("1 message")
    assert_accessible(page)
    page.click("#erase-confirm")
    expect(page.locator("#feedback")).to_contain_text("The conversation and every memory formed from it are erased.")
    expect(page.locator(f'li.memory[data-memory="{c.id}"]')).to_have_count(0)


def test_the_browser_reads_well_on_a_phone(phone, own):
    sign_in(phone, own.token)
    phone.goto("/review/memories")
    expect(phone.locator("li.memory").first).to_contain_text(SECRET)
    assert_fits(phone, 360)
    assert_accessible(phone)

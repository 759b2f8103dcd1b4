"""Ask your memory in real headless Chromium, by keyboard: type a question, press Enter
in the form, read one cited answer per merged set with what it is in words, open the
original it cites. Checked with axe-core and at 360 px."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.review_ui.browser import assert_accessible, assert_fits, screenshot, sign_in
from tests.review_ui.seed import SECRET, build_bank


@pytest.fixture(scope="module")
def shared(committed_db):
    return build_bank(approve_kinds=("merge", "summary"))


def ask(page, question: str) -> None:
    page.click('nav a:has-text("Ask your memory")')
    page.fill("#ask-query", question)
    page.focus("#ask-submit")
    page.keyboard.press("Enter")
    page.wait_for_selector("#answer")


def test_asking_by_keyboard_cites_one_answer_per_merged_set(page, shared, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    sign_in(page, shared.token)
    ask(page, "Celsius")
    answers = page.locator("li.answer")
    expect(answers).to_have_count(1)
    expect(answers.first).to_contain_text("Original memory, standing for merged duplicates")
    expect(answers.first).to_contain_text(f"The owner prefers Celsius {SECRET}.")
    expect(page.locator("#answer-channel")).to_contain_text("Searched by")
    assert "Celsius" not in page.url  # the question was POSTed
    assert_accessible(page)
    screenshot(page, "ask")
    answers.first.get_by_role("link", name="Open this original").click()
    expect(page.locator("#source-statement")).to_contain_text("Celsius")


def test_asking_from_a_phone_sized_screen(phone, shared, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    sign_in(phone, shared.token)
    ask(phone, "runs")
    expect(phone.locator("li.answer").first).to_be_visible()
    assert_fits(phone, 360)
    assert_accessible(phone)

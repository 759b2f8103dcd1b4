"""The review dashboard as an owner uses it in the acceptance journeys: headless Debian
Chromium (``tests.review_ui.browser.launch``) against the running gunicorn — signed in with
``tests.review_ui.browser.sign_in`` — opening an operation's card from the list."""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

from playwright.sync_api import expect, sync_playwright

from tests.review_ui.browser import launch


@contextmanager
def browser_page(base_url: str) -> Iterator:
    """One page of a fresh browser at ``base_url``, closed on exit. Playwright's sync API runs
    an event loop on this thread while open, so other asyncio work (an MCP client) runs
    outside the ``with``."""
    with sync_playwright() as playwright:
        browser = launch(playwright)
        context = browser.new_context(base_url=base_url, viewport={"width": 1200, "height": 800})
        page = context.new_page()
        page.set_default_timeout(15_000)
        try:
            yield page
        finally:
            context.close()
            browser.close()


def open_card(page, operation_id: str) -> None:
    page.goto("/review/?lens=all")
    page.click(f'li.card[data-operation="{operation_id}"] a')
    page.wait_for_url(re.compile(f"/review/operations/{operation_id}"))


def approve(page, operation_id: str) -> None:
    """Approve a proposal from its card; the card then says it is in use."""
    open_card(page, operation_id)
    page.click("#action-approve")
    page.wait_for_url(re.compile(r"feedback=approved"))
    expect(page.locator("#detail-state")).to_have_text("Active")


def undo(page, operation_id: str, *, affected: int) -> None:
    """Undo an approved operation from its card, after the preview listing the ``affected``
    memories."""
    open_card(page, operation_id)
    page.click("#action-undo-preview")
    expect(page.locator("#affected li")).to_have_count(affected)
    page.click("#action-undo")
    page.wait_for_url(re.compile(r"feedback=undone"))
    expect(page.locator("#detail-state")).to_have_text("Undone")

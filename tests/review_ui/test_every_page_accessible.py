"""Every page of the dashboard an owner can open, at a desktop width and at 360 px, in real
headless Chromium: axe-core finds no serious or critical violation, nothing scrolls sideways
and no timestamp wraps. The journeys check the pages they pass through; this walks the
whole set, so a page no journey reaches is checked too."""
from __future__ import annotations

import pytest

from tests.review_ui.browser import assert_accessible, assert_fits, sign_in
from tests.review_ui.seed import build_bank


@pytest.fixture(scope="module")
def bank(committed_db):
    return build_bank(approve_kinds=("merge", "summary"))


def page_paths(page, bank) -> list[str]:
    """Every GET page for this bank; the links that need an ID are read from the pages."""
    c, _d = bank.originals["summary"]
    page.goto(f"/review/memories/{c.id}")
    conversation = page.locator("a.erase-conversation").first.get_attribute("href")
    page.goto(f"/review/operations/{bank.merge.id}")
    undo = page.locator("#action-undo-preview").get_attribute("href")
    assert conversation and undo
    return [
        "/review/", "/review/?lens=merges", "/review/?lens=summaries", "/review/?lens=conflicts",
        f"/review/operations/{bank.merge.id}", f"/review/operations/{bank.summary.id}",
        f"/review/operations/{bank.conflict.id}", undo,
        f"/review/sources/{c.id}?operation={bank.summary.id}",
        "/review/ask", "/review/memories", "/review/memories?kind=derived", f"/review/memories/{c.id}",
        conversation, "/review/account/erase",
    ]


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_every_dashboard_page_passes_axe_and_fits_its_viewport(request, bank, settings, width):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    page = request.getfixturevalue("page" if width == "desktop" else "phone")
    viewport = page.viewport_size["width"]
    page.goto("/review/sign-in")
    assert_accessible(page)
    assert_fits(page, viewport)
    sign_in(page, bank.token)
    paths = page_paths(page, bank)
    for path in paths:
        response = page.goto(path)
        assert response is not None and response.status == 200, path
        assert_accessible(page)
        assert_fits(page, viewport)

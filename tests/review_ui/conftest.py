"""Fixtures of the dashboard suites.

The browser suites serve the app with pytest-django's ``live_server`` on 127.0.0.1 only.
``live_server`` asks for ``transactional_db``, whose flush would run as the runtime role
(which may not truncate). Here it is replaced by ``committed_db`` (tests/conftest.py):
committed data kept for the module and truncated once through the owner alias at the
module's end. Every journey builds its own fresh owner, and row-level security keeps
owners apart, so journeys never see each other's rows — and the browser suite does not
pay a full truncation per journey.
"""
from __future__ import annotations

import os

import pytest

from tests.review_ui.browser import AsyncUnsafeAllowed, launch

# Read by pytest-django when the session-scoped live server starts: loopback only.
os.environ["DJANGO_LIVE_TEST_SERVER_ADDRESS"] = "127.0.0.1"


@pytest.fixture
def transactional_db(committed_db):
    yield


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per browser module."""
    from playwright.sync_api import sync_playwright

    with AsyncUnsafeAllowed(), sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


def _page(browser, live_server, width: int, height: int):
    assert live_server.url.startswith("http://127.0.0.1:")
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


@pytest.fixture
def page(browser, live_server):
    context, page = _page(browser, live_server, 1200, 700)
    yield page
    context.close()


@pytest.fixture
def phone(browser, live_server):
    """The narrowest viewport the dashboard must read well at: 360 CSS pixels."""
    context, page = _page(browser, live_server, 360, 740)
    yield page
    context.close()

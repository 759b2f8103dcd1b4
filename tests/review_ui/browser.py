"""One headless Debian Chromium per test module, driven by Playwright.

Playwright's own browser download does not work on these machines, so the package is
pointed at ``/usr/bin/chromium`` with the flags STACK-NOTES.md records (no background
networking on the closed network). Each journey saves a screenshot under
``test-artifacts/review_ui/``.
"""
from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts" / "review_ui"


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 1000
    return path


class AsyncUnsafeAllowed:
    """Playwright's sync API keeps an event loop running in the test thread, which makes
    Django refuse ORM calls there; the seeding in these tests is synchronous test code, so
    the documented escape hatch is enabled for the module only."""

    def __enter__(self):
        self.previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

    def __exit__(self, *exc):
        if self.previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = self.previous

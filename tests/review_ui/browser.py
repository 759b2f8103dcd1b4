"""One headless Debian Chromium per test module, driven by Playwright.

Playwright's own browser download does not work on these machines, so the package is
pointed at ``/usr/bin/chromium`` with the flags STACK-NOTES.md records (no background
networking on the closed network). Each journey saves a screenshot under
``test-artifacts/review_ui/``.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from django.conf import settings

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts" / "review_ui"
# axe-core, the accessibility engine, from the npm registry into a git-ignored folder (the
# embedded data directory's sibling), installed on first use by ``axe_script``.
AXE_VERSION = "4.14.1"
AXE_PREFIX = Path(settings.BASE_DIR) / ".veetbot" / "node"
AXE_FILE = AXE_PREFIX / "node_modules" / "axe-core" / "axe.min.js"
# Violations at these impacts fail a journey; moderate and minor ones are reported only.
AXE_FAILING_IMPACTS = ("serious", "critical")
AXE_RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


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


def axe_script() -> str:
    """The pinned axe-core bundle, installed with npm the first time it is needed."""
    if not AXE_FILE.exists() or f"axe v{AXE_VERSION}" not in AXE_FILE.read_text()[:200]:
        AXE_PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(AXE_PREFIX),
                        f"axe-core@{AXE_VERSION}"], check=True, timeout=300)
    return AXE_FILE.read_text()


def accessibility_violations(page) -> list[dict]:
    """axe-core's serious and critical violations on the page as it is now (WCAG 2.x A/AA
    and best practices). The bundle is evaluated through the DevTools protocol, which the
    page's Content-Security-Policy does not govern, so the page under test is unchanged."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_script())
    result = page.evaluate(
        "async (tags) => { const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}});"
        " return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)})); }", AXE_RULES)
    return [v for v in result if v["impact"] in AXE_FAILING_IMPACTS]


def assert_accessible(page) -> None:
    violations = accessibility_violations(page)
    assert not violations, f"{page.url}: " + json.dumps(violations, indent=1)


def sign_in(page, token: str) -> None:
    page.goto("/review/sign-in")
    page.fill("#id_token", token)
    page.click("#sign-in")
    page.wait_for_url(re.compile(r"/review/$"))


def assert_fits(page, width: int) -> None:
    """Nothing scrolls sideways at ``width``, and no timestamp wraps onto a second line."""
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{page.url}: {scroll} px wide at a {width} px viewport"
    tallest = page.evaluate("Math.max(0, ...Array.from(document.querySelectorAll('time'), t => t.getClientRects().length))")
    assert tallest <= 1, f"{page.url}: a timestamp wraps onto {tallest} lines"

"""A journal row shows the decision, in real headless Chromium: a merge's originals side by
side with the differing words marked and when each was said, every clause of a summary, both
values of a conflict with their dates and sources and the owner's memory controls on each
side — "No longer true" on one side resolves it in one step — and one button approves every
pending exact copy. Each page is checked with axe-core and at 360 px."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import override_settings
from playwright.sync_api import expect

from memory import selectors as memory_selectors
from reconsolidation.models import ReconsolidationOperation
from reconsolidation.store import ReconsolidationStore
from tests.factories import make_owner
from tests.reconsolidation.helpers import original
from tests.review_ui.browser import assert_accessible, assert_fits, screenshot, sign_in
from tests.review_ui.seed import DAY_ONE
from tests.reconsolidation.work_builders import by_kind, process
from veetbot.rls import owner_context


@dataclass
class Rows:
    owner: object
    token: str
    merge: object
    summary: object
    conflict: object
    floor_three: object
    exact: tuple


def _group(store, owner, memories, kind):
    (op,) = by_kind(process(store, owner, memories, DAY_ONE), kind)
    return op


def build_rows() -> Rows:
    owner, token = make_owner()
    store = ReconsolidationStore()
    with override_settings(AGENT_MEMORY_RECONSOLIDATION_ENABLED=True):
        merge = _group(store, owner, [original(owner, "The owner is allergic to cats.", subject="allergies"),
                                      original(owner, "The owner has a cat allergy.", subject="allergies")],
                       "merge_equivalent")
        summary = _group(store, owner, [original(owner, "The owner runs on Tuesdays.", subject="running"),
                                        original(owner, "The owner runs along the river.", subject="running"),
                                        original(owner, "The owner runs with a friend.", subject="running")],
                         "summarize_related")
        floor_three = original(owner, "The owner's flat is on floor 3.", subject="home")
        conflict = _group(store, owner, [floor_three, original(owner, "The owner's flat is on floor 4.",
                                                               subject="home")], "flag_conflict")
        exact = tuple(_group(store, owner, [original(owner, text, subject=subject) for _ in range(2)],
                             "merge_equivalent")
                      for text, subject in (("The owner prefers Celsius.", "units"),
                                            ("The owner drinks tea.", "drinks")))
    return Rows(owner=owner, token=token, merge=merge, summary=summary, conflict=conflict, floor_three=floor_three,
                exact=exact)


def card(page, operation_id):
    return page.locator(f'li.card[data-operation="{operation_id}"]')


def states(rows, *ops):
    with owner_context(rows.owner):
        return [ReconsolidationOperation.objects.get(id=op.id).state for op in ops]


@pytest.fixture
def rows(transactional_db):
    return build_rows()


def test_each_row_shows_its_decision_and_one_step_resolves_a_conflict(page, phone, rows):
    sign_in(page, rows.token)
    merge = card(page, rows.merge.id)
    expect(merge.locator(".side")).to_have_count(2)
    expect(merge.locator("mark")).to_have_text(["is allergic to cats.", "has a cat allergy."])
    expect(merge.locator(".side").first).to_contain_text("The owner is allergic to cats.")
    expect(merge.locator(".said time")).to_have_text(["Sep 1, 2026", "Sep 1, 2026"])
    exact = card(page, rows.exact[0].id)
    expect(exact.locator(".side")).to_have_count(2)
    expect(exact.locator("mark")).to_have_count(0)  # word for word the same: nothing differs
    summary = card(page, rows.summary.id)
    expect(summary.locator(".clauses li")).to_have_text(
        ["The owner runs on Tuesdays.", "The owner runs along the river.", "The owner runs with a friend."])
    expect(summary).not_to_contain_text("more")
    conflict = card(page, rows.conflict.id)
    expect(conflict.locator(".side .statement")).to_have_text(
        ["The owner's flat is on floor 3.", "The owner's flat is on floor 4."])
    expect(conflict.locator(".side .said").first).to_contain_text("Said Sep 1, 2026 · from 1 message of yours")
    expect(conflict.get_by_role("button", name="No longer true")).to_have_count(2)
    expect(conflict.get_by_role("button", name="Not true")).to_have_count(2)
    assert_accessible(page)
    screenshot(page, "journal_rows")

    side = conflict.locator(f'.side[data-memory="{rows.floor_three.id}"]')
    side.get_by_role("button", name="No longer true").click()
    page.wait_for_url("**/review/?feedback=ended")
    expect(page.locator("#feedback")).to_contain_text("Marked no longer true")
    with owner_context(rows.owner):
        ended = memory_selectors.memory_get(memory_id=rows.floor_three.id, ceiling="restricted")
    assert ended.expires_at is not None and ended.content_revision == rows.floor_three.content_revision + 1
    assert states(rows, rows.conflict) != ["proposed"]  # resolved: the disagreement is no longer pending
    expect(card(page, rows.conflict.id).get_by_role("button", name="No longer true")).to_have_count(0)

    sign_in(phone, rows.token)
    assert_fits(phone, 360)
    screenshot(phone, "journal_rows_phone")


def test_one_button_approves_every_pending_exact_copy_and_nothing_else(page, rows):
    sign_in(page, rows.token)
    button = page.locator("#approve-exact")
    expect(button).to_have_text("Approve 2 exact copies")
    button.click()
    expect(page.locator("#feedback")).to_have_text("Approved 2 of 2 exact copies.")
    assert states(rows, *rows.exact) == ["committed", "committed"]
    assert states(rows, rows.merge, rows.summary, rows.conflict) == ["proposed"] * 3  # the paraphrase too
    expect(page.locator("#approve-exact")).to_have_count(0)
    assert_accessible(page)
    screenshot(page, "journal_exact_copies")

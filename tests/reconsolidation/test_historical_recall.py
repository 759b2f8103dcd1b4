"""Historical (``as_of``) recall keeps the group state of its instant: a merge live then
suppresses its duplicates, one undone or invalidated since still does for instants before
that, summaries committed by then render in remaining slots — only while every source is
still permitted *now* (erasure hides every revision; current ceilings apply to the past).
And the request's hard filters hold for derived items: an excluded original, or one outside
a type filter, never renders inside a summary."""
from __future__ import annotations

from datetime import timedelta

from memory.domain import MemoryChanges
from memory.services import memory_erase, memory_revise
from tests.reconsolidation.recall_builders import merge, move, summary
from tests.reconsolidation.test_recall_integration import (  # noqa: F401 (fixtures: on, related)
    BUILT, DAY, QUERY, _dupes, _ids, on, related,
)
from tests.recall.helpers import bank  # noqa: F401 (the bank fixture)


def test_a_merge_live_at_the_instant_renders_once(bank, on):
    a, b, c = _dupes(bank)
    merge(bank.principal, a, b, c, now=BUILT)
    result = bank.recall(QUERY, as_of=BUILT + DAY)
    assert _ids(result) == [a] and set(result.stages.suppressed_ids) == {b, c}
    assert result.rendered.count("[m:") == 1


def test_an_undone_merge_still_holds_for_instants_before_the_undo(bank, on):
    a, b, c = _dupes(bank)
    op = merge(bank.principal, a, b, c, now=BUILT)
    move(bank.principal, op, "undone", now=BUILT + 5 * DAY)
    assert _ids(bank.recall(QUERY, as_of=BUILT + DAY)) == [a]  # then: one rendering
    assert set(_ids(bank.recall(QUERY, as_of=BUILT + 6 * DAY))) == {a, b, c}  # after the undo
    assert set(_ids(bank.recall(QUERY))) == {a, b, c}  # and now


def test_a_merge_invalidated_by_a_later_correction_holds_before_it(bank, on):
    a, b, c = _dupes(bank)
    merge(bank.principal, a, b, c, now=BUILT)
    memory_revise(principal=bank.principal, memory_id=c, changes=MemoryChanges(confidence=0.4),
                  now=BUILT + 5 * DAY)  # the listener invalidates the merge
    assert _ids(bank.recall(QUERY, as_of=BUILT + DAY)) == [a]
    assert set(_ids(bank.recall(QUERY))) == {a, b, c}


def test_an_erased_member_ends_the_set_for_every_instant(bank, on):
    a, b, c = _dupes(bank)
    merge(bank.principal, a, b, c, now=BUILT)
    memory_erase(principal=bank.principal, memory_id=b, now=BUILT + 5 * DAY)
    past = bank.recall(QUERY, as_of=BUILT + DAY)
    assert set(_ids(past)) == {a, c} and past.stages.suppressed_ids == ()


def test_a_canonical_now_above_the_ceiling_is_not_shown_for_the_past(bank, on):
    a, b = _dupes(bank, 2)
    merge(bank.principal, a, b, now=BUILT)
    memory_revise(principal=bank.principal, memory_id=a, changes=MemoryChanges(sensitivity="restricted"),
                  now=BUILT + 5 * DAY)
    past = bank.recall(QUERY, as_of=BUILT + DAY, ceiling="internal")
    assert a not in _ids(past) and b in _ids(past)


def test_a_summary_renders_for_instants_after_its_commit_only(bank, on, related):
    anchor, p, q = related
    op = summary(bank.principal, [[p], [q]], omitted=[anchor], now=BUILT)
    assert op.id in _ids(bank.recall(QUERY, as_of=BUILT + DAY))
    before = bank.recall(QUERY, as_of=BUILT - timedelta(hours=1))
    assert op.id not in _ids(before) and before.stages.summary_ids == ()


def test_a_summary_with_an_excluded_dependency_is_withheld(bank, on, related):
    anchor, p, q = related
    op = summary(bank.principal, [[p], [q]], omitted=[anchor], now=BUILT)
    assert op.id in _ids(bank.recall(QUERY))
    for excluded in (p, anchor):  # a rendered clause, or an omitted input
        result = bank.recall(QUERY, exclude_ids=(excluded,))
        assert op.id not in _ids(result) and f"[m:{excluded}]" not in result.rendered


def test_a_summary_over_another_belief_type_is_withheld_under_a_type_filter(bank, on):
    anchor = bank.add("The passport renewal appointment is on Friday.", subject="passport renewal",
                      belief_type="event")
    p = bank.add("The passport renewal form is in the desk.", subject="passport renewal", belief_type="event")
    q = bank.add("The owner prefers the passport renewal online.", subject="passport renewal",
                 belief_type="preference")
    op = summary(bank.principal, [[p], [q]], omitted=[anchor], now=BUILT)
    assert op.id not in _ids(bank.recall(QUERY, belief_types=("event",)))
    only_events = summary(bank.principal, [[p]], omitted=[anchor], now=BUILT)
    assert only_events.id in bank.recall(QUERY, belief_types=("event",)).stages.summary_ids

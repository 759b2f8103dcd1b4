"""Operation history reads: ceiling-filtered before the page bound, newest first, signed
cursors bound to owner/filters/ceiling, the page bound enforced at and past its limit,
foreign and above-ceiling operations not found."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory import services
from memory.domain import MemoryChanges
from reconsolidation import bounds
from reconsolidation.errors import Invalid, NotFound
from tests.factories import make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import process
from reconsolidation.selectors.operations import operation_get, operation_list


@pytest.fixture
def owner(db):
    return make_owner()[0]


def pairs(store, owner, n, day_one, **overrides):
    ops = []
    for i in range(n):
        memories = [original(owner, f"The owner prefers setting {i}.", subject=f"s{i}", **overrides) for _ in range(2)]
        ops += process(store, owner, memories, day_one + timedelta(minutes=i))
    return ops


def test_pages_run_newest_first_and_cursors_continue_without_overlap(owner, enabled, store, day_one):
    ops = pairs(store, owner, 5, day_one)
    first = operation_list(principal=owner, ceiling="internal", limit=2)
    assert [op.id for op in first.items] == [ops[4].id, ops[3].id] and first.next_cursor
    second = operation_list(principal=owner, ceiling="internal", limit=2, cursor=first.next_cursor)
    third = operation_list(principal=owner, ceiling="internal", limit=2, cursor=second.next_cursor)
    assert [op.id for op in second.items + third.items] == [ops[2].id, ops[1].id, ops[0].id]
    assert third.next_cursor is None


def test_operations_above_the_ceiling_are_filtered_before_the_page_bound(owner, enabled, store, day_one):
    visible = pairs(store, owner, 1, day_one, sensitivity="public")
    pairs(store, owner, 3, day_one + timedelta(hours=1))  # internal support, newer
    page = operation_list(principal=owner, ceiling="public", limit=1)
    assert [op.id for op in page.items] == [visible[0].id] and page.next_cursor is None
    newer = operation_list(principal=owner, ceiling="internal", limit=10).items[0]
    with pytest.raises(NotFound):
        operation_get(principal=owner, operation_id=newer.id, ceiling="public")
    assert operation_get(principal=owner, operation_id=newer.id, ceiling="internal").id == newer.id


def test_an_operation_with_erased_support_is_hidden_below_the_owners_restricted_view(owner, enabled, store, day_one):
    (op,) = pairs(store, owner, 1, day_one)
    services.memory_erase(principal=owner, memory_id=op.inputs[0].memory_id, now=day_one)
    with pytest.raises(NotFound):
        operation_get(principal=owner, operation_id=op.id, ceiling="sensitive")
    opaque = operation_get(principal=owner, operation_id=op.id, ceiling="restricted")
    assert (opaque.id, opaque.state) == (op.id, "stale")


def test_a_cursor_is_bound_to_owner_filters_and_ceiling(owner, enabled, store, day_one):
    pairs(store, owner, 3, day_one)
    cursor = operation_list(principal=owner, ceiling="internal", limit=1).next_cursor
    for other in ({"ceiling": "restricted"}, {"ceiling": "internal", "state": "proposed"}):
        with pytest.raises(Invalid):
            operation_list(principal=owner, cursor=cursor, limit=1, **other)
    stranger = make_owner("Stranger")[0]
    with pytest.raises(Invalid):
        operation_list(principal=stranger, ceiling="internal", cursor=cursor, limit=1)
    with pytest.raises(Invalid):
        operation_list(principal=owner, ceiling="internal", cursor=cursor[:-2] + "xx", limit=1)


def test_the_page_bound_holds_at_and_just_past_it(owner, enabled, store, day_one):
    assert operation_list(principal=owner, ceiling="internal", limit=bounds.RECON_OPERATIONS_PAGE_MAX).items == ()
    for bad in (0, bounds.RECON_OPERATIONS_PAGE_MAX + 1, True):
        with pytest.raises(Invalid):
            operation_list(principal=owner, ceiling="internal", limit=bad)
    with pytest.raises(Invalid):
        operation_list(principal=owner, ceiling="secret")


def test_state_and_kind_filters_and_another_owner_sees_nothing(owner, enabled, store, day_one):
    (op,) = pairs(store, owner, 1, day_one)
    services.memory_revise(principal=owner, memory_id=op.inputs[0].memory_id, changes=MemoryChanges(confidence=0.1),
                           now=day_one)
    assert [o.id for o in operation_list(principal=owner, ceiling="internal", state="stale").items] == [op.id]
    assert operation_list(principal=owner, ceiling="internal", state="proposed").items == ()
    assert operation_list(principal=owner, ceiling="restricted", kind="summarize_related").items == ()
    stranger = make_owner("Stranger")[0]
    assert operation_list(principal=stranger, ceiling="restricted").items == ()
    with pytest.raises(NotFound):
        operation_get(principal=stranger, operation_id=op.id, ceiling="restricted")

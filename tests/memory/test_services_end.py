""""No longer true": one checked revision that ends an original's validity now, under the
caller's ceiling; it blocks nothing and keeps the history (unlike "not true")."""
from datetime import timedelta

import pytest

from memory import selectors
from memory.errors import Conflict, NotFound
from memory.models import Rejection
from memory.services.ceilings import memory_end_within_ceiling
from tests.factories import T0, make_memory, make_owner
from veetbot.rls import owner_context

LATER = T0 + timedelta(days=3)


def current(principal, memory_id):
    with owner_context(principal):
        return selectors.memory_get(memory_id=memory_id, ceiling="restricted")


def test_ending_writes_one_revision_that_expires_it_now_and_blocks_nothing(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    ended = memory_end_within_ceiling(principal=principal, memory_id=memory.id, ceiling="restricted",
                                      expected_revision=memory.content_revision, now=LATER)
    assert (ended.expires_at, ended.content_revision, ended.status) == (LATER, memory.content_revision + 1, "active")
    with owner_context(principal):
        assert not Rejection.objects.exists()


def test_a_stale_revision_conflicts_and_changes_nothing(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    with pytest.raises(Conflict):
        memory_end_within_ceiling(principal=principal, memory_id=memory.id, ceiling="restricted",
                                  expected_revision=memory.content_revision + 1, now=LATER)
    assert current(principal, memory.id).content_revision == memory.content_revision


def test_above_the_ceiling_or_foreign_is_not_found(db):
    principal, _ = make_owner()
    memory = make_memory(principal, sensitivity="sensitive")
    with pytest.raises(NotFound):
        memory_end_within_ceiling(principal=principal, memory_id=memory.id, ceiling="public",
                                  expected_revision=memory.content_revision, now=LATER)
    other, _ = make_owner("Owner B")
    with pytest.raises(NotFound):
        memory_end_within_ceiling(principal=other, memory_id=memory.id, ceiling="restricted",
                                  expected_revision=memory.content_revision, now=LATER)
    assert current(principal, memory.id).expires_at is None

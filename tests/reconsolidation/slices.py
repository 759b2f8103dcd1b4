"""Shared pieces of the slice-driver tests: processors built on the real store, a stepping
clock, a bank of related pairs and a whole-database row count."""
from __future__ import annotations

from django.db import connection

from reconsolidation import driver
from tests.factories import T0
from tests.reconsolidation.helpers import original, proposal
from veetbot.identity import Principal
from veetbot.rls import owner_context


def no_change(store, principal, group_lease, *, now):
    """Model work that finds nothing to do: a terminal ``no_change`` outcome."""
    store.finish_group(principal, group_lease, outcome="no_change", now=now)
    return ()


def flag_conflicts(store, principal, group_lease, *, now):
    """Model work that records one flag_conflict over the whole group, through the real commit."""
    operation = store.commit(principal, group_lease, expected_inputs=group_lease.inputs,
                             expected_fence=group_lease.fence_generation,
                             proposal=proposal("flag_conflict", group_lease.inputs), now=now)
    store.finish_group(principal, group_lease, outcome="completed", now=now)
    return (operation,)


class Steps:
    """A monotonic clock that advances ``step`` seconds each time it is read after ``start``
    reads (the driver reads it once per loop turn)."""

    def __init__(self, step: float, start: int = 0) -> None:
        self.step, self.start, self.reads, self.value = step, start, 0, 0.0

    def __call__(self) -> float:
        self.reads += 1
        if self.reads > self.start:
            self.value += self.step
        return self.value


THINGS = ("apples", "bicycles", "candles", "drums", "easels", "flutes", "guitars", "hammers", "kettles", "lanterns",
          "mittens", "needles")


def pairs(principal: Principal, count: int) -> list:
    """``count`` subjects with two originals each from different sessions: every anchor has
    its pair as its only neighbour (pairs share one lexeme at most), so each pair forms one group."""
    made = []
    for thing in THINGS[:count]:
        made.append(original(principal, f"The {thing} stay in the garage.", subject=thing, at=T0))
        made.append(original(principal, f"My {thing} belong in the garage.", subject=thing, at=T0))
    return made


def row_counts() -> dict[str, int]:
    """Rows of every table in the database the runtime role may read (RLS applies: the
    caller sets the owner), for "nothing was written" assertions."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                       " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')"
                       " AND has_table_privilege(c.oid, 'SELECT') ORDER BY c.relname")
        tables = [row[0] for row in cursor.fetchall()]
        counts = {}
        for table in tables:
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table] = cursor.fetchone()[0]
    assert len(counts) > 20, "expected every application table to be readable"
    return counts


def owner_row_counts(principal: Principal) -> dict[str, int]:
    with owner_context(principal):
        return row_counts()


def slice_now(store, principal, now, **kwargs):
    return driver.run_slice(principal, lease_owner=kwargs.pop("lease_owner", "test"), store=store, now=now,
                            process=kwargs.pop("process", no_change), **kwargs)

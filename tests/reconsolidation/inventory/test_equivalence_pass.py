"""The bank-wide equivalence pass: every exact-key set of a generation is planned as a
merge (``proposed`` in reviewed mode) without a model or a group slot, whatever else the
bank holds; the remainder over the slice's operation budget is carried to the next slice
of the same generation; a second generation proposes nothing new; a rejected or undone
set stays blocked. The digest that finds the sets is the database's mirror of
``equivalence.key_digest`` (migration 0006), kept with every write of the row.

Real PostgreSQL, real services: slices are claim -> inventory -> checkpoint -> release,
with queued model work finished ``no_change`` (no model is involved in any of this)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.core.management import call_command
from django.db import connection, connections

from memory import services
from memory.domain import MemoryChanges
from reconsolidation import bounds
from reconsolidation.models import (
    ReconsolidationBlock, ReconsolidationEquivalenceBacklog, ReconsolidationGroup, ReconsolidationOperation,
)
from reconsolidation.driver import inventory_slice
from reconsolidation.inventory.checkpoint import slice_operations
from reconsolidation.sources import current_sources
from reconsolidation.providers.rules.equivalence import key_digest
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import drain, job_of, original, refs
from reconsolidation.services.operations import operation_approve, operation_reject, operation_undo
from veetbot.rls import owner_context

DAY = timedelta(days=1)


@pytest.fixture
def owner(db):
    return make_owner()[0]


def one_slice(store, owner, now):
    lease = store.claim_due(owner, lease_owner="worker", now=now)
    if lease is None:
        return None
    report = inventory_slice(store, owner, lease, now=now)
    drain(store, owner, lease, now)  # model work, without a model
    store.release(owner, lease.lease_token, now=now)
    return report


def whole_generation(store, owner, now, *, limit=400):
    """Slices until the job of ``now``'s due day completes; the number of slices."""
    for number in range(1, limit + 1):
        report = one_slice(store, owner, now)
        assert report is not None, "nothing was due before the generation completed"
        if report.job_completed:
            return number
        now += timedelta(seconds=5)
    raise AssertionError("the generation never completed")


def merges(owner, state=None):
    with owner_context(owner):
        rows = ReconsolidationOperation.objects.filter(kind="merge_equivalent")
        if state:
            rows = rows.filter(state=state)
        return {frozenset(row.input_ids): row for row in rows}


def backlog(owner) -> int:
    with owner_context(owner):
        return ReconsolidationEquivalenceBacklog.objects.count()


def lookalike_bank(owner, *, classes=8, copies=3, fillers=120):
    """``classes`` exact-copy classes hidden among ``fillers`` look-alikes: the same subject
    and nearly the same words — differing in case, punctuation, a number or negation, which
    the key keeps significant — so lexical and subject overlap is heavy everywhere."""
    exact = []
    for k in range(classes):
        statement = f"The owner keeps the spare key number {k} in the blue drawer."
        # Copies from separate messages; valid_from is part of the key, so it is shared.
        exact.append([original(owner, statement, subject="spare key", at=T0 + timedelta(minutes=k + 10 * c),
                               valid_from=T0) for c in range(copies)])
    variants = (
        "the owner keeps the spare key number {k} in the blue drawer.",
        "The owner keeps the spare key number {k} in the blue drawer",
        "The owner keeps the spare key number {k} in the blue drawer!",
        "The owner does not keep the spare key number {k} in the blue drawer.",
        "The owner keeps the spare key number {k}{k} in the blue drawer.",
    )
    for i in range(fillers):
        statement = variants[i % len(variants)].format(k=i // len(variants))
        original(owner, statement, subject="spare key", at=T0 + timedelta(hours=1, minutes=i))
    return exact


def test_the_database_digest_mirrors_the_python_key(owner):
    statements = [
        "Café at 9", "Cafe\u0301 at 9",  # NFC makes these one statement
        "  Paid 30\u00a0EUR \u2003 today ", "Paid 30 EUR today", "paid 30 eur today.",
        "Line\u2028break\tand\u3000ideographic space", "x\u200by",  # a zero-width space is not whitespace
        "\\x41 looks like bytea hex", "C:\\new\\table \\\\ and \\101",  # backslashes are plain bytes
        "Número 7 — 東京 🙂",
        # Each side of the shortcut that skips normalizing a normal statement (migration 0016).
        "Two  spaces inside", " Two spaces inside ", "Next\u0085line", "x\u001cy", "Cafe\u0301 ",
    ]
    made = [original(owner, text, subject="digest") for text in statements]
    made.append(original(owner, "Paid 30 EUR today", subject="digest", expires_at=T0 + 30 * DAY))
    made.append(original(owner, "Born before the epoch", subject="digest",
                         valid_from=datetime(1961, 4, 12, 6, 7, 8, 123457, tzinfo=timezone.utc)))
    with owner_context(owner):
        views, _ = current_sources(owner, refs(*made), T0)
    stored = stored_digests(owner, [m.id for m in made])
    assert {m.id: stored[m.id] for m in made} == {m.id: key_digest(views[m.id]) for m in made}
    assert stored[made[0].id] == stored[made[1].id]
    assert stored[made[2].id] == stored[made[3].id] != stored[made[4].id]
    assert stored[made[3].id] != stored[made[-2].id]  # expiry is part of the key
    assert stored[made[10].id] == stored[made[11].id]  # "Two spaces inside", collapsed and trimmed


def test_the_database_inlines_the_digest_function_into_the_column_it_computes(owner):
    """Not inlined, it cost a separate SQL-function execution for every written row (0012)."""
    with owner_context(owner):
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (VERBOSE) SELECT reconsolidation_equivalence_digest(statement, subject,"
                           " belief_type, claim_kind, polarity, derivation, attribution, scope, portable, authority,"
                           " sensitivity, valid_from, expires_at) FROM memory_memory")
            plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "sha256" in plan and "reconsolidation_equivalence_digest" not in plan


def test_the_digest_is_rewritten_by_the_statement_that_revises_the_row(owner):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    before = stored_digests(owner, [a.id])[a.id]
    revised = services.memory_revise(principal=owner, memory_id=a.id,
                                     changes=MemoryChanges(statement="The owner prefers Fahrenheit."), now=T0 + DAY)
    after = stored_digests(owner, [a.id])[a.id]
    with owner_context(owner):
        views, _ = current_sources(owner, refs(revised), T0 + DAY)
    assert before != after == key_digest(views[a.id])


def test_every_exact_copy_class_among_lookalikes_is_proposed_in_one_generation(owner, enabled, store, day_one):
    exact = lookalike_bank(owner)
    slices = whole_generation(store, owner, day_one)
    proposed = merges(owner)
    assert {frozenset(m.id for m in members) for members in exact} == set(proposed)
    assert {row.state for row in proposed.values()} == {"proposed"}  # reviewed mode: the owner decides
    assert backlog(owner) == 0
    with owner_context(owner):  # no model slot was used: exact-key groups are their own kind
        groups = ReconsolidationGroup.objects.filter(origin="equivalence")
        assert groups.count() == len(exact) and set(groups.values_list("state", flat=True)) == {"completed"}
    assert slices >= 1 and job_of(owner).state == "completed"


def test_a_second_generation_proposes_nothing_new(owner, enabled, store, day_one):
    exact = lookalike_bank(owner, classes=4, fillers=40)
    whole_generation(store, owner, day_one)
    first = merges(owner)
    assert len(first) == len(exact)
    whole_generation(store, owner, day_one + DAY)
    assert job_of(owner).full_generation == 2
    assert merges(owner) == first


def test_more_sets_than_the_operation_budget_are_carried_to_the_next_slices(owner, enabled, store, day_one):
    sets = 20  # one slice scans all 40 originals and finds 20 sets: 8 + 8 + 4
    for k in range(sets):
        for c in range(2):
            original(owner, f"Locker {k} code is private.", subject=f"locker {k}", at=T0 + timedelta(minutes=k + c),
                     valid_from=T0)
    planned, carried, completed, reported = [], [], [], []
    now = day_one
    for _ in range(3):
        report = one_slice(store, owner, now)
        reported.append(len(slice_operations(owner, report.lease_token)))  # what the slice reports as its own
        planned.append(len(merges(owner)))
        carried.append(backlog(owner))
        completed.append(report.job_completed)
        now += timedelta(seconds=5)
    per_slice = bounds.RECON_SLICE_MAX_OPERATIONS
    assert planned == [per_slice, 2 * per_slice, sets]
    assert reported == [per_slice, per_slice, sets - 2 * per_slice]
    assert carried == [sets - per_slice, sets - 2 * per_slice, 0]
    assert completed == [False, False, True]  # the generation waits for its carried sets
    with owner_context(owner):
        by_slice = ReconsolidationOperation.objects.values_list("slice_token", flat=True)
        assert max(list(by_slice).count(token) for token in set(by_slice)) <= per_slice


def test_a_rejected_or_undone_set_stays_blocked_in_later_generations(owner, enabled, store, day_one):
    rejected = [original(owner, "The owner parks on level 3.", subject="parking") for _ in range(2)]
    undone = [original(owner, "The owner's gym locker is 42.", subject="gym") for _ in range(2)]
    whole_generation(store, owner, day_one)
    found = merges(owner)
    to_reject, to_undo = found[frozenset(m.id for m in rejected)], found[frozenset(m.id for m in undone)]
    operation_reject(principal=owner, operation_id=to_reject.id, expected_revision=to_reject.revision, idempotency_key="r", now=day_one)
    approved = operation_approve(principal=owner, operation_id=to_undo.id, expected_revision=to_undo.revision, idempotency_key="a", now=day_one)
    operation_undo(principal=owner, operation_id=approved.id, expected_revision=approved.revision, idempotency_key="u", now=day_one)
    # A new copy of each arrives: a superset of a blocked set is blocked as well (member pairs).
    rejected.append(original(owner, "The owner parks on level 3.", subject="parking", at=T0 + DAY, valid_from=T0))
    undone.append(original(owner, "The owner's gym locker is 42.", subject="gym", at=T0 + DAY, valid_from=T0))
    whole_generation(store, owner, day_one + 2 * DAY)
    assert job_of(owner).full_generation == 2
    after = merges(owner)
    assert set(after) == set(found)  # nothing new was proposed for either set
    assert after[frozenset(m.id for m in rejected[:2])].state == "rejected"
    assert after[frozenset(m.id for m in undone[:2])].state == "undone"
    with owner_context(owner):
        assert ReconsolidationBlock.objects.exists()


@pytest.fixture
def restore_schema(live_db):
    yield
    for alias in ("default", "owner"):
        connections[alias].close()
    migrate_reconsolidation()


def migrate_reconsolidation(*target: str) -> None:
    """To ``target``; with none, every app to its latest (other apps' migrations depend on
    reconsolidation's and go down with it)."""
    app = ("reconsolidation", *target) if target else ()
    call_command("migrate", *app, database="owner", verbosity=0, interactive=False)


def stored_digests(owner, ids) -> dict:
    with owner_context(owner):
        with connection.cursor() as cursor:
            cursor.execute("SELECT id, recon_equivalence_digest FROM memory_memory WHERE id = ANY(%s::uuid[])",
                           [list(ids)])
            return dict(cursor.fetchall())


def test_migration_0006_backfills_the_digest_of_originals_that_existed_before_it(restore_schema, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False  # a downgrade refuses while processing is on
    owner = make_owner()[0]
    made = [original(owner, text, subject="backfill") for text in ("Keys  in the\u00a0drawer.", "Keys in the drawer.",
                                                                  "keys in the drawer.")]
    migrate_reconsolidation("0005_unbounded_codes_and_lease_owner")
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM information_schema.columns"
                       " WHERE table_name = 'memory_memory' AND column_name = 'recon_equivalence_digest'")
        assert cursor.fetchone() == (0,)  # the downgrade removed only what 0006 added
    migrate_reconsolidation()
    stored = stored_digests(owner, [m.id for m in made])
    with owner_context(owner):
        views, _ = current_sources(owner, refs(*made), T0)
    assert stored == {m.id: key_digest(views[m.id]) for m in made}
    assert stored[made[0].id] == stored[made[1].id] != stored[made[2].id]

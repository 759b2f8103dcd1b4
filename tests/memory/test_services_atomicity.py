"""creation_sequence under concurrency, and the journal committing atomically with its change."""
import threading

import pytest
from django.db import connections

from memory import hooks, services
from memory.models import ChangeJournal, Memory, MemoryRevision, MemorySource
from tests.factories import draft, make_memory, make_owner, owner_message
from veetbot.rls import owner_context


class Boom(Exception):
    pass


def test_a_failing_listener_rolls_back_memory_revision_journal_and_sequence(db):
    principal, _ = make_owner()
    event = owner_message(principal, "I prefer Celsius.")

    def explode(change):
        raise Boom()

    hooks.register(explode)
    try:
        with pytest.raises(Boom):
            services.memory_create(principal=principal, draft=draft(event))
    finally:
        hooks.unregister(explode)
    with owner_context(principal):
        for model in (Memory, MemoryRevision, MemorySource, ChangeJournal):
            assert model.objects.count() == 0, model.__name__
    created = services.memory_create(principal=principal, draft=draft(event))
    assert created.creation_sequence == 1  # no gap left by the failed attempt


def test_listener_sees_the_change_inside_the_same_transaction(db):
    principal, _ = make_owner()
    seen = []

    def watch(change):
        with owner_context(change.principal):
            seen.append((change.kind, Memory.objects.filter(id__in=change.memory_ids).count()))

    hooks.register(watch)
    try:
        memory = make_memory(principal)
        services.memory_erase(principal=principal, memory_id=memory.id)
    finally:
        hooks.unregister(watch)
    assert seen == [("created", 1), ("erased", 1)]


@pytest.mark.slow
def test_creation_sequence_is_gap_free_and_commit_ordered_under_concurrent_writers(live_db):
    principal, _ = make_owner()
    event = owner_message(principal, "I like tea.")
    writers, per_writer = 4, 15
    failures, stop = [], threading.Event()

    def write(n):
        try:
            for i in range(per_writer):
                services.memory_create(principal=principal, draft=draft(event, statement=f"Writer {n} fact {i}."))
        except Exception as error:  # surfaced below
            failures.append(error)
        finally:
            connections.close_all()

    def watch():
        # Committed sequences must always form a prefix 1..k: a later number never
        # becomes visible before an earlier one.
        try:
            while not stop.is_set():
                with owner_context(principal):
                    seqs = sorted(Memory.objects.values_list("creation_sequence", flat=True))
                if seqs != list(range(1, len(seqs) + 1)):
                    failures.append(AssertionError(f"gap in committed sequences: {seqs[:5]}..."))
                    return
        finally:
            connections.close_all()

    watcher = threading.Thread(target=watch)
    watcher.start()
    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    watcher.join()
    assert not failures, failures
    with owner_context(principal):
        seqs = sorted(Memory.objects.values_list("creation_sequence", flat=True))
        positions = list(Memory.objects.values_list("store_position", flat=True))
        journal = list(ChangeJournal.objects.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, writers * per_writer + 1))
    assert len(set(positions)) == writers * per_writer
    assert journal == list(range(1, writers * per_writer + 1))

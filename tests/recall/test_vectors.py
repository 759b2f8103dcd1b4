"""The semantic index store: compare-and-swap writes, invalidation inside the changing
transaction, usage-only changes keeping vectors, and the retriever's read helpers.

``HashEncoder`` (a deterministic adapter of the encoder port) is shared with the
backfill tests.
"""
from __future__ import annotations

import hashlib
import math
import random
import threading
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction

from memory import hooks, services
from memory.domain import MemoryChanges
from memory.services.originals import insert_memories
from recall import invalidation
from recall.domain import EmbeddingTuple, memory_text
from recall.models import MemoryVector
from recall.vectors import hnsw_session_settings, owner_vector_count, write_vectors
from tests.factories import T0, draft, make_memory, make_owner, owner_message
from veetbot.rls import owner_context

LATER = T0 + timedelta(days=2)


def unit_vector(text: str, dimensions: int = 384) -> list[float]:
    rng = random.Random(hashlib.sha256(text.encode()).digest())
    values = [rng.gauss(0, 1) for _ in range(dimensions)]
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


class HashEncoder:
    """A deterministic encoder: one pseudo-random unit vector per distinct text."""

    def __init__(self, provider: str = "local", model: str = "test-hash") -> None:
        self.tuple = EmbeddingTuple(provider=provider, model=model, model_revision="1", dimensions=384)
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return [unit_vector(text) for text in texts]


ENCODER = HashEncoder()


def row_for(memory, *, revision=None, text=None):
    text = text or memory_text(memory.subject, memory.statement)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return (memory.id, revision or memory.content_revision, digest, unit_vector(text))


def vectors_of(principal, memory_id=None, space=ENCODER.tuple.space):
    with owner_context(principal):
        rows = MemoryVector.objects.filter(space=space)
        if memory_id is not None:
            rows = rows.filter(memory_id=memory_id)
        return list(rows)


def indexed_memory(principal=None):
    principal = principal or make_owner()[0]
    memory = make_memory(principal)
    assert write_vectors(principal, [row_for(memory)], ENCODER.tuple) == (1, 0)
    return principal, memory


# --- writes ------------------------------------------------------------------------------


def test_write_stores_the_vector_with_its_revision_tuple_and_text_digest(db):
    principal, memory = indexed_memory()
    (stored,) = vectors_of(principal, memory.id)
    text = "weather units: The owner prefers Celsius for weather."
    assert stored.content_revision == 1
    assert stored.text_sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert (stored.provider, stored.model, stored.model_revision, stored.dimensions, stored.text_version) == (
        "local", "test-hash", "1", 384, "memory-text@1")
    assert stored.space == ENCODER.tuple.space
    assert (stored.tenant_id, stored.principal_id) == (principal.tenant_id, principal.principal_id)
    assert list(stored.embedding) == pytest.approx(unit_vector(text), abs=1e-6)


def test_a_vector_computed_before_a_revision_is_not_written_after_it(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    computed = row_for(memory)  # vector for revision 1
    services.memory_revise(principal=principal, memory_id=memory.id,
                           changes=MemoryChanges(statement="The owner prefers Kelvin."), now=LATER)
    assert write_vectors(principal, [computed], ENCODER.tuple) == (0, 1)
    assert vectors_of(principal) == []


def test_a_vector_for_an_erased_original_is_not_written(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    computed = row_for(memory)
    services.memory_erase(principal=principal, memory_id=memory.id, now=LATER)
    assert write_vectors(principal, [computed], ENCODER.tuple) == (0, 1)
    # Erasure bumped the revision to 2; naming it does not pass the compare-and-swap either.
    assert write_vectors(principal, [row_for(memory, revision=2)], ENCODER.tuple) == (0, 1)
    assert vectors_of(principal) == []


def test_a_vector_for_another_owners_original_is_not_written(db):
    owner, _ = make_owner()
    other, _ = make_owner("Other")
    memory = make_memory(other)
    assert write_vectors(owner, [row_for(memory)], ENCODER.tuple) == (0, 1)
    assert vectors_of(owner) == [] and vectors_of(other) == []


def test_writing_the_same_revision_again_changes_nothing(db):
    principal, memory = indexed_memory()
    (before,) = vectors_of(principal)
    assert write_vectors(principal, [row_for(memory, text="other text")], ENCODER.tuple) == (0, 0)
    (after,) = vectors_of(principal)
    assert (after.id, after.text_sha256, after.created_at) == (before.id, before.text_sha256, before.created_at)


def test_a_newer_revision_replaces_an_older_vector_but_never_the_reverse(db):
    principal, memory = indexed_memory()
    old = row_for(memory)
    registered = invalidation.drop_vectors in hooks._listeners
    hooks.unregister(invalidation.drop_vectors)  # leave the revision-1 vector in place
    try:
        revised = services.memory_revise(principal=principal, memory_id=memory.id,
                                         changes=MemoryChanges(statement="The owner prefers Kelvin."), now=LATER)
    finally:
        if registered:
            hooks.register(invalidation.drop_vectors)
    assert write_vectors(principal, [row_for(revised)], ENCODER.tuple) == (1, 0)
    (stored,) = vectors_of(principal)
    assert stored.content_revision == 2
    assert stored.text_sha256 == row_for(revised)[2]
    assert write_vectors(principal, [old], ENCODER.tuple) == (0, 1)
    assert vectors_of(principal)[0].content_revision == 2


def test_spaces_are_kept_apart(db):
    principal, memory = indexed_memory()
    other = HashEncoder(model="another-model")
    assert write_vectors(principal, [row_for(memory)], other.tuple) == (1, 0)
    assert len(vectors_of(principal, space=ENCODER.tuple.space)) == 1
    assert len(vectors_of(principal, space=other.tuple.space)) == 1


@pytest.mark.parametrize("problem, rows", [
    ("dimensions", lambda m: [(m.id, 1, "0" * 64, [0.1] * 383)]),
    ("finite", lambda m: [(m.id, 1, "0" * 64, [float("nan")] + [0.1] * 383)]),
    ("SHA-256", lambda m: [(m.id, 1, "not-a-digest", [0.1] * 384)]),
    ("one row per memory", lambda m: [(m.id, 1, "0" * 64, [0.1] * 384)] * 2),
])
def test_malformed_rows_are_refused_before_any_write(db, problem, rows):
    principal, _ = make_owner()
    memory = make_memory(principal)
    with pytest.raises(ValueError, match=problem):
        write_vectors(principal, rows(memory), ENCODER.tuple)
    assert vectors_of(principal) == []


def test_a_tuple_of_another_width_is_refused(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    wide = EmbeddingTuple(provider="local", model="wide", model_revision="1", dimensions=768)
    with pytest.raises(ValueError, match="384"):
        write_vectors(principal, [row_for(memory)], wide)


# --- invalidation ------------------------------------------------------------------------

def session_of(principal, memory):
    from memory.models import Event

    with owner_context(principal):
        return Event.objects.get(id=memory.sources[0].event).session_id


CONTENT_CHANGES = {
    "revise": lambda p, m: services.memory_revise(
        principal=p, memory_id=m.id, changes=MemoryChanges(statement="The owner prefers Kelvin."), now=LATER),
    "revise_non_text_field": lambda p, m: services.memory_revise(
        principal=p, memory_id=m.id, changes=MemoryChanges(confidence=0.3), now=LATER),
    "retract": lambda p, m: services.memory_revise(
        principal=p, memory_id=m.id, changes=MemoryChanges(status="retracted"), now=LATER),
    "reject": lambda p, m: services.memory_reject(principal=p, memory_id=m.id, now=LATER),
    "review_not_true": lambda p, m: services.memory_review(principal=p, memory_id=m.id, action="not_true", now=LATER),
    "review_not_here": lambda p, m: services.memory_review(principal=p, memory_id=m.id, action="not_here", now=LATER),
    "expire_by_revision": lambda p, m: services.memory_revise(
        principal=p, memory_id=m.id, changes=MemoryChanges(status="expired"), now=LATER),
    "expire_by_sweep": lambda p, m: services.memories_expire_due(principal=p, now=T0 + timedelta(days=30)),
    "erase": lambda p, m: services.memory_erase(principal=p, memory_id=m.id, now=LATER),
    "erase_session": lambda p, m: services.session_erase(principal=p, session_id=session_of(p, m), now=LATER),
    "erase_bank": lambda p, m: services.principal_erase(principal=p, now=LATER),
}


@pytest.mark.parametrize("change", sorted(CONTENT_CHANGES))
def test_a_content_change_or_erasure_deletes_the_vector(db, change):
    principal, _ = make_owner()
    memory = make_memory(principal, expires_at=T0 + timedelta(days=10))
    write_vectors(principal, [row_for(memory)], ENCODER.tuple)
    assert len(vectors_of(principal)) == 1
    CONTENT_CHANGES[change](principal, memory)
    assert vectors_of(principal) == []


@pytest.mark.parametrize("change", sorted(CONTENT_CHANGES))
def test_the_vector_is_deleted_in_the_changing_transaction(db, change):
    """Inside the change's own (uncommitted) transaction the vector is gone; when that
    transaction rolls back, the vector is back: the deletion is part of the change."""
    principal, _ = make_owner()
    memory = make_memory(principal, expires_at=T0 + timedelta(days=10))
    write_vectors(principal, [row_for(memory)], ENCODER.tuple)

    class Abort(Exception):
        pass

    with pytest.raises(Abort):
        with owner_context(principal):
            CONTENT_CHANGES[change](principal, memory)
            assert not MemoryVector.objects.filter(memory_id=memory.id).exists()
            raise Abort
    assert len(vectors_of(principal)) == 1


USAGE_ONLY = {
    "record_usage": lambda p, m: services.memory_record_usage(principal=p, memory_ids=[m.id], now=LATER),
    "mark_reviewed": lambda p, m: services.memory_review(
        principal=p, memory_id=m.id, action="mark_reviewed", now=LATER),
    "dismiss": lambda p, m: services.memory_review(principal=p, memory_id=m.id, action="dismiss", now=LATER),
    "decay": lambda p, m: services.memories_decay_due(principal=p, now=T0 + timedelta(days=31)),
}


@pytest.mark.parametrize("change", sorted(USAGE_ONLY))
def test_a_usage_only_change_keeps_the_vector(db, change):
    principal, _ = make_owner()
    memory = make_memory(principal, authority="EXTRACTED", derivation="extracted")
    write_vectors(principal, [row_for(memory)], ENCODER.tuple)
    USAGE_ONLY[change](principal, memory)
    with owner_context(principal):
        from memory.models import Memory

        row = Memory.objects.get(id=memory.id)
        assert row.content_revision == 1 and row.status == "active"
    (kept,) = vectors_of(principal)
    assert kept.content_revision == 1
    if change == "decay":
        assert row.utility < 1.0  # the sweep really touched the row


def test_invalidation_leaves_other_originals_vectors_alone(db):
    principal, first = indexed_memory()
    second = make_memory(principal, "The owner drinks tea.", message="I drink tea.")
    write_vectors(principal, [row_for(second)], ENCODER.tuple)
    services.memory_erase(principal=principal, memory_id=first.id, now=LATER)
    assert [v.memory_id for v in vectors_of(principal)] == [second.id]


KELVIN = MemoryChanges(statement="The owner prefers Kelvin.")


def in_thread(target):
    """Run ``target`` on its own database connection; returns (thread, results)."""
    results = {}

    def run():
        try:
            results["value"] = target()
        except Exception as error:  # surfaced by the test
            results["error"] = error
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, results


def test_a_write_during_an_uncommitted_revision_skips_the_row_without_waiting(live_db):
    """A revision in flight (row locked, not committed) when the stale write arrives:
    revision 1 is still the committed one, so only the row lock tells the write to keep
    out. It must neither store revision 1's vector nor wait for the owner's write."""
    principal, _ = make_owner()
    memory = make_memory(principal)
    computed = row_for(memory)
    revised, release = threading.Event(), threading.Event()

    def revise():
        with owner_context(principal):
            services.memory_revise(principal=principal, memory_id=memory.id, changes=KELVIN, now=LATER)
            revised.set()
            assert release.wait(10)

    reviser, revise_result = in_thread(revise)
    try:
        assert revised.wait(10)
        writer, write_result = in_thread(lambda: write_vectors(principal, [computed], ENCODER.tuple))
        writer.join(5)
        assert not writer.is_alive(), "the write waited for the owner's uncommitted revision"
        assert write_result == {"value": (0, 1)}
    finally:
        release.set()
        reviser.join(10)
    assert "error" not in revise_result
    assert vectors_of(principal) == []


def test_a_change_waits_for_an_in_flight_write_and_then_deletes_its_vector(live_db):
    """The other order: the write holds the row when the change arrives. The change waits
    for the write's commit and its invalidation then removes the vector."""
    principal, _ = make_owner()
    memory = make_memory(principal)
    written, release = threading.Event(), threading.Event()

    def write():
        with owner_context(principal):
            result = write_vectors(principal, [row_for(memory)], ENCODER.tuple)
            written.set()
            assert release.wait(10)
        return result

    writer, write_result = in_thread(write)
    try:
        assert written.wait(10)
        reviser, revise_result = in_thread(lambda: services.memory_revise(
            principal=principal, memory_id=memory.id, changes=KELVIN, now=LATER))
        reviser.join(0.5)
        assert reviser.is_alive()  # waiting for the in-flight write's row lock
    finally:
        release.set()
        writer.join(10)
    reviser.join(10)
    assert write_result == {"value": (1, 0)} and revise_result["value"].content_revision == 2
    assert vectors_of(principal) == []


# --- read helpers ------------------------------------------------------------------------


def test_owner_vector_count_counts_the_current_owners_vectors_in_one_space(db):
    principal, memory = indexed_memory()
    other, other_memory = indexed_memory(make_owner("Other")[0])
    second = make_memory(principal, "The owner drinks tea.", message="I drink tea.")
    write_vectors(principal, [row_for(second)], ENCODER.tuple)
    write_vectors(principal, [row_for(memory)], HashEncoder(model="another").tuple)
    with owner_context(principal):
        assert owner_vector_count(ENCODER.tuple.space) == 2
        assert owner_vector_count(HashEncoder(model="another").tuple.space) == 1
        assert owner_vector_count("0" * 64) == 0
    with owner_context(other):
        assert owner_vector_count(ENCODER.tuple.space) == 1


def test_owner_vector_count_without_an_owner_sees_nothing(db):
    indexed_memory()
    with transaction.atomic():
        assert owner_vector_count(ENCODER.tuple.space) == 0


def show(cursor, name):
    cursor.execute(f"SHOW {name}")
    return cursor.fetchone()[0]


def test_hnsw_session_settings_take_their_values_from_settings(db, settings):
    settings.RECALL_HNSW_EF_SEARCH = 123
    settings.RECALL_HNSW_MAX_SCAN_TUPLES = 4567
    with transaction.atomic(), connection.cursor() as cursor:
        hnsw_session_settings(cursor)
        cursor.execute("SELECT '[1,2,3]'::vector")  # pgvector loaded: its settings are real now
        assert show(cursor, "hnsw.iterative_scan") == "relaxed_order"
        assert show(cursor, "hnsw.ef_search") == "123"
        assert show(cursor, "hnsw.max_scan_tuples") == "4567"


def test_hnsw_session_settings_end_with_the_transaction(live_db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT '[1,2,3]'::vector")
        with transaction.atomic():
            hnsw_session_settings(cursor)
            assert show(cursor, "hnsw.iterative_scan") == "relaxed_order"
        assert show(cursor, "hnsw.iterative_scan") == "off"
        assert show(cursor, "hnsw.ef_search") == "40"


def test_hnsw_session_settings_refuse_to_run_outside_a_transaction(live_db):
    with connection.cursor() as cursor:
        with pytest.raises(RuntimeError, match="transaction"):
            hnsw_session_settings(cursor)
        cursor.execute("SELECT '[1,2,3]'::vector")
        assert show(cursor, "hnsw.iterative_scan") == "off"


def clustered(center: list[float], spread: float, rng: random.Random) -> list[float]:
    values = [c + rng.gauss(0, spread) for c in center]
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def bulk_memories(principal, count: int):
    event = owner_message(principal, "Many facts.")
    drafts = [draft(event, statement=f"Fact number {n} about the owner.", subject=f"fact {n}") for n in range(count)]
    with owner_context(principal):
        return insert_memories(principal, drafts, T0)


def test_hnsw_with_iterative_scan_fills_the_limit_despite_other_owners_rows(db):
    """Owner filtering happens after the index scan: with another owner's vectors nearer
    to the query, a plain HNSW scan returns fewer than LIMIT rows; the session settings
    keep scanning until the limit is met."""
    rng = random.Random(5)
    center = unit_vector("center")
    near_owner, _ = make_owner("Near")
    far_owner, _ = make_owner("Far")
    near_ids, far_ids = bulk_memories(near_owner, 400), bulk_memories(far_owner, 40)
    write_vectors(near_owner, [(i, 1, "0" * 64, clustered(center, 0.01, rng)) for i in near_ids], ENCODER.tuple)
    write_vectors(far_owner, [(i, 1, "0" * 64, clustered(center, 0.2, rng)) for i in far_ids], ENCODER.tuple)
    query = "[" + ",".join(str(v) for v in center) + "]"
    sql = ("SELECT memory_id FROM recall_memoryvector WHERE space = %s"
           " ORDER BY embedding <=> %s::vector LIMIT 20")

    def search(tuned: bool) -> list:
        with owner_context(far_owner), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_indexscan = on")
            cursor.execute("SET LOCAL enable_bitmapscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
            if tuned:
                hnsw_session_settings(cursor)
            cursor.execute("EXPLAIN " + sql, [ENCODER.tuple.space, query])
            plan = "\n".join(row[0] for row in cursor.fetchall())
            assert "memoryvector_embedding_hnsw" in plan, plan
            cursor.execute(sql, [ENCODER.tuple.space, query])
            return [row[0] for row in cursor.fetchall()]

    assert len(search(tuned=False)) < 20
    tuned = search(tuned=True)
    assert len(tuned) == 20 and set(tuned) <= set(far_ids)


def test_hnsw_session_settings_take_a_callers_own_candidate_list(db, settings):
    settings.RECALL_HNSW_EF_SEARCH = 123
    with transaction.atomic(), connection.cursor() as cursor:
        hnsw_session_settings(cursor, ef_search=77)
        cursor.execute("SELECT '[1,2,3]'::vector")
        assert show(cursor, "hnsw.ef_search") == "77"

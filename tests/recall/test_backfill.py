"""Backfill of the semantic index: what is embedded, in which order, in bounded batches,
outside transactions, safe against concurrent changes; its Celery tasks and command."""
from __future__ import annotations

import hashlib
import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from pgvector.django import CosineDistance

from memory import services
from memory.domain import MemoryChanges
from memory.models import Memory
from recall import tasks
from recall.backfill import backfill_vectors, vectors_due
from recall.domain import memory_text
from recall.encoders import EncoderUnavailable, OpenAIEncoder
from recall.models import MemoryVector
from tests.conftest import WITH_OWNER_ALIAS
from tests.factories import T0, make_memory, make_owner
from tests.recall.test_encoders import KEY, EmbeddingServer, minilm_encoder
from tests.recall.test_vectors import HashEncoder, bulk_memories
from veetbot.rls import owner_context

LATER = T0 + timedelta(days=2)


def vectors_of(principal, encoder):
    with owner_context(principal):
        return {v.memory_id: v for v in MemoryVector.objects.filter(space=encoder.tuple.space)}


def texts_in_order(principal):
    with owner_context(principal):
        return [memory_text(s, t) for s, t in
                Memory.objects.order_by("creation_sequence").values_list("subject", "statement")]


def owner_with(count: int):
    principal, _ = make_owner()
    bulk_memories(principal, count)
    return principal


def test_backfill_embeds_every_active_original_once_oldest_first(db):
    principal = owner_with(7)
    encoder = HashEncoder()
    report = backfill_vectors(principal=principal, encoder=encoder, batch_items=3)
    assert (report.embedded, report.skipped_stale, report.remaining) == (7, 0, 0)
    assert [text for call in encoder.calls for text in call] == texts_in_order(principal)
    assert len(vectors_of(principal, encoder)) == 7
    assert report.space == encoder.tuple.space


def test_backfilled_vectors_carry_revision_and_the_digest_of_memory_text(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    encoder = HashEncoder()
    backfill_vectors(principal=principal, encoder=encoder)
    stored = vectors_of(principal, encoder)[memory.id]
    text = "weather units: The owner prefers Celsius for weather."
    assert encoder.calls == [[text]]
    assert stored.content_revision == 1 and stored.text_version == "memory-text@1"
    assert stored.text_sha256 == hashlib.sha256(text.encode()).hexdigest()


def test_encoder_batches_never_exceed_the_batch_size(db):
    principal = owner_with(10)
    encoder = HashEncoder()
    backfill_vectors(principal=principal, encoder=encoder, batch_items=4)
    assert [len(call) for call in encoder.calls] == [4, 4, 2]


def test_batch_size_defaults_to_the_setting(db, settings):
    settings.RECALL_BACKFILL_BATCH_ITEMS = 2
    principal = owner_with(5)
    encoder = HashEncoder()
    backfill_vectors(principal=principal, encoder=encoder)
    assert [len(call) for call in encoder.calls] == [2, 2, 1]


def test_a_second_run_embeds_nothing_even_after_usage_only_changes(db):
    principal = owner_with(3)
    encoder = HashEncoder()
    backfill_vectors(principal=principal, encoder=encoder)
    with owner_context(principal):
        ids = list(Memory.objects.values_list("id", flat=True))
    services.memory_record_usage(principal=principal, memory_ids=ids, now=LATER)
    services.memory_review(principal=principal, memory_id=ids[0], action="mark_reviewed", now=LATER)
    encoder.calls.clear()
    report = backfill_vectors(principal=principal, encoder=encoder)
    assert (report.embedded, report.remaining) == (0, 0) and encoder.calls == []


def test_a_revised_original_is_embedded_again_with_its_new_text(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    encoder = HashEncoder()
    backfill_vectors(principal=principal, encoder=encoder)
    services.memory_revise(principal=principal, memory_id=memory.id,
                           changes=MemoryChanges(statement="The owner prefers Kelvin."), now=LATER)
    encoder.calls.clear()
    report = backfill_vectors(principal=principal, encoder=encoder)
    assert report.embedded == 1
    assert encoder.calls == [["weather units: The owner prefers Kelvin."]]
    assert vectors_of(principal, encoder)[memory.id].content_revision == 2


def test_a_vector_of_an_older_revision_counts_as_missing(db):
    from memory import hooks
    from recall import invalidation

    principal, _ = make_owner()
    memory = make_memory(principal)
    encoder = HashEncoder()
    backfill_vectors(principal=principal, encoder=encoder)
    registered = invalidation.drop_vectors in hooks._listeners
    hooks.unregister(invalidation.drop_vectors)  # as if a vector had outlived its revision
    try:
        services.memory_revise(principal=principal, memory_id=memory.id,
                               changes=MemoryChanges(statement="The owner prefers Kelvin."), now=LATER)
    finally:
        if registered:
            hooks.register(invalidation.drop_vectors)
    report = backfill_vectors(principal=principal, encoder=encoder)
    assert report.embedded == 1 and vectors_of(principal, encoder)[memory.id].content_revision == 2


def test_only_live_recallable_originals_are_embedded_active_and_expired(db):
    principal, _ = make_owner()
    active = make_memory(principal, "The owner likes jazz.", message="I like jazz.")
    expired = make_memory(principal, "The owner likes rock.", message="I like rock.")
    retracted = make_memory(principal, "The owner likes pop.", message="I like pop.")
    erased = make_memory(principal, "The owner likes folk.", message="I like folk.")
    services.memory_revise(principal=principal, memory_id=expired.id,
                           changes=MemoryChanges(status="expired"), now=LATER)
    services.memory_reject(principal=principal, memory_id=retracted.id, now=LATER)
    services.memory_erase(principal=principal, memory_id=erased.id, now=LATER)
    encoder = HashEncoder()
    report = backfill_vectors(principal=principal, encoder=encoder)
    # Expired content is what a dated recall inside its validity window selects.
    assert report.embedded == 2 and set(vectors_of(principal, encoder)) == {active.id, expired.id}


def test_a_remote_encoder_is_never_given_sensitive_or_restricted_text(db):
    principal, _ = make_owner()
    public = make_memory(principal, "The owner likes jazz.", message="I like jazz.", sensitivity="public")
    internal = make_memory(principal, "The owner likes rock.", message="I like rock.", sensitivity="internal")
    make_memory(principal, "The owner has a condition.", message="I have a condition.", sensitivity="sensitive")
    make_memory(principal, "The owner's PIN is 1234.", message="My PIN is 1234.", sensitivity="restricted")
    remote = HashEncoder(provider="openai")
    report = backfill_vectors(principal=principal, encoder=remote)
    sent = [text for call in remote.calls for text in call]
    assert report.embedded == 2 and set(vectors_of(principal, remote)) == {public.id, internal.id}
    assert not any("condition" in text or "PIN" in text for text in sent)
    local = HashEncoder(provider="local")
    assert backfill_vectors(principal=principal, encoder=local).embedded == 4


def test_backfill_touches_only_its_owners_originals(db):
    principal, other = owner_with(2), owner_with(3)
    encoder = HashEncoder()
    backfill_vectors(principal=principal, encoder=encoder)
    assert len(vectors_of(principal, encoder)) == 2
    assert vectors_of(other, encoder) == {}
    assert vectors_due(principal=other, encoder=encoder) == 3


class RevisingEncoder(HashEncoder):
    """Revises an original while its batch is being encoded, as a concurrent owner would."""

    def __init__(self, principal, memory_id):
        super().__init__()
        self.principal, self.memory_id, self.revised = principal, memory_id, False

    def encode(self, texts):
        if not self.revised:
            self.revised = True
            services.memory_revise(principal=self.principal, memory_id=self.memory_id,
                                   changes=MemoryChanges(statement="The owner prefers Kelvin."), now=LATER)
        return super().encode(texts)


def test_a_change_during_encoding_makes_the_row_stale_and_the_next_run_embeds_it(db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    encoder = RevisingEncoder(principal, memory.id)
    report = backfill_vectors(principal=principal, encoder=encoder)
    assert (report.embedded, report.skipped_stale, report.remaining) == (0, 1, 1)
    assert vectors_of(principal, encoder) == {}
    again = backfill_vectors(principal=principal, encoder=encoder)
    assert again.embedded == 1 and vectors_of(principal, encoder)[memory.id].content_revision == 2


class WritingEncoder(HashEncoder):
    """Adds a new original while every batch is being encoded."""

    def __init__(self, principal):
        super().__init__()
        self.principal, self.added = principal, 0

    def encode(self, texts):
        self.added += 1
        make_memory(self.principal, f"The owner learned new fact {self.added}.", message=f"New fact {self.added}.")
        return super().encode(texts)


def test_new_writes_never_starve_old_originals(db):
    principal = owner_with(6)
    oldest = texts_in_order(principal)
    encoder = WritingEncoder(principal)
    report = backfill_vectors(principal=principal, encoder=encoder, batch_items=2, max_items=4)
    assert report.embedded == 4
    assert [t for call in encoder.calls for t in call] == oldest[:4]
    encoder.calls.clear()
    backfill_vectors(principal=principal, encoder=encoder, batch_items=2, max_items=2)
    assert [t for call in encoder.calls for t in call] == oldest[4:6]  # old ones before the new ones


def test_a_limited_run_reports_what_remains_and_the_next_run_resumes(db):
    principal = owner_with(5)
    encoder = HashEncoder()
    first = backfill_vectors(principal=principal, encoder=encoder, batch_items=2, max_items=3)
    assert (first.embedded, first.remaining) == (3, 2)
    assert [len(call) for call in encoder.calls] == [2, 1]
    second = backfill_vectors(principal=principal, encoder=encoder, batch_items=2)
    assert (second.embedded, second.remaining) == (2, 0)
    assert [t for call in encoder.calls for t in call] == texts_in_order(principal)


def test_a_reported_cursor_continues_after_the_last_original_read(db):
    principal = owner_with(4)
    encoder = HashEncoder()
    first = backfill_vectors(principal=principal, encoder=encoder, max_items=2)
    encoder.calls.clear()
    backfill_vectors(principal=principal, encoder=encoder, after=first.cursor)
    assert [t for call in encoder.calls for t in call] == texts_in_order(principal)[2:]


class FailingEncoder(HashEncoder):
    def __init__(self, fail_on_call: int):
        super().__init__()
        self.fail_on_call = fail_on_call

    def encode(self, texts):
        if len(self.calls) + 1 == self.fail_on_call:
            self.calls.append([])
            raise EncoderUnavailable("embedding endpoint timed out")
        return super().encode(texts)


def test_an_encoder_failure_keeps_written_batches_and_reports_why_it_stopped(db):
    principal = owner_with(5)
    encoder = FailingEncoder(fail_on_call=2)
    report = backfill_vectors(principal=principal, encoder=encoder, batch_items=2)
    assert (report.embedded, report.remaining, report.stopped) == (2, 3, "embedding endpoint timed out")
    assert len(vectors_of(principal, encoder)) == 2


def test_progress_is_reported_per_batch(db):
    principal = owner_with(5)
    seen = []
    backfill_vectors(principal=principal, encoder=HashEncoder(), batch_items=2,
                     progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert seen == [("embedding", 2, 5), ("embedding", 4, 5), ("embedding", 5, 5)]


class TransactionProbe(HashEncoder):
    def encode(self, texts):
        self.in_transaction = connection.in_atomic_block or (
            connection.connection is not None and connection.connection.info.transaction_status != 0)
        return super().encode(texts)


def test_encoding_happens_outside_any_transaction(live_db):
    principal = owner_with(3)
    encoder = TransactionProbe()
    report = backfill_vectors(principal=principal, encoder=encoder)
    assert report.embedded == 3 and encoder.in_transaction is False


# --- Celery tasks ------------------------------------------------------------------------


@pytest.fixture
def remote_encoder(settings, monkeypatch):
    """Configure the OpenAI-compatible encoder against a real loopback server."""
    monkeypatch.setenv("VEETBOT_OPENAI_KEY", KEY)
    with EmbeddingServer("shuffled") as server:
        settings.RECALL_ENCODER = "openai"
        settings.RECALL_OPENAI_BASE_URL = server.url
        settings.RECALL_OPENAI_MODEL = "test-embedding-small"
        yield server


def test_scheduled_backfill_does_nothing_while_semantic_recall_is_off(db, settings, remote_encoder):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = False
    principal = owner_with(2)
    result = tasks.backfill_vectors_all.delay().get()
    assert result["enabled"] is False and result["embedded"] == 0
    assert remote_encoder.requests == []
    assert tasks.backfill_vectors_owner.delay(str(principal.tenant_id), str(principal.principal_id)).get()[
        "enabled"] is False


def test_scheduled_backfill_embeds_every_owner_with_the_configured_encoder(db, settings, remote_encoder):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    first, second = owner_with(2), owner_with(3)
    result = tasks.backfill_vectors_all.delay().get()
    encoder = OpenAIEncoder()
    assert result["enabled"] is True and result["embedded"] == 5 and result["remaining"] == 0
    assert result["space"] == encoder.tuple.space
    assert len(vectors_of(first, encoder)) == 2 and len(vectors_of(second, encoder)) == 3
    assert sum(len(body["input"]) for body in remote_encoder.requests) == 5


def test_scheduled_backfill_bounds_each_owners_run(db, settings, remote_encoder):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    first, second = owner_with(3), owner_with(3)
    result = tasks.backfill_vectors_all.delay(max_items_per_owner=2).get()
    assert (result["owners"], result["embedded"], result["remaining"]) == (2, 4, 2)


def test_owner_task_backfills_one_owner(db, settings, remote_encoder):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    principal, other = owner_with(2), owner_with(1)
    result = tasks.backfill_vectors_owner.delay(str(principal.tenant_id), str(principal.principal_id)).get()
    assert (result["embedded"], result["remaining"]) == (2, 0)
    assert vectors_of(other, OpenAIEncoder()) == {}


# --- command -----------------------------------------------------------------------------


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("backfill_vectors", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@WITH_OWNER_ALIAS
def test_command_uses_the_configured_encoder_even_while_semantic_recall_is_off(db, settings, remote_encoder):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = False
    principal = owner_with(3)
    out, err = run("--owner", principal.label, "--json")
    summary = json.loads(out)
    assert set(summary) == {"embedded", "skipped_stale", "skipped_egress", "remaining", "seconds", "space"}
    assert (summary["embedded"], summary["skipped_stale"], summary["remaining"]) == (3, 0, 0)
    assert summary["space"] == OpenAIEncoder().tuple.space
    assert err == ""  # no progress bar when stderr is not a terminal


@WITH_OWNER_ALIAS
def test_command_honours_batch_and_limit(db, remote_encoder):
    principal = owner_with(5)
    out, _ = run("--owner", principal.label, "--json", "--batch", "2", "--limit", "3")
    assert [len(body["input"]) for body in remote_encoder.requests] == [2, 1]
    assert (json.loads(out)["embedded"], json.loads(out)["remaining"]) == (3, 2)


@WITH_OWNER_ALIAS
def test_command_prints_a_human_summary(db, remote_encoder):
    principal = owner_with(1)
    out, _ = run("--owner", principal.label)
    assert out.startswith(f"Embedded 1 originals of {principal.label}")


@WITH_OWNER_ALIAS
def test_command_draws_progress_on_a_terminal(db, remote_encoder, monkeypatch):
    principal = owner_with(3)

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    err = Terminal()
    call_command("backfill_vectors", "--owner", principal.label, "--batch", "2", stdout=io.StringIO(), stderr=err)
    assert "embedding" in err.getvalue() and "3/3" in err.getvalue()


def test_command_fails_with_the_encoders_reason_and_keeps_progress(db, settings, monkeypatch):
    monkeypatch.setenv("VEETBOT_OPENAI_KEY", KEY)
    principal = owner_with(2)
    with EmbeddingServer("http_500") as server:
        settings.RECALL_ENCODER = "openai"
        settings.RECALL_OPENAI_BASE_URL = server.url
        with pytest.raises(CommandError, match="encoder unavailable: embedding endpoint answered HTTP 500"):
            run("--owner", principal.label)
        assert len(server.requests) == 1


def test_command_refuses_a_malformed_owner(db):
    with pytest.raises(CommandError, match="--owner"):
        run("--owner", "not-an-owner")


@WITH_OWNER_ALIAS
@pytest.mark.slow
def test_minilm_backfill_makes_the_owners_memories_searchable(db, settings):
    settings.RECALL_ENCODER = "minilm"
    encoder = minilm_encoder()
    principal, _ = make_owner()
    celsius = make_memory(principal)
    make_memory(principal, "The owner grows tomatoes on the balcony.", subject="garden", message="I grow tomatoes.")
    make_memory(principal, "The owner drinks oat-milk flat whites.", subject="coffee", message="Oat flat white.")
    out, _ = run("--owner", principal.label, "--json")
    assert json.loads(out)["embedded"] == 3 and json.loads(out)["space"] == encoder.tuple.space
    (query,) = encoder.encode(["which temperature scale should the weather report use"])
    with owner_context(principal):
        nearest = (MemoryVector.objects.filter(space=encoder.tuple.space)
                   .order_by(CosineDistance("embedding", query)).values_list("memory_id", flat=True).first())
    assert nearest == celsius.id

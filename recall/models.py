"""Rows owned by recall: the semantic index and content-free recall traces.

Both are owner-scoped with forced row-level security (see the migrations). Neither
holds source prose: a vector is derived navigation data keyed to one content revision
of one original, and a trace holds only IDs, names and digests.
"""
from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from pgvector.django import VectorField

EMBEDDING_DIMENSIONS = 384


class MemoryVector(models.Model):
    """One embedding of one content revision of one original in one embedding space.

    The space is the embedding tuple (provider, model, model revision, dimensions,
    text version); ``space`` is its digest. A vector is valid only while its
    ``content_revision`` equals the original's, and retrieval rejoins on that equality.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant_id = models.UUIDField()
    principal_id = models.UUIDField()
    memory = models.ForeignKey("memory.Memory", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")
    content_revision = models.PositiveIntegerField()
    space = models.CharField(max_length=64)  # a SHA-256 hex digest
    # The tuple as the encoder names it (an operator sets RECALL_OPENAI_MODEL to anything):
    # unbounded, so no configuration can fail a write (migration 0005).
    provider = models.CharField()
    model = models.CharField()
    model_revision = models.CharField()
    dimensions = models.PositiveSmallIntegerField()
    text_version = models.CharField()
    text_sha256 = models.CharField(max_length=64)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "space"], name="memoryvector_memory_space_unique")]


class RecallTrace(models.Model):
    """What one recall did, without what it read: policy, mode, channel and opaque IDs.

    ``policy`` is the list of registered tags of the stages that ran (``recall.policy``),
    never empty. The other short codes come from closed vocabularies (``recall.domain``)
    whose longest member a test holds against each column (tests/test_bounded_columns.py).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant_id = models.UUIDField()
    principal_id = models.UUIDField()
    created_at = models.DateTimeField()
    surface = models.CharField(max_length=20)  # recall.domain.Surface
    policy = ArrayField(models.TextField())
    selection_mode = models.CharField(max_length=20)
    channel = models.CharField(max_length=10)
    requested_channel = models.CharField(max_length=10)
    fallback_reason = models.CharField(max_length=40, blank=True)
    space = models.CharField(max_length=64, blank=True)
    ceiling = models.CharField(max_length=12)
    max_items = models.PositiveSmallIntegerField()
    max_tokens = models.PositiveIntegerField()
    as_of = models.DateTimeField(null=True)
    candidate_ids = ArrayField(models.UUIDField(), default=list)
    dense_ids = ArrayField(models.UUIDField(), default=list)
    ranked_ids = ArrayField(models.UUIDField(), default=list)
    rendered_ids = ArrayField(models.UUIDField(), default=list)
    rendered_sha256 = models.CharField(max_length=64)
    rendered_tokens = models.PositiveIntegerField()
    elapsed_ms = models.FloatField()
    # recall.domain.SemanticSearch: how the semantic arm searched ("" when it did not run).
    semantic_search = models.CharField(max_length=20, blank=True, default="", db_default="")
    # recall.ranking.floor: the similarity floor in force (null: none applied) and how many ranked
    # originals it withheld from rendering.
    floor_min_similarity = models.FloatField(null=True)
    floor_withheld = models.PositiveIntegerField(default=0, db_default=0)
    # recall.excerpts: the SHA-256 of each source excerpt rendered, in rendering order (never
    # the text; empty when excerpts are off or none was rendered).
    excerpt_sha256 = ArrayField(models.CharField(max_length=64), default=list, db_default=[])

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(policy__len__gt=0), name="recalltrace_policy_nonempty")]


class ContextSnapshot(models.Model):
    """A conversation's frozen memory prefix: its first turn's rendered records, stored once.

    ``prefix`` is the only prose (the rendered records, emptied — ``withheld_at`` — when an
    original or derived item it copies is erased, and deleted with the conversation);
    everything else is content free. ``items`` are the frozen references (ID, kind, the
    content and operation revisions rendered), ``frozen_ids`` those IDs plus every original a
    derived item depends on: what the erasure fence matches. One per session.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant_id = models.UUIDField()
    principal_id = models.UUIDField()
    session_id = models.UUIDField()
    created_at = models.DateTimeField()
    prefix = models.TextField(blank=True)
    prefix_sha256 = models.CharField(max_length=64)
    prefix_tokens = models.PositiveIntegerField()
    withheld_at = models.DateTimeField(null=True, blank=True)
    items = models.JSONField(default=list)
    frozen_ids = ArrayField(models.UUIDField(), default=list)
    # The filters every turn of the conversation shares (recall.domain values).
    ceiling = models.CharField(max_length=12)
    scope = models.CharField(max_length=150)
    selection_mode = models.CharField(max_length=20)
    belief_types = ArrayField(models.CharField(max_length=20), default=list)
    turns = models.PositiveIntegerField(default=0)
    trace_ids = ArrayField(models.UUIDField(), default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant_id", "principal_id", "session_id"],
                                               name="contextsnapshot_one_per_session")]


class ContextTurn(models.Model):
    """One turn of a snapshotted conversation: content free. What the turn context delivered
    beyond the prefix (frozen references), the corrections it reported (IDs and reason codes)
    and the SHA-256 of its text — never the text."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant_id = models.UUIDField()
    principal_id = models.UUIDField()
    snapshot = models.ForeignKey(ContextSnapshot, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")
    turn = models.PositiveIntegerField()
    created_at = models.DateTimeField()
    items = models.JSONField(default=list)
    corrections = models.JSONField(default=list)
    context_sha256 = models.CharField(max_length=64)
    trace_ids = ArrayField(models.UUIDField(), default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["snapshot", "turn"], name="contextturn_unique")]


class CitationReport(models.Model):
    """The citations the assistant reported for one turn and what each did (content free:
    the cited strings are ID prefixes, the outcomes closed codes). A replay of the same
    Idempotency-Key re-renders this row."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant_id = models.UUIDField()
    principal_id = models.UUIDField()
    turn = models.ForeignKey(ContextTurn, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")
    created_at = models.DateTimeField()
    outcomes = models.JSONField(default=list)

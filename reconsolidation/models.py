"""Rows of reconsolidation. No business rules here beyond field constraints: writes live in
``reconsolidation.store`` and the modules it composes.

Every table is owner-scoped (``tenant_id``, ``principal_id``) with forced row-level
security, and every reference to another owner row is an owner-bound composite foreign
key added in SQL (``reconsolidation/migrations/0002``), so Django's single-column
constraints are off (``db_constraint=False``).

Only ``DerivedMemory`` holds prose (its erasable clauses). Everything else is content
free — opaque IDs, content revisions, SHA-256 digests, counters, finite reason codes — so
the staff context may read jobs, groups, receipts, spend, operation metadata and audit.

Reason codes, audit event names and the lease owner label are composed in many places
(``f"group_{outcome}"``, a worker's host and pid, ...), so their columns are unbounded
``varchar`` (migration 0005): no composition can fail or be cut. Short codes from the
closed tuples below keep their bounded columns; a test holds each tuple's longest member
against its column (tests/test_bounded_columns.py).
``ReconsolidationBlock`` holds claim signatures only; they are not staff readable because
a hash of a short claim can be confirmed by guessing.
"""
from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from memory.models import OwnedModel, owner_fk
from memory.vocabulary import choices
from reconsolidation.domain import OPERATION_KINDS, OPERATION_STATES

JOB_STATES = ("open", "completed")
GROUP_STATES = ("pending", "leased", "completed", "no_change", "stale", "failed")
GROUP_ACTIVE_STATES = ("pending", "leased")
# The only transitions; a trigger in migration 0002 enforces the same table in SQL.
OPERATION_TRANSITIONS = {
    "proposed": {"committed", "rejected", "stale"},
    "committed": {"invalidated", "undone"},
}
DERIVED_KINDS = ("summary", "hypothesis")
DERIVED_STATUSES = ("active", "invalidated", "erased")
DERIVED_INITIAL_UTILITY = 0.5
BLOCK_REASONS = ("owner_undo", "owner_rejection")
SPEND_STATES = ("reserved", "settled", "unknown")
LANES = ("changed", "full")
# ``queued``: scanned, and the generation's model lane has not reached it yet (it will).
ANCHOR_OUTCOMES = ("grouped", "duplicate", "no_neighbours", "not_selected", "excluded", "queued")
# Where a group came from: a neighbour lookup (model work) or the exact-key pass (no model).
GROUP_ORIGINS = ("neighbours", "equivalence")
# The model lane of a generation: from its rotated start key to the watermark, then from
# the first key up to the start key, then done.
MODEL_PHASES = (0, 1, 2)
MONEY = {"max_digits": 14, "decimal_places": 8}


class ReconsolidationJob(OwnedModel):
    """One owner's durable daily work and the lease that admits exactly one worker to it.

    The inventory cursors live here and are carried into the next job, so a missed day
    continues the unfinished scan instead of queueing another identical one.
    """

    policy = models.CharField(max_length=40)
    due_day = models.DateField()
    state = models.CharField(max_length=10, choices=choices(JOB_STATES))
    revision = models.PositiveIntegerField(default=1)
    attempt_count = models.PositiveIntegerField(default=0)
    # The lease: one token per slice. A slice keeps the UTC day of its start for spend.
    lease_owner = models.CharField(blank=True)
    lease_token = models.UUIDField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    slice_started_at = models.DateTimeField(null=True, blank=True)
    # Full lane: (creation_sequence, id) keyset pinned to the generation's high watermark.
    full_generation = models.PositiveIntegerField(default=0)
    full_high_watermark = models.BigIntegerField(default=0)
    full_start_key = models.BigIntegerField(default=1)
    full_cursor_sequence = models.BigIntegerField(default=0)
    full_change_watermark = models.BigIntegerField(default=0)
    generation_started_at = models.DateTimeField(null=True, blank=True)
    # Changed lane: the last consumed change-journal seq.
    changed_cursor_seq = models.BigIntegerField(default=0)
    # Model lane (migration 0006): the generation it belongs to (a new generation restarts
    # it at the rotated start key), its phase and last creation_sequence, and how many
    # anchors it has decided in that generation.
    model_generation = models.PositiveIntegerField(default=0, db_default=0)
    model_phase = models.PositiveSmallIntegerField(default=0, db_default=0)
    model_cursor_sequence = models.BigIntegerField(default=0, db_default=0)
    model_anchors = models.PositiveIntegerField(default=0, db_default=0)
    # Coverage counters of the current generation (scan and selection are reported apart).
    full_scanned = models.PositiveIntegerField(default=0)
    changed_scanned = models.PositiveIntegerField(default=0)
    excluded = models.PositiveIntegerField(default=0)
    groups_queued = models.PositiveIntegerField(default=0)
    not_selected = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "due_day", "policy"], name="reconjob_owner_day_policy_unique"),
            models.CheckConstraint(condition=Q(state__in=JOB_STATES), name="reconjob_state_valid"),
            models.CheckConstraint(condition=Q(full_cursor_sequence__lte=models.F("full_high_watermark")), name="reconjob_cursor_within_watermark"),
        ]
        indexes = [models.Index(fields=["tenant_id", "principal_id", "policy", "state", "due_day"], name="reconjob_due")]


class ReconsolidationGroup(OwnedModel):
    """Queued model work: a bounded set of source IDs and revisions, never their text."""

    job = owner_fk("reconsolidation.ReconsolidationJob", "groups")
    policy = models.CharField(max_length=40)
    anchor_id = models.UUIDField()
    lane = models.CharField(max_length=10, choices=choices(LANES))
    input_ids = ArrayField(models.UUIDField())  # sorted
    input_revisions = ArrayField(models.PositiveIntegerField())  # aligned with input_ids
    input_digest = models.CharField(max_length=64)
    fence_generation = models.BigIntegerField()
    state = models.CharField(max_length=10, choices=choices(GROUP_STATES))
    attempt_count = models.PositiveSmallIntegerField(default=0)  # claims
    retry_count = models.PositiveSmallIntegerField(default=0)  # failed attempts
    reason = models.CharField(blank=True)
    origin = models.CharField(max_length=12, choices=choices(GROUP_ORIGINS), default="neighbours",
                              db_default="neighbours")
    lease_token = models.UUIDField(null=True, blank=True)
    leased_at = models.DateTimeField(null=True, blank=True)
    # The slice (lease token) that last claimed it: that slice never claims it again, so a
    # deferral or a failure backs off to the next slice (migration 0007).
    claimed_slice_token = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "policy", "input_digest"], name="recongroup_owner_policy_digest_unique"),
            models.CheckConstraint(condition=Q(state__in=GROUP_STATES), name="recongroup_state_valid"),
        ]


class ReconsolidationAnchorReceipt(OwnedModel):
    """The latest durable inventory outcome of one original: grouped, duplicate,
    no_neighbours, not_selected (overflow) or excluded, with a content-free reason.
    One row per original (upserted), so receipts stay bounded by the bank's size."""

    job = owner_fk("reconsolidation.ReconsolidationJob", "anchor_receipts")
    policy = models.CharField(max_length=40)
    memory_id = models.UUIDField()
    content_revision = models.PositiveIntegerField()
    lane = models.CharField(max_length=10, choices=choices(LANES))
    generation = models.PositiveIntegerField()
    # The last generation whose full lane visited this original (0: never).
    full_generation = models.PositiveIntegerField(default=0)
    # The last generation whose model lane decided this original (0: never); a later scan
    # visit in that generation keeps the model lane's outcome.
    model_generation = models.PositiveIntegerField(default=0, db_default=0)
    outcome = models.CharField(max_length=15, choices=choices(ANCHOR_OUTCOMES))
    reason = models.CharField(blank=True)
    group_id = models.UUIDField(null=True, blank=True)
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "policy", "memory_id"], name="reconreceipt_owner_memory_unique"),
        ]


class ReconsolidationEquivalenceBacklog(OwnedModel):
    """An exact-key set found by a slice and not yet planned: the durable carry-over of the
    equivalence pass to the next slice. One row per equivalence digest (the generated
    ``memory_memory.recon_equivalence_digest``, migration 0006). A digest of a short claim
    can be confirmed by guessing, so the table is not staff readable."""

    job = owner_fk("reconsolidation.ReconsolidationJob", "equivalence_backlog")
    key_digest = models.CharField(max_length=64)
    generation = models.PositiveIntegerField()
    queued_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "key_digest"], name="reconequiv_owner_digest_unique"),
        ]
        indexes = [models.Index(fields=["tenant_id", "principal_id", "queued_at", "key_digest"], name="reconequiv_by_age")]


class ReconsolidationOperation(OwnedModel):
    """One proposed or committed operation over supplied inputs. Kind and input identities
    never change; state moves only along ``OPERATION_TRANSITIONS``."""

    group = owner_fk("reconsolidation.ReconsolidationGroup", "operations")
    kind = models.CharField(max_length=20, choices=choices(OPERATION_KINDS))
    state = models.CharField(max_length=12, choices=choices(OPERATION_STATES))
    revision = models.PositiveIntegerField(default=1)
    policy = models.CharField(max_length=40)
    model_identity = models.CharField(max_length=64)  # digest of provider/model/pricing
    evidence_identity = models.CharField(max_length=64)  # digest of the sorted leaf events
    input_ids = ArrayField(models.UUIDField())
    input_revisions = ArrayField(models.PositiveIntegerField())
    input_digest = models.CharField(max_length=64)
    slice_token = models.UUIDField()
    reason = models.CharField(blank=True)
    # summarize_related: the clause structure as source-ID lists only (no prose); the
    # clause text is re-read from the sources, at their exact revision, when committed.
    clause_sources = models.JSONField(default=list, blank=True)
    # An update: the committed operation this one replaces once approved (summary updates).
    supersedes = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField()
    committed_at = models.DateTimeField(null=True, blank=True)
    invalidated_at = models.DateTimeField(null=True, blank=True)
    undone_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "policy", "kind", "input_digest"], name="reconop_owner_input_unique"),
            models.CheckConstraint(condition=Q(kind__in=OPERATION_KINDS), name="reconop_kind_valid"),
            models.CheckConstraint(condition=Q(state__in=OPERATION_STATES), name="reconop_state_valid"),
        ]
        indexes = [
            models.Index(fields=["tenant_id", "principal_id", "-created_at", "-id"], name="reconop_list_order"),
            # What a slice reads on every commit (the queue, the live summaries, its own
            # operations) without scanning the owner's whole history of operations.
            models.Index(fields=["tenant_id", "principal_id", "state", "kind"], name="reconop_by_state"),
            models.Index(fields=["tenant_id", "principal_id", "slice_token"], name="reconop_by_slice"),
        ]


class ReconsolidationDependency(OwnedModel):
    """Complete support of an operation: one row per (source original, leaf event)."""

    operation = owner_fk("reconsolidation.ReconsolidationOperation", "dependencies")
    memory = owner_fk("memory.Memory", "+")
    content_revision = models.PositiveIntegerField()
    session_id = models.UUIDField()
    event = owner_fk("memory.Event", "+")
    evidence_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["operation", "memory", "event"], name="recondep_unique"),
        ]
        indexes = [models.Index(fields=["tenant_id", "principal_id", "memory"], name="recondep_by_source")]


class ReconsolidationMember(OwnedModel):
    """Reversible equivalence membership: originals survive, recall suppresses duplicates.
    A partial unique index (migration 0002) keeps a member in at most one active set."""

    operation = owner_fk("reconsolidation.ReconsolidationOperation", "members")
    canonical = owner_fk("memory.Memory", "+")
    member = owner_fk("memory.Memory", "+")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField()
    deactivated_at = models.DateTimeField(null=True, blank=True)


class DerivedMemory(OwnedModel):
    """A summary or hypothesis projection. Its clauses ``[{text, source_ids}]`` are the only
    prose in this app and are emptied on erasure; never staff readable."""

    operation = owner_fk("reconsolidation.ReconsolidationOperation", "derived")
    kind = models.CharField(max_length=10, choices=choices(DERIVED_KINDS))
    clauses = models.JSONField(default=list)
    subject = models.TextField(blank=True)
    belief_type = models.CharField(max_length=20)
    sensitivity = models.CharField(max_length=12)
    scope = models.CharField(max_length=150)
    portable = models.BooleanField()
    confidence = models.FloatField()
    evidence_at = models.DateTimeField()
    valid_from = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=choices(DERIVED_STATUSES))
    revision = models.PositiveIntegerField(default=1)
    store_position = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    erased_at = models.DateTimeField(null=True, blank=True)
    # Owner controls (reconsolidation.services.derived): review flags, a local-scope restriction
    # overlaid on the immutable projection (not here), retirement (not true). No prose.
    reviewed_at = models.DateTimeField(null=True, blank=True)
    dismissed_at = models.DateTimeField(null=True, blank=True)
    restricted_at = models.DateTimeField(null=True, blank=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    # Usage, never content (reconsolidation.services.derived.derived_record_usage): faithful,
    # unambiguous citations raise it (bounded at 1.0) and stamp last use. A projection starts
    # at DERIVED_INITIAL_UTILITY: it has not yet earned an owner-stated original's standing.
    utility = models.FloatField(default=DERIVED_INITIAL_UTILITY, db_default=DERIVED_INITIAL_UTILITY)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(utility__gte=0) & Q(utility__lte=1), name="reconderived_utility_range"),
            models.CheckConstraint(condition=Q(kind__in=DERIVED_KINDS), name="reconderived_kind_valid"),
            models.CheckConstraint(condition=Q(status__in=DERIVED_STATUSES), name="reconderived_status_valid"),
            models.CheckConstraint(condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="reconderived_confidence_range"),
        ]


class ReconsolidationBlock(OwnedModel):
    """A durable constraint against repeating what the owner undid or rejected.
    SHA-256 signatures only: independent of model and policy, no prose."""

    signature = models.CharField(max_length=64)
    reason = models.CharField(max_length=20, choices=choices(BLOCK_REASONS))
    operation_id = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "signature"], name="reconblock_signature_unique"),
            models.CheckConstraint(condition=Q(reason__in=BLOCK_REASONS), name="reconblock_reason_valid"),
            models.CheckConstraint(condition=Q(signature__regex=r"^[0-9a-f]{64}$"), name="reconblock_signature_sha256"),
        ]


class ReconsolidationSpend(OwnedModel):
    """One reservation per provider attempt, persisted before the request may be sent."""

    job = owner_fk("reconsolidation.ReconsolidationJob", "spend")
    group_id = models.UUIDField(null=True, blank=True)
    slice_token = models.UUIDField()
    day = models.DateField()
    request_digest = models.CharField(max_length=64)
    maximum_usd = models.DecimalField(**MONEY)
    settled_usd = models.DecimalField(null=True, blank=True, **MONEY)
    charged_usd = models.DecimalField(**MONEY)
    state = models.CharField(max_length=10, choices=choices(SPEND_STATES))
    call_audit = models.JSONField(null=True, blank=True)  # closed, content-free
    reserved_at = models.DateTimeField()
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "slice_token", "request_digest"], name="reconspend_slice_request_unique"),
            models.CheckConstraint(condition=Q(state__in=SPEND_STATES), name="reconspend_state_valid"),
            models.CheckConstraint(condition=Q(maximum_usd__gt=0), name="reconspend_maximum_positive"),
            models.CheckConstraint(
                condition=Q(charged_usd__gte=0) & Q(charged_usd__lte=models.F("maximum_usd")), name="reconspend_charge_within_maximum",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant_id", "principal_id", "day"], name="reconspend_owner_day"),
            models.Index(fields=["tenant_id", "principal_id", "slice_token"], name="reconspend_owner_slice"),
        ]


class ReconsolidationAudit(OwnedModel):
    """Content-free audit: what happened (event, reason code, counts), to which IDs, when."""

    job_id = models.UUIDField(null=True, blank=True)
    group_id = models.UUIDField(null=True, blank=True)
    operation_id = models.UUIDField(null=True, blank=True)
    event = models.CharField()
    reason = models.CharField(blank=True)
    counts = models.JSONField(default=dict)  # integers only
    recorded_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["tenant_id", "principal_id", "recorded_at"], name="reconaudit_owner_time")]


class DreamingPause(OwnedModel):
    """The owner's pause of dreaming: while ``paused``, no worker claims or renews this
    owner's lease (``pipeline.leases``). One row per owner, kept across resumes."""

    paused = models.BooleanField(default=False)
    changed_at = models.DateTimeField()
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant_id", "principal_id"], name="dreamingpause_one_per_owner")]

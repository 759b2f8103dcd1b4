"""Rows of the originals. No business rules here beyond field constraints: writes live in
``memory.services``, reads in ``memory.selectors``.

Every owner-scoped table carries ``tenant_id`` and ``principal_id`` and is protected by
a forced row-level-security policy (see the migrations). References between owner rows
are owner-bound composite foreign keys added in SQL, so Django's own single-column
constraints are switched off (``db_constraint=False``).
"""
from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models

from memory.vocabulary import (
    AUTHORITIES, BELIEF_TYPES, CLAIM_KINDS, DERIVATIONS, EVENT_KINDS, POLARITIES,
    SENSITIVITIES, STATUSES, choices,
)


class OwnedModel(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant_id = models.UUIDField()
    principal_id = models.UUIDField()

    class Meta:
        abstract = True


def owner_fk(to: str, related_name: str, *, db_index: bool = True) -> models.ForeignKey:
    """``db_index=False`` where a unique constraint that starts with this column already
    serves lookups by it: a second index would only cost every insert (a bank import)."""
    return models.ForeignKey(to, on_delete=models.DO_NOTHING, db_constraint=False, related_name=related_name,
                             db_index=db_index)


class Owner(OwnedModel):
    """An owner of a memory bank: the row behind an authenticated ``veetbot.identity.Principal``
    (that value names who acts; this row holds what the owner registered). The display name is
    the owner's own, so it is RLS-protected."""

    display_name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        db_table = "memory_principal"  # the table kept its first name
        constraints = [models.UniqueConstraint(fields=["tenant_id", "principal_id"], name="principal_owner_unique")]


class OwnerLock(OwnedModel):
    """The row every write for an owner locks first, and the owner's allocators.

    Allocating under this lock is what keeps ``creation_sequence`` gap-free and ordered by
    commit: a transaction that has not committed still holds the lock, so no later
    transaction can take a higher number and commit first past a saved cursor.
    """

    next_creation_sequence = models.BigIntegerField(default=1)
    next_journal_seq = models.BigIntegerField(default=1)
    next_store_position = models.BigIntegerField(default=1)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant_id", "principal_id"], name="ownerlock_owner_unique")]


class ErasureFence(OwnedModel):
    """Per-owner generation, bumped by every erasure; readers and derived work compare it."""

    generation = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant_id", "principal_id"], name="fence_owner_unique")]


class OwnerToken(OwnedModel):
    """A bearer credential. Only its SHA-256 is stored; the token is shown once at creation."""

    token_hash = models.CharField(max_length=64, unique=True)
    scopes = ArrayField(models.CharField(max_length=32))
    label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)


class StaffOwnerDirectory(OwnedModel):
    """Staff's content-free view of owners (migration 0004): no display name. Read-only,
    and empty outside the staff context."""

    created_at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = "memory_staffownerdirectory"


class StaffTokenDirectory(OwnedModel):
    """Staff's content-free view of owner tokens (migration 0004): no hash, no label."""

    scopes = ArrayField(models.CharField(max_length=32))
    created_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True)
    last_used_at = models.DateTimeField(null=True)

    class Meta:
        managed = False
        db_table = "memory_stafftokendirectory"


class Person(OwnedModel):
    name = models.TextField(blank=True)
    created_at = models.DateTimeField()
    erased_at = models.DateTimeField(null=True, blank=True)


class Session(OwnedModel):
    scope = models.CharField(max_length=150)
    started_at = models.DateTimeField()
    erased_at = models.DateTimeField(null=True, blank=True)


class Event(OwnedModel):
    session = owner_fk("memory.Session", "events")
    kind = models.CharField(max_length=40, choices=choices(EVENT_KINDS))
    speaker = models.CharField(max_length=60)
    created_at = models.DateTimeField()
    # Email-style exclusion: the event stays for provenance but is never evidence.
    excluded = models.BooleanField(default=False)
    erased_at = models.DateTimeField(null=True, blank=True)


class EventPart(OwnedModel):
    """One ordered text part of an event, with a stable ID that beliefs cite."""

    event = owner_fk("memory.Event", "parts")
    position = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    text_sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["event", "position"], name="eventpart_position_unique")]


class Memory(OwnedModel):
    """An original belief. Content fields change only through the revision path."""

    subject = models.TextField(blank=True)
    statement = models.TextField(blank=True)
    belief_type = models.CharField(max_length=20, choices=choices(BELIEF_TYPES))
    claim_kind = models.CharField(max_length=20, choices=choices(CLAIM_KINDS))
    polarity = models.CharField(max_length=10, choices=choices(POLARITIES))
    derivation = models.CharField(max_length=10, choices=choices(DERIVATIONS))
    attribution = models.CharField(max_length=60)
    authority = models.CharField(max_length=10, choices=choices(AUTHORITIES))
    sensitivity = models.CharField(max_length=12, choices=choices(SENSITIVITIES))
    scope = models.CharField(max_length=150)
    portable = models.BooleanField()
    confidence = models.FloatField()
    evidence_at = models.DateTimeField()
    valid_from = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, blank=True)
    entity_ids = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    status = models.CharField(max_length=10, choices=choices(STATUSES))
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    content_revision = models.PositiveIntegerField(default=1)
    creation_sequence = models.BigIntegerField()
    store_position = models.BigIntegerField()
    # Usage: never a content change.
    utility = models.FloatField(default=1.0)
    last_used_at = models.DateTimeField(null=True, blank=True)
    decayed_at = models.DateTimeField(null=True, blank=True)
    # Review flags.
    reviewed_at = models.DateTimeField(null=True, blank=True)
    dismissed_at = models.DateTimeField(null=True, blank=True)
    review_rejected = models.BooleanField(default=False)
    # Hash of the normalized claim; survives erasure so rejections still match.
    claim_sha256 = models.CharField(max_length=64)
    erased_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "creation_sequence"], name="memory_creation_sequence_unique"),
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "store_position"], name="memory_store_position_unique"),
            models.CheckConstraint(condition=models.Q(confidence__gte=0) & models.Q(confidence__lte=1), name="memory_confidence_range"),
            models.CheckConstraint(condition=models.Q(content_revision__gte=1), name="memory_content_revision_positive"),
            models.CheckConstraint(
                condition=models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=models.F("valid_from")),
                name="memory_expiry_after_validity",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant_id", "principal_id", "-store_position", "id"], name="memory_list_order"),
            models.Index(fields=["tenant_id", "principal_id", "status", "expires_at"], name="memory_status_expiry"),
        ]


class MemorySource(OwnedModel):
    """Provenance: a belief cites one exact part of one event."""

    memory = owner_fk("memory.Memory", "sources", db_index=False)  # memorysource_unique leads with it
    event = owner_fk("memory.Event", "memory_sources")
    part = owner_fk("memory.EventPart", "memory_sources")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["memory", "part"], name="memorysource_unique")]


class MemoryRevision(OwnedModel):
    """The full content snapshot of one content revision (emptied by erasure)."""

    memory = owner_fk("memory.Memory", "revisions", db_index=False)  # memoryrevision_unique leads with it
    revision = models.PositiveIntegerField()
    snapshot = models.JSONField()
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "revision"], name="memoryrevision_unique")]


class ChangeJournal(OwnedModel):
    """Per-owner monotonic log of content changes, committed with the change it records.

    Content-free: opaque memory IDs and kinds only, so it outlives erasure and staff may read it.
    """

    KINDS = ("created", "revised", "retracted", "expired", "erased")

    seq = models.BigIntegerField()
    memory_id = models.UUIDField()
    kind = models.CharField(max_length=10, choices=choices(KINDS))
    content_revision = models.PositiveIntegerField()
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant_id", "principal_id", "seq"], name="changejournal_seq_unique")]


class Rejection(OwnedModel):
    """The owner said a claim is not true: its normalized hash blocks re-creating it."""

    claim_sha256 = models.CharField(max_length=64)
    memory_id = models.UUIDField(null=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant_id", "principal_id", "claim_sha256"], name="rejection_unique")]


class IdempotencyReceipt(OwnedModel):
    """A write's outcome under an Idempotency-Key. Holds digests and opaque IDs, never prose:
    a replay re-renders the resource it names, so erasure needs no receipt cleanup."""

    key_sha256 = models.CharField(max_length=64)
    request_sha256 = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    resource_kind = models.CharField(max_length=20)
    resource_id = models.UUIDField(null=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant_id", "principal_id", "key_sha256"], name="receipt_key_unique")]


SPEND_PURPOSES = ("encoder", "dreaming")


class SpendDay(OwnedModel):
    """What one owner's paid services cost on one UTC day, per purpose (a remote encoder's
    requests, dreaming's model requests): the row every reservation locks first, charged up to
    a request's maximum before it is sent and lowered to the verified bill after. Content free:
    amounts and counts only."""

    purpose = models.CharField(max_length=16, choices=choices(SPEND_PURPOSES))
    day = models.DateField()
    charged_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)
    reservations = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "principal_id", "purpose", "day"], name="spendday_owner_day"),
            models.CheckConstraint(condition=models.Q(charged_usd__gte=0), name="spendday_not_negative"),
            models.CheckConstraint(condition=models.Q(purpose__in=SPEND_PURPOSES), name="spendday_purpose_valid"),
        ]

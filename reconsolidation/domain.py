"""Domain values of reconsolidation: frozen, closed pydantic models free of the ORM.

Every value carries its owner (tenant/principal pair), uses aware UTC instants, UUIDs and
non-negative ``Decimal`` USD. The store translates rows into these by hand; nothing above
the store can lazy-load a row or write by accident. None of these values holds source
text except ``DerivedClause`` (and only the projection carries those).
"""
from __future__ import annotations

import hashlib
from datetime import date
from decimal import Decimal
from typing import Literal, Optional
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from reconsolidation import bounds

# end_superseded: a later statement about the same holder supersedes an earlier one; approving it
# ends the earlier belief's validity through the memory's own control (an update, undoable).
OPERATION_KINDS = ("merge_equivalent", "summarize_related", "infer_connection", "flag_conflict", "end_superseded")
OPERATION_STATES = ("proposed", "committed", "rejected", "stale", "invalidated", "undone")

Lane = Literal["changed", "full"]
GroupOutcome = Literal["completed", "no_change", "failed", "deferred", "stale"]
SettleOutcome = Literal["verified", "unknown"]
OperationKind = Literal["merge_equivalent", "summarize_related", "infer_connection", "flag_conflict", "end_superseded"]


class Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Owned(Value):
    tenant_id: UUID
    principal_id: UUID


class InputRef(Value):
    """One source original at one content revision: the identity of an input."""

    memory_id: UUID
    content_revision: int = Field(ge=1)


def sorted_inputs(inputs) -> tuple[InputRef, ...]:
    return tuple(sorted(inputs, key=lambda ref: str(ref.memory_id)))


def input_digest(inputs, policy: str = bounds.POLICY) -> str:
    """SHA-256 over the sorted (id, content_revision) pairs and the policy string."""
    refs = sorted_inputs(inputs)
    payload = "\n".join([policy, *(f"{ref.memory_id}:{ref.content_revision}" for ref in refs)])
    return hashlib.sha256(payload.encode()).hexdigest()


class JobLease(Owned):
    """The current lease of a job: proof that one worker may run one slice."""

    job_id: UUID
    lease_token: UUID
    lease_owner: str
    lease_expires_at: AwareDatetime
    slice_started_at: AwareDatetime
    slice_deadline_at: AwareDatetime  # slice start + RECON_SLICE_DEADLINE_SECONDS, never renewed
    spend_day: date  # the UTC day of the slice start: its spend bucket, across midnight too
    due_day: date
    attempt: int
    generation: int
    revision: int


class SourceRef(Value):
    """One row of an inventory lane: its keys and, when not eligible, why (content free)."""

    memory_id: UUID
    creation_sequence: int
    content_revision: int
    journal_seq: Optional[int] = None  # changed lane: the last journal entry for it in the page
    eligible: bool
    reason: str = ""  # empty when eligible


class SourcePage(Owned):
    """A bounded page of one lane after ``cursor``; ``next_cursor`` is the page's last key."""

    lane: Lane
    generation: int
    cursor: int
    next_cursor: int
    entries: int  # rows (full) or journal entries (changed) the page consumed
    items: tuple[SourceRef, ...]
    exhausted: bool  # nothing is left in the lane (up to its watermark/head)


class SlicePlan(Owned):
    """What one slice may consume: the bounded pages of both lanes from the job's cursors.
    A checkpoint recomputes these pages itself; the plan only names their extent."""

    job_id: UUID
    lease_token: UUID
    generation: int
    start_key: int
    paused: bool  # pending model work is at its cap: select nothing, keep both cursors
    pending_headroom: int
    full: SourcePage
    changed: SourcePage


class GroupDraft(Value):
    """A candidate group found for one anchor: the anchor plus at most 31 neighbours."""

    anchor_id: UUID
    lane: Lane
    inputs: tuple[InputRef, ...] = Field(min_length=2, max_length=bounds.RECON_GROUP_MAX_MEMBERS)
    input_digest: str


class Group(Owned):
    id: UUID
    job_id: UUID
    policy: str
    anchor_id: UUID
    lane: Lane
    inputs: tuple[InputRef, ...]
    input_digest: str
    fence_generation: int
    state: str
    attempt_count: int
    retry_count: int
    reason: str
    created_at: AwareDatetime


class GroupLease(Owned):
    """A claimed group under the job lease that claimed it."""

    group_id: UUID
    job_id: UUID
    lease_token: UUID
    inputs: tuple[InputRef, ...]
    input_digest: str
    fence_generation: int
    attempt: int
    slice_deadline_at: AwareDatetime
    spend_day: date


class CallAudit(Value):
    """The closed, content-free audit of one provider call: no prompt, response, source
    text, error message or credential can fit in it."""

    batch_id: UUID
    stage: Literal["proposal", "verification"]
    group_ids: tuple[UUID, ...] = Field(max_length=bounds.RECON_SLICE_MAX_GROUPS)
    provider: Literal["rules", "openai", "scripted"]
    model: str = Field(max_length=200, pattern=r"^[A-Za-z0-9._:/@-]+$")
    pricing_digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    egress_digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    admitted_at: AwareDatetime


class CallCompletion(Value):
    completed_at: AwareDatetime
    elapsed_ms: int = Field(ge=0)
    transport_outcome: Literal["completed", "timeout", "interrupted", "failed", "cancelled", "recovered_unknown"]
    input_tokens: Optional[int] = Field(default=None, ge=0)
    output_tokens: Optional[int] = Field(default=None, ge=0)


class Reservation(Owned):
    id: UUID
    job_id: UUID
    group_id: Optional[UUID]
    slice_token: UUID
    day: date
    request_digest: str
    maximum_usd: Decimal
    state: str
    reserved_at: AwareDatetime
    slice_charged_usd: Decimal  # the slice's charge including this reservation
    day_charged_usd: Decimal  # the day's charge including this reservation


class SpendReceipt(Owned):
    reservation_id: UUID
    day: date
    state: str
    maximum_usd: Decimal
    settled_usd: Optional[Decimal]
    charged_usd: Decimal
    released_usd: Decimal
    day_charged_usd: Decimal


class ClauseDraft(Value):
    text: str = Field(min_length=1, max_length=2000)
    source_ids: tuple[UUID, ...] = Field(min_length=1)


class Proposal(Value):
    """A locally validated operation to record. Sources are a subset of the group's inputs:
    the provider never chooses a source."""

    kind: OperationKind
    inputs: tuple[InputRef, ...] = Field(min_length=2, max_length=bounds.RECON_GROUP_MAX_MEMBERS)
    policy: str = bounds.POLICY
    model_identity: str = Field(pattern=r"^[0-9a-f]{64}$")
    reason: str = Field(default="", max_length=40, pattern=r"^[a-z0-9_]*$")
    # summarize_related: the extractive clauses; infer_connection: its one tentative clause;
    # end_superseded: the earlier statement and the later one (all checked against the locked sources).
    clauses: tuple[ClauseDraft, ...] = Field(default=(), max_length=bounds.RECON_SUMMARY_MAX_CLAUSES)
    # infer_connection only: the source-only verifier said supported (set by apply_review).
    verified: bool = False

    @model_validator(mode="after")
    def _shape(self) -> "Proposal":
        ids = [ref.memory_id for ref in self.inputs]
        if len(set(ids)) != len(ids):
            raise ValueError("inputs must be distinct")
        return self


class OperationView(Owned):
    """Operation metadata: kinds, states, identities and instants — no source text."""

    id: UUID
    group_id: UUID
    kind: OperationKind
    state: str
    revision: int
    policy: str
    model_identity: str
    evidence_identity: str
    inputs: tuple[InputRef, ...]
    input_digest: str
    reason: str
    created_at: AwareDatetime
    committed_at: Optional[AwareDatetime]
    invalidated_at: Optional[AwareDatetime]
    undone_at: Optional[AwareDatetime]


class OperationPage(Owned):
    items: tuple[OperationView, ...]
    next_cursor: Optional[str]


class InvalidationReceipt(Owned):
    reason: str
    source_ids: tuple[UUID, ...]
    invalidated: tuple[UUID, ...]  # committed -> invalidated
    staled: tuple[UUID, ...]  # proposed -> stale
    groups_staled: int


class Coverage(Value):
    """Scan coverage and model coverage, reported apart: one is never the other. A
    checkpoint's report reads only the scan and the waiting work; the job's model counts
    are None there ("not read", never 0) and read at the end of the slice."""

    generation: int
    generation_size: int  # creation keys up to the high watermark
    full_cursor: int
    full_scanned: int
    changed_scanned: int
    excluded: int
    scan_complete: bool
    groups_queued: int
    not_selected: int
    groups_pending: int  # the owner's model work waiting (pending or leased)
    # Failed attempts on the groups still waiting (each group has at most
    # RECON_MAX_GROUP_ATTEMPTS): one more, or a group ending, is progress.
    failed_attempts: int
    model_complete: bool  # nothing pending and nothing left unselected in this generation
    groups_processed: Optional[int] = None  # this job's groups: completed | no_change
    groups_failed: Optional[int] = None
    # Model coverage: the anchors with related originals this job found (grouped, queued,
    # not selected, or a duplicate naming its group) and those whose group the model processed.
    groupable_anchors: Optional[int] = None
    groupable_processed: Optional[int] = None
    # Model reach: the model-lane groups this job formed and those whose evidence a proposal
    # request actually carried to the provider. A group that ends with a durable outcome
    # without being sent (abstained, deferred, too large) counts in coverage, never in reach.
    groups_formed: Optional[int] = None
    groups_sent: Optional[int] = None

    @property
    def model_coverage(self) -> Optional[float]:
        return None if not self.groupable_anchors else self.groupable_processed / self.groupable_anchors

    @property
    def model_reach(self) -> Optional[float]:
        return None if not self.groups_formed else self.groups_sent / self.groups_formed


class SliceReport(Owned):
    job_id: UUID
    lease_token: UUID
    paused: bool  # pending model work at its cap: no anchor consumed, cursors kept
    full_anchors: int
    changed_anchors: int
    full_from: int
    full_through: int
    changed_from: int
    changed_through: int
    groups_queued: tuple[UUID, ...]
    duplicates: int
    no_neighbours: int
    not_selected: int
    excluded: int
    job_completed: bool
    coverage: Coverage

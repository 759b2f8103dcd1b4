"""Kind rules checked against locked sources, and what a committed operation writes.

Shared by ``operations.commit`` (recording a proposal) and ``review.approve`` (the owner
committing it): both hold the owner lock and the sources FOR UPDATE in sorted UUID order,
so every commit decides over the current rows, never over what a provider saw.

* ``validate`` — the kind's rules and the owner's rejections and blocks as commit gates
  (``blocks``): nothing is merged, summarised or connected over a claim the owner
  rejected or in a combination the owner undid or rejected.
* ``recorded_signatures`` — what undo, reject and "not true" install, from retained
  identities only, so each gate of ``validate`` has its block.
* ``overlap`` — a merge may supersede an active set wholly inside its inputs; any other
  overlap is refused (``overlapping_membership``) so the caller replans the union.
* ``apply`` — only when an operation becomes ``committed``. A similarity-only merge is
  never committed unattended (``similarity_only``). Originals are never touched and no
  corroboration is added.
"""
from __future__ import annotations

from contextvars import ContextVar
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from django.db.models import F

from memory.errors import Conflict
from memory.domain import MemoryChanges
from memory.models import Memory, MemoryRevision
from memory.services import memory_revise
from memory.services.owner_state import allocate
from reconsolidation.domain import ClauseDraft
from reconsolidation.models import (
    DerivedMemory, ReconsolidationDependency, ReconsolidationMember, ReconsolidationOperation,
)
from reconsolidation.rows import audit, owner_fields
from reconsolidation.providers.rules import paraphrase, summaries, updates
from reconsolidation.providers.rules.equivalence import all_equivalent, canonical, normalize
from reconsolidation.sources import SourceView, evidence_events
from reconsolidation.writers import blocks, hypotheses
from veetbot.identity import Principal


# The kinds that say something about their sources' claims; a conflict flag only records
# a disagreement, so it stays possible over a rejected claim's copy.
GATED_KINDS = ("merge_equivalent", "summarize_related", "infer_connection")


class ProposalRefused(Conflict):
    """Local rules refuse this one proposal; its siblings are unaffected."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def merge_signatures(principal: Principal, views: Sequence[SourceView]) -> set[str]:
    ids = [view.memory_id for view in views]
    events = evidence_events(principal, ids)
    return blocks.member_pairs(ids) | blocks.claim_event_pairs({v.memory_id: v.claim_sha256 for v in views}, events)


def summary_signature(views: Sequence[SourceView], clauses: Sequence[ClauseDraft]) -> str:
    return blocks.summary_claims(views[0].attribution, [clause.text for clause in clauses])


def summary_signatures(views: dict[UUID, SourceView], clauses: Sequence[ClauseDraft]) -> set[str]:
    """A summary's clause set and every pair of its clause claims (checked clauses: each
    names sources among ``views``, the first one the statement it copies)."""
    return {summary_signature(list(views.values()), clauses),
            *blocks.summary_claim_pairs(views[clause.source_ids[0]].claim_sha256 for clause in clauses)}


def hypothesis_signature(views: Sequence[SourceView], clause: ClauseDraft) -> str:
    return blocks.hypothesis_claim(views[0].attribution, clause.text)  # checked: one attribution


def validate(principal: Principal, kind: str, views: dict[UUID, SourceView], clauses: Sequence[ClauseDraft], *,
             now: Optional[datetime] = None) -> None:
    """Refuse (``ProposalRefused``) a ``kind`` over the locked ``views`` unless its rules hold.

    The owner's rejections are gates: no merge, summary or hypothesis over a source whose
    claim the owner rejected (a live copy of it). A merge needs one equivalence key over all
    inputs — or, for a paraphrase merge, every pair of inputs passing the local paraphrase
    guards (``providers.rules.paraphrase``) over the current rows — and no owner block on any
    member pair or claim/event pair; a summary needs extractive clauses
    (``summaries.check_clauses``) and neither a blocked clause set nor a blocked pair of
    clause claims; a conflict flag needs two sources; a hypothesis needs the stricter lane
    (``hypotheses.check``) and a wording that is neither blocked nor a rejected claim.
    """
    ordered = list(views.values())
    if kind in GATED_KINDS and blocks.any_rejected(view.claim_sha256 for view in ordered):
        raise ProposalRefused("claim_rejected_by_owner")
    if kind == "merge_equivalent":
        if not all_equivalent(ordered) and not paraphrase.match(ordered).ok:
            raise ProposalRefused("not_equivalent")
        if blocks.any_blocked(merge_signatures(principal, ordered)):
            raise ProposalRefused("blocked_by_owner")
    elif kind == "summarize_related":
        reason = summaries.check_clauses(clauses, views)
        if reason:
            raise ProposalRefused(reason)
        if blocks.any_blocked(summary_signatures(views, clauses)):
            raise ProposalRefused("blocked_by_owner")
    elif kind == "flag_conflict":
        if len(ordered) < 2:
            raise ProposalRefused("conflict_needs_two")
    elif kind == "end_superseded":
        reason = updates.check(clauses, views)
        if reason:
            raise ProposalRefused(reason)
    elif kind == "infer_connection":
        reason = hypotheses.check(principal, views, clauses, now)
        if reason:
            raise ProposalRefused(reason)
        if blocks.any_rejected(hypotheses.clause_claims(ordered, clauses[0].text)):
            raise ProposalRefused("claim_rejected_by_owner")
        if blocks.any_blocked([hypothesis_signature(ordered, clauses[0])]):
            raise ProposalRefused("blocked_by_owner")
    else:
        raise ProposalRefused("unknown_kind")


def overlap(ids: Sequence[UUID]) -> tuple[list[UUID], bool]:
    """(active merge operations holding any of ``ids``, whether all lie wholly inside)."""
    holders = sorted(set(ReconsolidationMember.objects.filter(member_id__in=list(ids), active=True)
                         .values_list("operation_id", flat=True)), key=str)
    if not holders:
        return [], True
    members = set(ReconsolidationMember.objects.filter(operation_id__in=holders, active=True)
                  .values_list("member_id", flat=True))
    return holders, members <= set(ids)


def check_overlap(ids: Sequence[UUID]) -> None:
    holders, inside = overlap(ids)
    if holders and not inside:
        raise ProposalRefused("overlapping_membership")


def _supersede(principal: Principal, holders: Sequence[UUID], by: UUID, now: datetime) -> None:
    ReconsolidationMember.objects.filter(operation_id__in=list(holders), active=True).update(
        active=False, deactivated_at=now)
    for row in ReconsolidationOperation.objects.select_for_update().filter(id__in=list(holders)).order_by("id"):
        row.state, row.invalidated_at, row.revision = "invalidated", now, row.revision + 1
        row.reason, row.updated_at = "superseded_by_union", now
        row.save(update_fields=["state", "invalidated_at", "revision", "reason", "updated_at"])
        audit(principal, "operation_superseded", now, reason="superseded_by_union", operation_id=row.id,
              counts={"by": 1})


# The operation whose approval or undo is changing an original right now: the change it makes
# is its own effect, so the invalidation that change publishes must not end it.
_APPLYING: ContextVar[Optional[UUID]] = ContextVar("reconsolidation_applying", default=None)


def own_effect(operation: ReconsolidationOperation, reason: str) -> bool:
    """Whether a source change is this operation's own doing: the revision its approval or undo
    writes, or — for an applied update — the earlier belief reaching the expiry it set."""
    return operation.id == _APPLYING.get() or (
        operation.kind == "end_superseded" and operation.state == "committed" and reason == "expired")


def _revise_ending(principal: Principal, operation: ReconsolidationOperation, memory_id: UUID,
                   changes: MemoryChanges, now: datetime) -> int:
    """One revision of an earlier belief through the memory's own service, as this operation's
    effect. The operation's identity (its recorded input revisions) never changes: the revision
    it wrote is recorded on its dependency edges, which is what undo and read-time validation
    hold the belief to afterwards. Returns that revision."""
    token = _APPLYING.set(operation.id)
    try:
        revised = memory_revise(principal=principal, memory_id=memory_id, changes=changes, now=now)
    finally:
        _APPLYING.reset(token)
    ReconsolidationDependency.objects.filter(operation_id=operation.id, memory_id=memory_id).update(
        content_revision=revised.content_revision)
    return revised.content_revision


def applied_revisions(operation: ReconsolidationOperation) -> dict[UUID, int]:
    """Each input's revision as an update last left it (its dependency edges)."""
    return dict(ReconsolidationDependency.objects.filter(operation_id=operation.id)
                .values_list("memory_id", "content_revision"))


def _end_earlier_belief(principal: Principal, operation: ReconsolidationOperation, views: dict[UUID, SourceView],
                        now: datetime) -> None:
    """Approve an update: every copy of the earlier statement ends when the later one began."""
    old_ids, (new_id,) = [UUID(str(i)) for i in operation.clause_sources[0]], operation.clause_sources[1]
    end = updates.end_of([views[i] for i in old_ids], views[UUID(str(new_id))])
    for memory_id in old_ids:
        _revise_ending(principal, operation, memory_id, MemoryChanges(expires_at=end), now)


def undo_update(principal: Principal, operation: ReconsolidationOperation, now: datetime) -> int:
    """Undo an applied update: each earlier belief gets back the expiry it had before (a new
    revision again, never a rewrite). Refuses when one was changed since (``changed_since``)."""
    old_ids = [UUID(str(i)) for i in operation.clause_sources[0]]
    recorded = applied_revisions(operation)
    current = dict(Memory.objects.filter(id__in=old_ids, erased_at__isnull=True).values_list("id", "content_revision"))
    if any(current.get(i) != recorded.get(i) for i in old_ids):
        raise Conflict("changed_since")
    for memory_id in old_ids:
        before = MemoryRevision.objects.get(memory_id=memory_id, revision=recorded[memory_id] - 1).snapshot
        expiry = before.get("expires_at")
        changes = (MemoryChanges(expires_at=datetime.fromisoformat(expiry)) if expiry
                   else MemoryChanges(clear_expiry=True))
        _revise_ending(principal, operation, memory_id, changes, now)
    return len(old_ids)


def _retire_superseded_summary(principal: Principal, operation_id: UUID, now: datetime) -> None:
    """An approved summary update replaces the committed summary it names: that one is
    invalidated and its projection purged, in the same transaction (never two live summaries
    of one holder). A summary no longer committed needs nothing."""
    row = ReconsolidationOperation.objects.select_for_update().filter(id=operation_id, state="committed").first()
    if row is None:
        return
    row.state, row.invalidated_at, row.revision = "invalidated", now, row.revision + 1
    row.reason, row.updated_at = "superseded_by_update", now
    row.save(update_fields=["state", "invalidated_at", "revision", "reason", "updated_at"])
    DerivedMemory.objects.filter(operation_id=row.id).exclude(status="erased").update(
        status="invalidated", clauses=[], subject="", updated_at=now, revision=F("revision") + 1)
    audit(principal, "operation_superseded", now, reason="superseded_by_update", operation_id=row.id,
          counts={"by": 1})


def clauses_of(operation: ReconsolidationOperation, views: dict[UUID, SourceView]) -> tuple[ClauseDraft, ...]:
    """The clause texts of a recorded summary, re-read from its sources (exact revisions);
    a hypothesis's verified wording, kept with its projection."""
    if operation.kind == "infer_connection":
        return hypotheses.stored_clause(operation)
    return tuple(
        ClauseDraft(text=normalize(views[UUID(ids[0])].statement), source_ids=tuple(UUID(i) for i in ids))
        for ids in operation.clause_sources
    )


def similarity_only(operation: ReconsolidationOperation, views: Sequence[SourceView]) -> bool:
    """A merge that only the local paraphrase guards support: no equivalence key, no verifier."""
    return (operation.kind == "merge_equivalent" and operation.reason in paraphrase.MATCH_CODES
            and not all_equivalent(views))


def apply(principal: Principal, operation: ReconsolidationOperation, views: dict[UUID, SourceView],
          now: datetime) -> None:
    """Move ``operation`` (locked, proposed) to committed and write what that means.

    A *similarity-only* merge (not one equivalence key; its reason a
    ``paraphrase.MATCH_CODES`` code, which no verifier has seen) is never committed by the
    unattended recording itself (``operations.commit`` checks ``similarity_only``): it stays
    ``proposed`` until the owner approves it. Otherwise: membership rows (merge), the
    ``DerivedMemory`` projection (summary, its UUID the operation's), nothing for a conflict
    flag (its dependencies are the record). Originals are never touched.
    """
    ordered = list(views.values())
    if operation.kind == "merge_equivalent":
        holders, inside = overlap(list(views))
        if holders and not inside:
            raise ProposalRefused("overlapping_membership")
        if holders:
            _supersede(principal, holders, operation.id, now)
        head = canonical(ordered)
        ReconsolidationMember.objects.bulk_create(
            ReconsolidationMember(**owner_fields(principal), operation_id=operation.id, canonical_id=head.memory_id,
                                  member_id=view.memory_id, active=True, created_at=now)
            for view in sorted(ordered, key=lambda v: str(v.memory_id))
        )
    elif operation.kind == "summarize_related":
        if operation.supersedes is not None:
            _retire_superseded_summary(principal, operation.supersedes, now)
        clauses = clauses_of(operation, views)
        meta = summaries.projection(ordered)
        DerivedMemory.objects.create(
            **owner_fields(principal), id=operation.id, operation_id=operation.id, kind="summary",
            clauses=[{"text": c.text, "source_ids": [str(i) for i in c.source_ids]} for c in clauses],
            subject=meta.subject, belief_type=meta.belief_type, sensitivity=meta.sensitivity, scope=meta.scope,
            portable=meta.portable, confidence=meta.confidence, evidence_at=meta.evidence_at,
            valid_from=meta.valid_from, expires_at=meta.expires_at, status="active", revision=1,
            store_position=allocate(principal, positions=1).store_position, created_at=now, updated_at=now,
        )
    elif operation.kind == "infer_connection":  # projection written when recorded; valid from commit
        DerivedMemory.objects.filter(operation_id=operation.id).update(valid_from=now, updated_at=now)
    elif operation.kind == "end_superseded":
        _end_earlier_belief(principal, operation, views, now)
    operation.state, operation.committed_at, operation.revision = "committed", now, operation.revision + 1
    operation.updated_at = now
    operation.save(update_fields=["state", "committed_at", "revision", "updated_at"])


def recorded_signatures(principal: Principal, operation: ReconsolidationOperation) -> set[str]:
    """The block signatures of a recorded operation, from retained identities only (claim
    hashes and dependency events survive erasure), so an owner can still undo or reject
    it after a source is gone; a hypothesis's from its verified wording while its
    projection holds it (until its operation is invalidated, when no review remains)."""
    ids = list(operation.input_ids)
    found = {blocks.exact(operation.kind, ids)}
    if operation.kind == "summarize_related":
        heads = [UUID(str(sources[0])) for sources in operation.clause_sources if sources]
        claims = dict(Memory.objects.filter(id__in=heads).values_list("id", "claim_sha256"))
        found |= blocks.summary_claim_pairs(claims[i] for i in heads if i in claims)
    elif operation.kind == "infer_connection":
        stored = hypotheses.stored_clause(operation)
        attribution = Memory.objects.filter(id__in=ids).values_list("attribution", flat=True).first()
        if stored and attribution is not None:
            found.add(blocks.hypothesis_claim(attribution, stored[0].text))
    elif operation.kind == "merge_equivalent":
        claims = dict(Memory.objects.filter(id__in=ids).values_list("id", "claim_sha256"))
        events: dict[UUID, list[UUID]] = {}
        for memory_id, event_id in ReconsolidationDependency.objects.filter(operation_id=operation.id).values_list(
                "memory_id", "event_id"):
            events.setdefault(memory_id, []).append(event_id)
        found |= blocks.member_pairs(ids)
        found |= blocks.claim_event_pairs({i: claims.get(i, "") for i in ids}, events)
    return found

"""Builders of the write-path tests: a claimed group over given originals, processed by
the real ``process_group``; approval through the real review service."""
from __future__ import annotations

from reconsolidation.domain import input_digest
from reconsolidation.models import DerivedMemory, ReconsolidationMember, ReconsolidationOperation
from reconsolidation.work.process import process_group
from tests.reconsolidation.helpers import refs
from reconsolidation.services.operations import operation_approve
from veetbot.rls import owner_context


def claimed_group(store, principal, memories, now, *, owner: str = "w"):
    lease = store.claim_due(principal, lease_owner=owner, now=now)
    store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(*memories),
                      input_digest=input_digest(refs(*memories)), now=now)
    return lease, store.claim_group(principal, lease_token=lease.lease_token, now=now)


def process(store, principal, memories, now):
    """Queue, claim and process one group over ``memories``; release the lease."""
    lease, group = claimed_group(store, principal, memories, now)
    assert group is not None, "no pending group: identical input was already processed"
    ops = process_group(store, principal, group, now=now)
    store.release(principal, lease.lease_token, now=now)
    return ops


def by_kind(ops, kind):
    return [op for op in ops if op.kind == kind]


def active_members(principal):
    with owner_context(principal):
        return {(m.operation_id, m.canonical_id, m.member_id)
                for m in ReconsolidationMember.objects.filter(active=True)}


def derived_rows(principal):
    with owner_context(principal):
        return list(DerivedMemory.objects.order_by("created_at", "id"))


def operation_row(principal, op_id):
    with owner_context(principal):
        return ReconsolidationOperation.objects.get(id=op_id)


def approve(store, principal, op, now, key=None):
    return operation_approve(principal=principal, operation_id=op.id, expected_revision=op.revision, idempotency_key=key or f"approve-{op.id}",
                         now=now)


def merged(store, principal, memories, now):
    """Process a group over ``memories`` and approve its merge: the committed operation."""
    (op,) = by_kind(process(store, principal, memories, now), "merge_equivalent")
    return approve(store, principal, op, now)

"""A refused overlapping merge is not lost: its members and the active sets they already belong
to are queued again as one union group (at most ``RECON_GROUP_MAX_MEMBERS``), so the next
proposal can merge them all. Shared by the rules path (``process``) and the model path
(``apply_review``)."""
from __future__ import annotations

from datetime import datetime

from memory.models import Memory
from reconsolidation import bounds
from reconsolidation.domain import GroupLease, InputRef, input_digest
from reconsolidation.errors import Conflict, Invalid, LeaseLost, ReconsolidationError
from reconsolidation.models import ReconsolidationMember
from reconsolidation.store import ReconsolidationStore
from veetbot.identity import Principal
from veetbot.rls import owner_context


def replan_union(store: ReconsolidationStore, principal: Principal, group_lease: GroupLease, proposal,
                 now: datetime) -> None:
    """Queue the union of a refused overlapping merge and the active sets it overlaps."""
    ids = [ref.memory_id for ref in proposal.inputs]
    with owner_context(principal):
        holders = ReconsolidationMember.objects.filter(member_id__in=ids, active=True).values_list("operation_id", flat=True)
        members = set(ReconsolidationMember.objects.filter(operation_id__in=list(holders), active=True)
                      .values_list("member_id", flat=True))
        union_ids = members | set(ids)
        refs = [InputRef(memory_id=i, content_revision=r)
                for i, r in Memory.objects.filter(id__in=list(union_ids)).values_list("id", "content_revision")]
    if len(refs) != len(union_ids) or len(refs) > bounds.RECON_GROUP_MAX_MEMBERS:
        return
    try:
        store.queue_group(principal, lease_token=group_lease.lease_token, inputs=refs, input_digest=input_digest(refs),
                          now=now)
    except LeaseLost:
        raise
    except (Conflict, Invalid, ReconsolidationError):
        return  # queue full or a member changed meanwhile: the next inventory pass replans

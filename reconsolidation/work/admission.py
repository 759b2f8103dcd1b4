"""ReconsolidationRequestAdmission: the only way a prepared model request becomes sendable.

A prepared request (``providers.request`` / ``providers.verification``) is a transient
preview, not permission. Admission turns it into permission in ONE owner transaction that
takes locks in the order every source mutation uses (owner lock first), re-reads the
locked sources, rebuilds the egress policy for this instant — so the prepared digest binds
the policy in force *now* — and reserves exactly that digest at its maximum cost with its
content-free call audit (``spend.reserve``). The class lists the steps.

A refusal is a value, never an exception: a group the builder refuses is dropped alone
with its reason, and a batch that cannot be reserved writes nothing (``NotAdmitted``, with
whether it is transient). After ``request_shutdown()`` nothing more is admitted. The
provider call happens later, outside every transaction (``executor``).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Callable, Optional, Sequence, Union
from uuid import UUID

from django.db.models import Sum

from memory.services.owner_state import lock_owner
from reconsolidation import bounds
from reconsolidation.domain import GroupLease, Reservation
from reconsolidation.errors import BudgetExhausted, DuplicateReservation, Invalid, ReconsolidationDisabled
from reconsolidation.models import ReconsolidationSpend
from reconsolidation.providers.contract import PreparedRequest, ProviderConfig
from reconsolidation.providers.egress import EgressPolicy, egress_policy
from reconsolidation.providers.envelopes import ProposalContext
from reconsolidation.providers.parser import ProposalParse
from reconsolidation.providers.request import LeftOut, SourceGroup, build_proposal_request
from reconsolidation.providers.settlement import call_audit
from reconsolidation.providers.source_groups import read_source_groups
from reconsolidation.providers.verification import PreparedVerification, build_verification_request
from reconsolidation.sources import current_sources
from reconsolidation.store import ReconsolidationStore
from veetbot.identity import Principal
from veetbot.rls import owner_context

# Builder deferrals that another attempt may clear (prices, budget, batch room); every other
# reason is decided by the sources themselves and would refuse again unchanged.
TRANSIENT = frozenset({"batch_full", "unknown_price", "above_slice_ceiling", "above_slice_headroom",
                       "policy_mismatch", "slice_budget", "daily_budget", "slice_deadline", "shutdown",
                       "disabled", "duplicate_reservation"})
# Reasons meaning the group's originals changed since the claim: the group is stale.
CHANGED = frozenset({"source_missing", "source_changed", "snapshot_inconsistent"})


_SHUTDOWN = threading.Event()


def request_shutdown() -> None:
    """This process is shutting down: cancel every provider call it runs (the executor
    watches this) and admit no new request (``shutdown``, transient: the group defers)."""
    _SHUTDOWN.set()


def shutdown_requested() -> bool:
    return _SHUTDOWN.is_set()


def clear_shutdown() -> None:
    """Admit requests again (tests; a process that shut down does not come back)."""
    _SHUTDOWN.clear()


@dataclass(frozen=True)
class NotAdmitted:
    reason: str
    # Groups refused before serialization, each with its own reason (the rest share ``reason``).
    dropped: tuple[tuple[UUID, "NotAdmitted"], ...] = ()

    @property
    def transient(self) -> bool:
        return self.reason in TRANSIENT

    @property
    def changed(self) -> bool:
        return self.reason in CHANGED


@dataclass(frozen=True)
class Admission:
    request: PreparedRequest
    reservation: Reservation
    policy: EgressPolicy
    groups: tuple[SourceGroup, ...]  # the offered groups as read in this unit of work
    leases: tuple[GroupLease, ...]  # their claims, in request order: one job, one lease
    context: Optional[ProposalContext] = None  # proposal stage
    verification: Optional[PreparedVerification] = None  # verification stage
    dropped: tuple[tuple[UUID, NotAdmitted], ...] = ()  # refused before serialization
    left_out: tuple[LeftOut, ...] = ()  # members of sent groups whose evidence was not sent


Admitted = Union[Admission, NotAdmitted]


class ReconsolidationRequestAdmission:
    """Admit one batch request in ONE owner transaction:

    1. take the owner lock and lock the originals of every claimed group of the batch FOR
       UPDATE, then read them again (``source_groups``), so all groups share one source and
       excerpt snapshot;
    2. rebuild the egress policy for this instant and the configured provider;
    3. prepare ONE request for the batch (at most ``RECON_BATCH_MAX_GROUPS`` groups of one job
       and lease) and reserve exactly its digest at its maximum cost (``spend.reserve``: live
       lease, every offered group still claimed, kill switch, slice/day budgets), with the
       content-free call audit of exactly that request naming every offered group.

    A group the builder refuses before serialization (changed sources, inadmissible or
    oversized evidence, egress refusal) is *dropped* with its own reason while its siblings
    go on; ``dropped`` lists them. An exhausted budget, the kill switch switched off since the
    claim (``disabled``), a digest already reserved in this slice (``duplicate_reservation``)
    or a process shutting down (``shutdown``) is a ``NotAdmitted`` for the whole batch. The
    result is an ``Admission`` (request, local context, reservation, the offered leases) or a
    ``NotAdmitted`` with a finite reason and whether it is transient (``deferred``: try again
    later) or decided by the content itself.
    """
    def __init__(self, store: ReconsolidationStore, principal: Principal, config: ProviderConfig, *,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.store, self.principal, self.config, self.monotonic = store, principal, config, monotonic

    def _fresh(self, leases: Sequence[GroupLease], now: datetime) -> tuple[datetime, EgressPolicy, list[SourceGroup]]:
        """Owner lock, every claimed original of the batch locked, then read whole (inside
        the caller's unit), so the groups share one snapshot.

        The admission instant is sampled after the lock waits (``now`` plus the time spent
        waiting), so the policy, the source read and the reservation's slice-deadline check
        use the time it is once the locks are held, not a view from before the wait."""
        began = self.monotonic()
        lock_owner(self.principal)
        current_sources(self.principal, [ref for lease in leases for ref in lease.inputs], now, lock=True)
        now = now + timedelta(seconds=max(0.0, self.monotonic() - began))
        policy = egress_policy(self.config, tenant_id=self.principal.tenant_id,
                               principal_id=self.principal.principal_id, prepared_at=now)
        return now, policy, read_source_groups(self.principal, leases, now)

    def _reserve(self, leases: Sequence[GroupLease], request: PreparedRequest,
                 now: datetime) -> Union[Reservation, NotAdmitted]:
        """One reservation for the whole batch request, at its maximum price."""
        try:
            return self.store.reserve(
                self.principal, leases[0], batch=tuple(leases[1:]), request_digest=request.digest,
                maximum_usd=request.maximum_usd,
                call_audit=call_audit(request, group_ids=[lease.group_id for lease in leases], admitted_at=now),
                now=now)
        except BudgetExhausted as error:
            return NotAdmitted(error.reason)
        except ReconsolidationDisabled:  # the kill switch withdrew admission after the claim
            return NotAdmitted("disabled")
        except DuplicateReservation:  # these exact bytes were reserved in this slice: never a second send
            return NotAdmitted("duplicate_reservation")

    def admit_proposal(self, leases: Sequence[GroupLease], *, batch_id: UUID, now: datetime) -> Admitted:
        """One proposal request for every claimed group that can be serialized."""
        if shutdown_requested():
            return NotAdmitted("shutdown")
        if not 1 <= len(leases) <= bounds.RECON_SLICE_MAX_GROUPS or len({lease.lease_token for lease in leases}) != 1:
            raise Invalid("leases: one to RECON_SLICE_MAX_GROUPS groups claimed under one lease")
        with owner_context(self.principal):
            now, policy, groups = self._fresh(leases, now)
            batch = build_proposal_request(groups=groups, config=self.config, policy=policy, batch_id=batch_id)
            dropped = tuple((deferral.group_id, NotAdmitted(deferral.reason)) for deferral in batch.deferred)
            if batch.request is None:
                return NotAdmitted(dropped[0][1].reason if dropped else "request_empty", dropped=dropped)
            by_id = {lease.group_id: lease for lease in leases}
            offered = tuple(by_id[group.group_id] for group in batch.context.groups)
            reservation = self._reserve(offered, batch.request, now)
            if isinstance(reservation, NotAdmitted):
                return NotAdmitted(reservation.reason, dropped=dropped)
            kept = {lease.group_id for lease in offered}
            return Admission(request=batch.request, reservation=reservation, policy=policy,
                             groups=tuple(group for group in groups if group.group_id in kept), leases=offered,
                             context=batch.context, dropped=dropped, left_out=batch.left_out)

    def admit_verification(self, proposal: Admission, parsed: ProposalParse, *, now: datetime) -> Admitted:
        """Fresh re-admission of the proposal's groups and one verification request for the
        surviving candidates, reserved against what the slice has left (``remaining``),
        never the whole slice budget."""
        if shutdown_requested():
            return NotAdmitted("shutdown")
        leases = proposal.leases
        with owner_context(self.principal):
            now, policy, groups = self._fresh(leases, now)
            if (policy.provider, policy.model, policy.residency) != (
                    proposal.policy.provider, proposal.policy.model, proposal.policy.residency):
                return NotAdmitted("policy_mismatch")
            charged = ReconsolidationSpend.objects.filter(slice_token=leases[0].lease_token).aggregate(
                total=Sum("charged_usd"))["total"] or Decimal(0)
            prepared = build_verification_request(
                proposal=proposal.request, context=proposal.context, parsed=parsed, groups=groups,
                config=self.config, policy=policy, remaining_usd=bounds.RECON_SLICE_BUDGET_USD - charged)
            if prepared.request is None:
                return NotAdmitted(prepared.refused or "verification_refused")
            reservation = self._reserve(leases, prepared.request, now)
            if isinstance(reservation, NotAdmitted):
                return reservation
            return Admission(request=prepared.request, reservation=reservation, policy=policy, groups=tuple(groups),
                             leases=leases, context=proposal.context, verification=prepared)

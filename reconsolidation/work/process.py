"""Rules work for one slice's claimed groups as ONE batch: read, reserve, propose, settle,
commit, finish (``process_batch`` spells out each step).

``process_batch`` is what the slice driver calls when the ``rules`` provider is configured;
``process_group`` runs one group as a batch of one (routing to ``model_path`` when a model
provider is configured or injected). Each step is its own short unit of work, and the
provider is never called inside a transaction.

Why the rules provider skips ``admission`` and ``executor``: those exist for a request that
leaves the process (an egress policy bound to serialized bytes, a priced maximum, a
transport to bound and cancel). The rules provider is a pure local function, so none of
that applies. What the contract still requires holds here too, and
``tests/reconsolidation/work/test_process_group.py`` checks it: one reservation per batch
before the call, the content-free call audit written with it, settlement ``verified`` at
the reserved amount (``unknown`` at full charge if the provider crashes), and every commit
revalidating the sources under the owner lock. Source text never leaves this process: the
audit holds digests, IDs and reason codes only.
"""
from __future__ import annotations

import hashlib
import time
from datetime import datetime
from typing import Optional, Sequence
from uuid import uuid4

from reconsolidation import bounds, mode
from reconsolidation.work import model_path
from reconsolidation.work.group_commits import commit_proposals
from reconsolidation.domain import CallAudit, CallCompletion, GroupLease, OperationView
from reconsolidation.errors import BudgetExhausted, ReconsolidationDisabled
from reconsolidation.providers.rules import provider as rules
from reconsolidation.providers import selection
from reconsolidation.providers.contract import Provider
from reconsolidation.sources import current_sources
from reconsolidation.store import ReconsolidationStore
from reconsolidation.writers import fences
from veetbot.identity import Principal
from veetbot.rls import owner_context

ABOVE_SLICE_CEILING = "above_slice_ceiling"  # spend.reserve: this group's own request exceeds the slice budget


def request_digest(group_leases: Sequence[GroupLease]) -> str:
    """What the batch would send, by identity only: policy, provider, each group's attempt and inputs."""
    lines = [bounds.POLICY, rules.PROVIDER, rules.MODEL]
    for lease in sorted(group_leases, key=lambda lease: str(lease.group_id)):
        lines += [str(lease.group_id), str(lease.attempt),
                  *(f"{ref.memory_id}:{ref.content_revision}" for ref in sorted(lease.inputs, key=lambda r: str(r.memory_id)))]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _call_audit(group_leases: Sequence[GroupLease], digest: str, now: datetime) -> CallAudit:
    return CallAudit(
        batch_id=uuid4(), stage="proposal", group_ids=tuple(lease.group_id for lease in group_leases),
        provider=rules.PROVIDER, model=rules.MODEL,
        pricing_digest=hashlib.sha256(str(bounds.RECON_RULES_CALL_USD).encode()).hexdigest(),
        egress_digest=digest, admitted_at=now,
    )


def process_group(store: ReconsolidationStore, principal: Principal, group_lease: GroupLease, *,
                  now: Optional[datetime] = None, provider: Optional[Provider] = None) -> tuple[OperationView, ...]:
    """One claimed group as a batch of one. ``provider`` is injected by tests and evaluations
    (scripted); otherwise the configured one runs: ``rules`` below, ``openai`` through
    admission, executor and apply_review."""
    now = store._now(now)
    mode.current_mode()  # a refused mode fails loudly before any spend
    if provider is None and selection.selected_provider() != "rules":
        provider, unready = model_path.configured_provider()
        if provider is None:
            store.finish_group(principal, group_lease, outcome="deferred", reason=unready, now=now)
            return ()
    if provider is not None:
        return model_path.process_group(store, principal, group_lease, provider, now=now)
    return process_batch(store, principal, [group_lease], now=now)


def _live_views(store: ReconsolidationStore, principal: Principal, group_leases: Sequence[GroupLease],
                now: datetime) -> list[tuple[GroupLease, dict]]:
    """Each group with its current views; a group whose sources changed since it was read,
    or that keeps fewer than two valid ones, finishes ``stale`` before any spend."""
    live = []
    for lease in group_leases:
        with owner_context(principal):
            touched = fences.touched_since_read(principal, lease.inputs)
            views, _ = current_sources(principal, lease.inputs, now)
        if touched or len(views) < 2:  # the commit would refuse it anyway
            store.finish_group(principal, lease, outcome="stale", reason="sources_changed", now=now)
        else:
            live.append((lease, views))
    return live


def _finish_all(store: ReconsolidationStore, principal: Principal, group_leases: Sequence[GroupLease], *,
                outcome: str, reason: str, now: datetime) -> None:
    for lease in group_leases:
        store.finish_group(principal, lease, outcome=outcome, reason=reason, now=now)


def process_batch(store: ReconsolidationStore, principal: Principal, group_leases: Sequence[GroupLease], *,
                  now: datetime) -> tuple[OperationView, ...]:
    """The rules provider over one slice's claimed groups as ONE batch: one reservation and
    call audit for every live group, one settlement, stage decisions per batch, then each
    group's proposals and completion in one transaction (``_commit_and_finish``).

    1. read each group's current originals (owner context; eligibility and exact revisions
       rechecked). A source touched since the group read it (``fences.touched_since_read``:
       corrected or erased; an erasure elsewhere does not count) or fewer than two still
       valid: that group alone is ``stale``, before any spend;
    2. reserve spend ONCE for the batch at ``RECON_RULES_CALL_USD`` under a request digest of
       the groups' IDs, revisions and attempts and the policy, with one content-free call
       audit (provider ``rules``, model ``rules@1``) listing every group, and record the
       ``proposal`` stage decision. A full budget defers the batch (``deferred``: not a
       failure; it backs off to the next slice); a price above the slice ceiling can never
       fit: ``unfittable``;
    3. run the rules provider (pure, outside any transaction) over each group and settle
       ``verified`` at the same amount with a completion of zero tokens — a provider crash
       settles ``unknown`` (full charge) and fails every group of the batch;
    4. per group, commit each proposal (a savepoint each: a conflict rejects only that
       proposal) and ``finish_group`` in ONE transaction. A merge that overlaps another active
       set is replanned as the union (queued as a new group). Outcomes: completed, no_change
       or stale; when the slice's operation budget runs out midway the group is deferred with
       the operations recorded so far, which are not repeated later (input idempotency).

    The rules provider abstains from hypotheses and every group it decides says so in its
    receipt: ``rules_abstain_hypothesis`` is the reason of a ``completed`` group and of a
    ``no_change`` group without proposals (a group whose proposals were all refused keeps
    ``proposals_refused``, the more specific fact). Returns the operations recorded.
    """
    live = _live_views(store, principal, group_leases, now)
    if not live:
        return ()
    leases = [lease for lease, _ in live]
    digest = request_digest(leases)
    stage = lambda decision, reason="", **counts: store.stage_decision(  # noqa: E731
        principal, lease_token=leases[0].lease_token, stage="proposal", decision=decision, reason=reason,
        counts=counts, now=now)
    try:
        reservation = store.reserve(principal, leases[0], batch=leases[1:], request_digest=digest,
                                    maximum_usd=bounds.RECON_RULES_CALL_USD,
                                    call_audit=_call_audit(leases, digest, now), now=now)
    except BudgetExhausted as error:
        # The batch's own price above the slice ceiling: no later slice admits it either.
        outcome = "unfittable" if error.reason == ABOVE_SLICE_CEILING else "deferred"
        stage("deferred", error.reason, groups=len(leases))
        _finish_all(store, principal, leases, outcome=outcome, reason=error.reason, now=now)
        return ()
    except ReconsolidationDisabled:  # switched off after the claim: admit no provider call
        _finish_all(store, principal, leases, outcome="deferred", reason="disabled", now=now)
        return ()
    stage("prepared", groups=len(leases))
    started = time.monotonic()
    try:
        proposals = [rules.propose(list(views.values())) for _, views in live]
    except Exception:  # a provider failure refuses the whole batch, as on the model path
        store.settle(principal, reservation.id, outcome="unknown", lease_token=leases[0].lease_token, now=now)
        stage("invalid_response", "provider_error", groups=len(leases))
        _finish_all(store, principal, leases, outcome="failed", reason="provider_error", now=now)
        return ()
    store.settle(principal, reservation.id, outcome="verified", actual_usd=bounds.RECON_RULES_CALL_USD,
                 lease_token=leases[0].lease_token, now=now,
                 completion=CallCompletion(completed_at=now, elapsed_ms=int((time.monotonic() - started) * 1000),
                                           transport_outcome="completed", input_tokens=0, output_tokens=0))
    return tuple(op for lease, found in zip(leases, proposals)
                 for op in _commit_and_finish(store, principal, lease, found, now))


def _commit_and_finish(store: ReconsolidationStore, principal: Principal, group_lease: GroupLease, proposals,
                       now: datetime) -> tuple[OperationView, ...]:
    """Every accepted proposal and the group's completion in ONE owner transaction.

    Each commit is a savepoint inside it (``group_commits``), so a refused proposal rolls
    back alone; a crash anywhere before the end rolls back the writes with the completion,
    so the recovered retry records them once and reports what it did (a completed write
    never looks like a duplicate refusal). Operation views are returned only after the
    transaction commits."""
    with owner_context(principal):
        done = commit_proposals(store, principal, group_lease, proposals, now)
        if done.budget:
            outcome, reason = "deferred", done.budget
        elif done.recorded:
            outcome, reason = "completed", rules.HYPOTHESIS_ABSTENTION
        elif done.stale and not done.refused:
            outcome, reason = "stale", "sources_changed"
        else:
            outcome, reason = "no_change", rules.HYPOTHESIS_ABSTENTION if not proposals else "proposals_refused"
        store.finish_group(principal, group_lease, outcome=outcome, reason=reason, now=now)
    return tuple(done.recorded)

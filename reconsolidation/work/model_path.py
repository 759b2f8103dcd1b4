"""Model work for one slice's claimed groups as ONE batch through a model provider (openai,
or scripted in tests and evaluations): admission → proposal call → verification admission
→ verification call → review → ``apply_review`` per group. ``reconsolidation.driver``
hands a slice's claimed groups here (``process_batch``); ``process.process_group`` routes
a single group here as a batch of one (``process_group``).

Why one batch: a slice sends at most two chat requests — one proposal for every admitted
group (one source snapshot, one reservation at the batch's maximum price) and one
verification for the surviving candidates — never a call per candidate, so cost and
exposure are bounded per slice. Every call goes through ``ReconsolidationRequestAdmission``
and ``ReconsolidationBatchExecutor``.

Group outcomes are content-free codes (``process_batch`` maps each case); a reason the
content itself decides ends ``no_change``, so the same content is not retried forever. A
member whose own evidence may not be sent is left out of its group's request
(``providers.request``), audited per group and reason, and the rest still reaches the model.
Settlement, the call audit and the stage decision (``spend.stage_decision``) are per batch
request.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional, Sequence
from uuid import uuid4

from reconsolidation.domain import GroupLease, OperationView
from reconsolidation.errors import LeaseLost
from reconsolidation.work.admission import Admission, NotAdmitted, ReconsolidationRequestAdmission
from reconsolidation.work.apply_review import apply_review
from reconsolidation.work.executor import Execution, ReconsolidationBatchExecutor
from reconsolidation.sources import current_sources
from reconsolidation.store import ReconsolidationStore
from reconsolidation.providers import selection
from reconsolidation.providers.contract import Provider, canonical_json, sha256_hex
from reconsolidation.providers.verification import proposal_reply, review, verification_reply
from veetbot.identity import Principal
from veetbot.rls import owner_context


def model_identity(provider: Provider) -> str:
    config = provider.config
    return sha256_hex(canonical_json({"provider": config.provider, "model": config.model,
                                      "pricing_digest": config.pricing_digest}))


def configured_provider() -> tuple[Optional[Provider], str]:
    """The configured model provider, or why none can be used yet (a deferral reason).

    Resolved outside every transaction. The read-only model check runs before first use
    (once per process for this base URL and model): an endpoint that does not list the
    model defers the batch before any spend."""
    if selection.readiness():
        return None, "provider_not_ready"
    provider = selection.model_provider()
    unavailable = provider.check_models()
    return (None, unavailable) if unavailable else (provider, "")


class _Stop(Exception):
    def __init__(self, outcome: str, reason: str) -> None:
        super().__init__(reason)
        self.outcome, self.reason = outcome, reason


def _stop_for(refused: NotAdmitted) -> _Stop:
    if refused.transient:
        return _Stop("deferred", refused.reason)
    return _Stop("stale" if refused.changed else "no_change", refused.reason)


def _admitted(result) -> Admission:
    if isinstance(result, NotAdmitted):
        raise _stop_for(result)
    return result


def _executed(run: Execution) -> Execution:
    if run.cancelled == "lease_lost":
        raise LeaseLost("lease_lost")
    if run.cancelled:
        raise _Stop("deferred", run.cancelled)
    return run


def _finish(store: ReconsolidationStore, principal: Principal, leases: Sequence[GroupLease], stop: _Stop,
            now: datetime) -> None:
    for lease in leases:
        store.finish_group(principal, lease, outcome=stop.outcome, reason=stop.reason, now=now)


def _with_sources(store: ReconsolidationStore, principal: Principal, leases: Sequence[GroupLease],
                  now: datetime) -> list[GroupLease]:
    """The groups that still have two valid sources; the others finish ``stale`` at once."""
    live = []
    for lease in leases:
        with owner_context(principal):
            views, _ = current_sources(principal, lease.inputs, now)
        if len(views) < 2:
            store.finish_group(principal, lease, outcome="stale", reason="sources_changed", now=now)
        else:
            live.append(lease)
    return live


class _Stages:
    """The batch's stage decisions (``spend.stage_decision``), one per stage reached."""

    def __init__(self, store: ReconsolidationStore, principal: Principal, slice_lease: GroupLease) -> None:
        self.store, self.principal, self.lease_token = store, principal, slice_lease.lease_token

    def __call__(self, stage: str, decision: str, now: datetime, reason: str = "", **counts: int) -> None:
        self.store.stage_decision(self.principal, lease_token=self.lease_token, stage=stage, decision=decision,
                                  reason=reason, counts=counts, now=now)

    def stopped(self, stage: str, stop: _Stop, now: datetime, **counts: int) -> None:
        self(stage, "invalid_response" if stop.outcome == "failed" else "deferred", now, stop.reason, **counts)


def process_batch(store: ReconsolidationStore, principal: Principal, group_leases: Sequence[GroupLease],
                  provider: Provider, *, now: datetime) -> tuple[OperationView, ...]:
    """One proposal and one verification call for every claimed group of a slice; each
    group ends with a durable outcome. Returns the operations recorded (after commit).

    * fewer than two still-valid sources before admission → ``stale``;
    * refused before serialization (the builder's per-group deferral) → that group alone
      drops out with its reason: transient (prices, budget, batch room) → ``deferred``;
      changed sources → ``stale``; reasons the content decides (egress refusal, inadmissible
      or oversized evidence) → ``no_change`` with that reason (a source change replans it).
      Its siblings go on;
    * the batch not admitted (budget, kill switch, shutdown, duplicate) → every remaining
      group takes that reason, mapped as above;
    * a lost lease raises ``LeaseLost`` (the slice ends, its recovery counts the attempt); the
      kill switch, shutdown or the slice ceiling mid-call → ``deferred``;
    * a refused batch (provider failure, structure error, verification mismatch) → every
      offered group ``failed`` with the finite reason (the retry policy applies);
    * otherwise each group's accepted candidates and its completion commit together
      (``apply_review``): a candidate-local failure rejects only that candidate.

    Each stage records its decision (``spend.stage_decision``: prepared, deferred,
    invalid_response or reviewed, with its reason code and group/candidate counts).
    """
    live = _with_sources(store, principal, group_leases, now)
    if not live:
        return ()
    decide = _Stages(store, principal, live[0])
    admission = ReconsolidationRequestAdmission(store, principal, provider.config)
    executor = ReconsolidationBatchExecutor(store, principal, provider)
    proposal = admission.admit_proposal(live, batch_id=uuid4(), now=now)
    dropped = dict(proposal.dropped)
    for lease in live:
        if lease.group_id in dropped:
            _finish(store, principal, [lease], _stop_for(dropped[lease.group_id]), now)
    if isinstance(proposal, NotAdmitted):
        decide("proposal", "deferred", now, proposal.reason, groups=len(live), groups_dropped=len(dropped))
        _finish(store, principal, [lease for lease in live if lease.group_id not in dropped], _stop_for(proposal), now)
        return ()
    offered, instant, stage = proposal.leases, now, "proposal"
    left_out = {"members_left_out": len(proposal.left_out)} if proposal.left_out else {}
    decide(stage, "prepared", now, groups=len(offered), groups_dropped=len(dropped), **left_out)
    if proposal.left_out:
        store.members_left_out(principal, lease_token=offered[0].lease_token, left_out=proposal.left_out, now=now)
    try:
        run = _executed(executor.execute(proposal, now=instant))
        instant = run.finished_at
        parsed = proposal_reply(run.result, request=proposal.request, context=proposal.context)
        if not parsed.ok:  # a structure error (or no reply) refuses the whole batch
            raise _Stop("failed", run.result.reason if not run.result.ok else parsed.reason)
        stage = "verification"
        checked = _admitted(admission.admit_verification(proposal, parsed, now=instant))
        decide(stage, "prepared", instant, groups=len(offered), candidates=len(parsed.candidate_ids))
        run = _executed(executor.execute(checked, now=instant))
        instant = run.finished_at
        verdicts = verification_reply(run.result, prepared=checked.verification, parsed=parsed)
        folded = review(parsed, checked.verification, verdicts)
        if folded.refused:
            raise _Stop("failed", run.result.reason if not run.result.ok else folded.refused)
    except _Stop as stop:
        decide.stopped(stage, stop, instant, groups=len(offered))
        _finish(store, principal, offered, stop, instant)
        return ()
    decide("review", "reviewed", instant, groups=len(offered), accepted=len(folded.accepted),
           rejected=len(folded.rejected))
    identity = model_identity(provider)
    recorded: list[OperationView] = []
    for lease in offered:
        applied = apply_review(store, principal, lease, parsed, folded, model_identity=identity, now=instant)
        recorded.extend(applied.recorded)
    return tuple(recorded)


def process_group(store: ReconsolidationStore, principal: Principal, group_lease: GroupLease, provider: Provider, *,
                  now: datetime) -> tuple[OperationView, ...]:
    """One claimed group as a batch of one (``process.process_group``'s model route)."""
    return process_batch(store, principal, [group_lease], provider, now=now)

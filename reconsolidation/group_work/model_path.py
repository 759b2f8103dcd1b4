"""Model work for one claimed group through a model provider (openai, or scripted in tests
and evaluations): admission → proposal call → verification admission → verification call
→ review → apply_review → finish. ``process.process_group`` routes here when the configured
provider is not ``rules`` or a provider is injected.

Every call goes through ``ReconsolidationRequestAdmission`` (fresh sources, lease and
policy, the exact digest reserved at its maximum cost in one transaction) and
``ReconsolidationBatchExecutor`` (outside every transaction, one attempt, limits, lease
renewal, cancellation, settlement within 5 s). Group outcomes, all content-free codes:

* not admitted: transient reasons (budget, prices, batch room) → ``deferred``; changed
  sources → ``stale``; reasons the content decides (egress refusal, inadmissible or
  oversized evidence) → ``no_change`` with that reason, so the group is not retried
  forever with the same content (a source change replans it);
* a lost lease raises ``LeaseLost`` (the slice ends, as in the rules path); the kill switch
  or the slice ceiling mid-call → ``deferred``;
* a refused batch (provider failure, structure error, verification mismatch) → ``failed``
  with the finite reason (the group's retry policy applies);
* otherwise ``completed`` when something was recorded, else ``stale``/``no_change``.
"""
from __future__ import annotations

from datetime import datetime
from uuid import uuid4

from reconsolidation.group_work.admission import Admission, NotAdmitted, ReconsolidationRequestAdmission
from reconsolidation.group_work.apply_review import apply_review
from reconsolidation.domain import GroupLease, OperationView
from reconsolidation.errors import LeaseLost
from reconsolidation.group_work.executor import Execution, ReconsolidationBatchExecutor
from reconsolidation.providers.contract import Provider, canonical_json, sha256_hex
from reconsolidation.providers.verification import proposal_reply, review, verification_reply
from reconsolidation.pipeline.sources import current_sources
from reconsolidation.pipeline.store import ReconsolidationStore
from veetbot.identity import Principal
from veetbot.rls import owner_context


def model_identity(provider: Provider) -> str:
    config = provider.config
    return sha256_hex(canonical_json({"provider": config.provider, "model": config.model,
                                      "pricing_digest": config.pricing_digest}))


class _Stop(Exception):
    def __init__(self, outcome: str, reason: str) -> None:
        super().__init__(reason)
        self.outcome, self.reason = outcome, reason


def _admitted(result) -> Admission:
    if isinstance(result, NotAdmitted):
        if result.transient:
            raise _Stop("deferred", result.reason)
        raise _Stop("stale" if result.changed else "no_change", result.reason)
    return result


def _executed(run: Execution) -> Execution:
    if run.cancelled == "lease_lost":
        raise LeaseLost("lease_lost")
    if run.cancelled:
        raise _Stop("deferred", run.cancelled)
    return run


def process_group(store: ReconsolidationStore, principal: Principal, group_lease: GroupLease, provider: Provider, *,
                  now: datetime) -> tuple[OperationView, ...]:
    with owner_context(principal):
        views, _ = current_sources(principal, group_lease.inputs, now)
    if len(views) < 2:
        store.finish_group(principal, group_lease, outcome="stale", reason="sources_changed", now=now)
        return ()
    admission = ReconsolidationRequestAdmission(store, principal, provider.config)
    executor = ReconsolidationBatchExecutor(store, principal, provider)
    instant = now
    try:
        proposal = _admitted(admission.admit_proposal(group_lease, batch_id=uuid4(), now=instant))
        run = _executed(executor.execute(proposal, group_lease, now=instant))
        instant = run.finished_at
        parsed = proposal_reply(run.result, request=proposal.request, context=proposal.context)
        if not parsed.ok:
            raise _Stop("failed", run.result.reason if not run.result.ok else parsed.reason)
        checked = _admitted(admission.admit_verification(group_lease, proposal, parsed, now=instant))
        run = _executed(executor.execute(checked, group_lease, now=instant))
        instant = run.finished_at
        verdicts = verification_reply(run.result, prepared=checked.verification, parsed=parsed)
        folded = review(parsed, checked.verification, verdicts)
        if folded.refused:
            raise _Stop("failed", run.result.reason if not run.result.ok else folded.refused)
    except _Stop as stop:
        store.finish_group(principal, group_lease, outcome=stop.outcome, reason=stop.reason, now=instant)
        return ()
    applied = apply_review(store, principal, group_lease, parsed, folded, model_identity=model_identity(provider),
                           now=instant)
    if applied.budget:
        outcome, reason = "deferred", applied.budget
    elif applied.recorded:
        outcome, reason = "completed", ""
    elif applied.stale and not applied.refused:
        outcome, reason = "stale", "sources_changed"
    else:
        outcome, reason = "no_change", "proposals_refused" if applied.refused else "provider_no_change"
    store.finish_group(principal, group_lease, outcome=outcome, reason=reason, now=instant)
    return tuple(applied.recorded)

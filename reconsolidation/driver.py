"""The slice driver: one inventory pass, one leased slice, and the until-idle loop.

``inventory_slice`` scans and checkpoints (never a provider call); ``run_slice`` runs one
whole leased slice and hands its claimed groups to model work as ONE batch
(``process_claimed``), so a slice sends at most a proposal and a verification request;
``run_until_idle`` repeats slices until the scan generation is complete and no group
awaits the model (``dream --until-idle``, the Celery task and the quick start share it).

Crash semantics: an exception inside a slice propagates *without* releasing the lease, so
a crash in code and a killed process look the same — the lease expires and the next claim
recovers the slice's groups and unsettled reservations (``leases.recover_dead_slices``).
The kill switch is checked by every claim (``leases.require_enabled``); switching it off
mid-slice stops admission of further groups and the slice releases normally.

No SQL here beyond two content-free counts, and no source text is read: return values
carry IDs, counts, states and money only.
"""
from __future__ import annotations

import time
from collections import Counter
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Callable, Literal, Optional

from django.db.models import Sum

from memory.models import Owner
from reconsolidation import bounds, mode
from reconsolidation import grouping
from reconsolidation.domain import Coverage, GroupLease, JobLease, OperationView, SliceReport, Value
from reconsolidation.errors import ReconsolidationDisabled
from reconsolidation.inventory.checkpoint import slice_operations
from reconsolidation.inventory.coverage import coverage, scan_coverage
from reconsolidation.models import ReconsolidationJob, ReconsolidationSpend
from reconsolidation.providers import selection
from reconsolidation.selectors.review_queue import review_queue
from reconsolidation.providers.contract import Provider
from reconsolidation.store import ReconsolidationStore
from reconsolidation.work import model_path
from reconsolidation.work.process import process_batch
from veetbot.identity import Principal
from veetbot.rls import owner_context

# Why a slice stopped handing groups to the model.
StopReason = Literal["queue_empty", "max_groups", "deadline", "disabled", "operation_budget"]
Processor = Callable[..., tuple[OperationView, ...]]


class SliceUsage(Value):
    """Provider calls reserved under one slice's lease and the tokens their settlements
    reported (0 for the local rules provider; unknown usage counts 0)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: "SliceUsage") -> "SliceUsage":
        return SliceUsage(calls=self.calls + other.calls, input_tokens=self.input_tokens + other.input_tokens,
                          output_tokens=self.output_tokens + other.output_tokens)


class SliceRun(Value):
    """What one whole slice did: its inventory report, the operations recorded under its lease,
    how many groups it processed and why it stopped, the spend charged under its lease and
    the scan coverage after the slice (the job's model counts are read by ``coverage_after``,
    when reported)."""

    report: SliceReport
    operations: tuple[OperationView, ...]  # every operation recorded under the slice's lease
    groups_processed: int
    groups_pending: int  # awaiting the model when the slice ended (queued or deferred)
    stopped: StopReason
    spend_usd: Decimal
    usage: "SliceUsage"
    coverage: Coverage
    generation_complete: bool  # the pinned full-scan generation has been scanned to its end
    seconds: float


def inventory_slice(store: ReconsolidationStore, principal: Principal, lease: JobLease, *, now: datetime) -> SliceReport:
    """Plan (read) -> neighbour lookups (read) -> checkpoint (one write transaction).

    The changed lane's anchors are offered for grouping before the full lane's; at most
    ``RECON_SLICE_MAX_GROUPS`` new groups are queued, within the pending cap. The caller
    owns the lease; this function never calls a provider.
    """
    plan = store.plan_slice(principal, lease_token=lease.lease_token, now=now)
    if plan.paused:
        return store.checkpoint(principal, lease_token=lease.lease_token, plan=plan, now=now)
    anchors, seen = [], set()
    for page in (plan.changed, plan.full):
        for ref in page.items:
            if ref.memory_id not in seen:
                seen.add(ref.memory_id)
                anchors.append((ref, page.lane))
    want = min(bounds.RECON_SLICE_MAX_GROUPS, plan.pending_headroom)
    drafts, outcomes = grouping.select_groups(principal, anchors=anchors, start_key=plan.start_key, want=want, now=now)
    return store.checkpoint(principal, lease_token=lease.lease_token, plan=plan, groups=drafts, outcomes=outcomes, now=now)


def owner_exists(principal: Principal) -> bool:
    """Whether ``principal`` is a registered owner (its own row, read under its own context).
    Entry points check it first: a claim would otherwise create an owner lock for a typo."""
    with owner_context(principal):
        return Owner.objects.exists()


def process_claimed(store: ReconsolidationStore, principal: Principal, group_leases: list[GroupLease], *,
                    now: datetime, provider: Optional[Provider] = None) -> tuple[OperationView, ...]:
    """One slice's claimed groups as one batch. ``provider`` is injected by tests and
    evaluations (scripted); otherwise the configured one runs. A model provider that is not
    ready defers every group before any spend."""
    mode.current_mode()  # a refused mode fails loudly before any spend
    if provider is None and selection.selected_provider() == "rules":
        return process_batch(store, principal, group_leases, now=now)
    if provider is None:
        provider, unready = model_path.configured_provider()
        if provider is None:
            for lease in group_leases:
                store.finish_group(principal, lease, outcome="deferred", reason=unready, now=now)
            return ()
    return model_path.process_batch(store, principal, group_leases, provider, now=now)


def _usage(audits) -> SliceUsage:
    completions = [(audit or {}).get("completion") or {} for audit in audits]
    return SliceUsage(calls=len(completions),
                      input_tokens=sum(int(c.get("input_tokens") or 0) for c in completions),
                      output_tokens=sum(int(c.get("output_tokens") or 0) for c in completions))


def _after_slice(principal: Principal,
                 lease: JobLease) -> tuple[Coverage, Decimal, SliceUsage, tuple[OperationView, ...]]:
    """Scan coverage once the slice's model work is done, what its lease was charged, its
    calls and tokens, and every operation recorded under it (the equivalence pass's merges
    and model work's alike)."""
    with owner_context(principal):
        job = ReconsolidationJob.objects.get(id=lease.job_id)
        spends = ReconsolidationSpend.objects.filter(slice_token=lease.lease_token)
        charged = spends.aggregate(total=Sum("charged_usd"))["total"] or Decimal("0")
        usage = _usage(spends.values_list("call_audit", flat=True))
        return scan_coverage(principal, job), charged, usage, slice_operations(principal, lease.lease_token)


def coverage_after(run: SliceRun) -> Coverage:
    """Every count of the run's job, model coverage and reach included: read when it is
    reported (at the end of a pass, or per slice by ``dream``), not inside the slice, since
    the counts read every receipt and group of the generation."""
    principal = Principal(tenant_id=run.report.tenant_id, principal_id=run.report.principal_id)
    with owner_context(principal):
        return coverage(principal, ReconsolidationJob.objects.get(id=run.report.job_id))


def _claim_batch(store: ReconsolidationStore, principal: Principal, lease: JobLease,
                 current: Callable[[], datetime]) -> tuple[list[GroupLease], StopReason]:
    """The slice's batch: up to ``RECON_SLICE_MAX_GROUPS`` oldest queued groups — none when
    the slice's operations (the equivalence pass's merges) already fill its operation bound,
    since every group claimed then could only defer, after paying for its calls."""
    claimed: list[GroupLease] = []
    if len(slice_operations(principal, lease.lease_token)) >= bounds.RECON_SLICE_MAX_OPERATIONS:
        return claimed, "operation_budget"
    while len(claimed) < bounds.RECON_SLICE_MAX_GROUPS:
        instant = current()
        if instant >= lease.slice_deadline_at:
            return claimed, "deadline"
        try:
            group_lease = store.claim_group(principal, lease_token=lease.lease_token, now=instant)
        except ReconsolidationDisabled:  # switched off mid-slice: admit nothing more
            return claimed, "disabled"
        if group_lease is None:
            return claimed, "queue_empty"
        claimed.append(group_lease)
    return claimed, "max_groups"


def _one_group_at_a_time(store: ReconsolidationStore, principal: Principal, lease: JobLease, process: Processor,
                         started_at: datetime, current: Callable[[], datetime]
                         ) -> tuple[int, StopReason, JobLease]:
    """A caller's per-group processor: claim, process, renew, until the slice's bounds."""
    processed, renewed_at = 0, started_at
    while True:
        instant = current()
        if processed >= bounds.RECON_SLICE_MAX_GROUPS:
            return processed, "max_groups", lease
        if instant >= lease.slice_deadline_at:
            return processed, "deadline", lease
        if instant - renewed_at >= timedelta(seconds=bounds.RECON_RENEW_SECONDS):
            lease = store.renew(principal, lease.job_id, lease.lease_token, now=instant)
            renewed_at = instant
        try:
            group_lease = store.claim_group(principal, lease_token=lease.lease_token, now=instant)
        except ReconsolidationDisabled:  # switched off mid-slice: admit nothing more, end cleanly
            return processed, "disabled", lease
        if group_lease is None:
            return processed, "queue_empty", lease
        process(store, principal, group_lease, now=instant)
        processed += 1


def run_slice(
    principal: Principal, *, lease_owner: str, store: Optional[ReconsolidationStore] = None,
    now: Optional[datetime] = None, process: Optional[Processor] = None, provider: Optional[Provider] = None,
    monotonic: Callable[[], float] = time.monotonic,
) -> Optional[SliceRun]:
    """One leased slice for ``principal``; None when nothing is due or another worker holds the
    owner's live lease.

    claim_due, ``inventory_slice``, then claim the oldest queued groups (at most
    ``RECON_SLICE_MAX_GROUPS``, none at or after the slice's wall deadline) and hand them to
    ``process_claimed`` as one batch: a model provider gets one proposal and one
    verification request for all of them (``work.model_path.process_batch``); the rules
    provider, which sends nothing, takes the same batch under one reservation
    (``work.process.process_batch``). Then release. A caller-supplied per-group ``process``
    (tests, the slice benchmark) instead runs the groups one claim at a time, renewing the
    lease every ``RECON_RENEW_SECONDS``.

    ``now`` is the slice's start instant (default: the store's clock); later instants add the
    elapsed ``monotonic`` time, so the deadline and renewals follow the wall clock while tests
    can fix both. ``provider`` injects a model provider for the slice's batch.
    """
    store = store or ReconsolidationStore()
    started_at = now if now is not None else store.clock()
    began = monotonic()

    def current() -> datetime:
        return started_at + timedelta(seconds=monotonic() - began)

    lease = store.claim_due(principal, lease_owner=lease_owner, now=started_at)
    if lease is None:
        return None
    report = inventory_slice(store, principal, lease, now=current())
    if process is not None:
        processed, stopped, lease = _one_group_at_a_time(store, principal, lease, process, started_at, current)
    else:
        instant = current()
        if instant - started_at >= timedelta(seconds=bounds.RECON_RENEW_SECONDS):
            lease = store.renew(principal, lease.job_id, lease.lease_token, now=instant)
        batch, stopped = _claim_batch(store, principal, lease, current)
        if batch:
            process_claimed(store, principal, batch, now=current(), provider=provider)
        processed = len(batch)
    store.release(principal, lease.lease_token, now=current())
    final, spend, usage, operations = _after_slice(principal, lease)
    return SliceRun(
        report=report, operations=tuple(operations), groups_processed=processed, groups_pending=final.groups_pending,
        stopped=stopped, spend_usd=spend, usage=usage, coverage=final, generation_complete=final.scan_complete,
        seconds=round(monotonic() - began, 6),
    )


def is_idle(run: SliceRun) -> bool:
    """The day's job is complete — both scan lanes, the model lane and the equivalence
    backlog done — and nothing awaits the model: a further slice has no work.
    (``generation_complete`` means only that the scan is done.)"""
    return run.report.job_completed and run.groups_pending == 0


def made_progress(run: SliceRun) -> bool:
    """A slice that scanned no anchor, recorded no operation and left as many groups waiting
    as it found (every group deferred, e.g. on an exhausted budget) would repeat itself:
    until-idle stops instead of spinning. A group deferred by the per-slice operation
    budget after recording operations is progress: its next slice continues after them, and
    so is a failed attempt (a provider refusing the batch): a group has at most
    ``RECON_MAX_GROUP_ATTEMPTS``, so retries end in a terminal outcome."""
    scanned = run.report.full_anchors + run.report.changed_anchors
    decided = run.report.duplicates + run.report.no_neighbours  # model-lane decisions on passed anchors
    return (scanned > 0 or decided > 0 or bool(run.operations)
            or run.groups_pending < run.report.coverage.groups_pending
            or run.coverage.failed_attempts > run.report.coverage.failed_attempts)


def coverage_json(cover: Coverage) -> dict:
    """Scan coverage, model coverage and model reach apart, content-free (``dream --json``,
    the task): every group may have a durable outcome while few were ever sent."""
    ratio = cover.model_coverage
    return {
        "scan": {"read": min(cover.full_cursor, cover.generation_size), "of": cover.generation_size,
                 "complete": cover.scan_complete},
        "model": {"groupable_anchors": cover.groupable_anchors, "processed": cover.groupable_processed,
                  "coverage": None if ratio is None else round(ratio, 4), "groups_pending": cover.groups_pending,
                  "groups_failed": cover.groups_failed, "complete": cover.model_complete},
        "reach": {"groups_formed": cover.groups_formed, "groups_sent": cover.groups_sent,
                  "reach": None if cover.model_reach is None else round(cover.model_reach, 4)},
    }


def pass_summary(runs: list[SliceRun], stopped: str) -> dict:
    """Content-free totals of a pass (the Celery task's result, the quick start's summary)."""
    kinds = Counter(f"{op.kind}/{op.state}" for run in runs for op in run.operations)
    return {
        "slices": len(runs), "stopped": stopped,
        "anchors_scanned": sum(run.report.full_anchors + run.report.changed_anchors for run in runs),
        "groups_processed": sum(run.groups_processed for run in runs),
        "operations": dict(sorted(kinds.items())),
        "spend_usd": str(sum((run.spend_usd for run in runs), start=Decimal("0"))),
        **sum((run.usage for run in runs), start=SliceUsage()).model_dump(),
        "seconds": round(sum(run.seconds for run in runs), 3),
        "generation_complete": bool(runs) and runs[-1].generation_complete,
        **({"coverage": coverage_json(coverage_after(runs[-1]))} if runs else {}),
    }


def run_until_idle(
    principal: Principal, *, lease_owner: str, store: Optional[ReconsolidationStore] = None,
    process: Optional[Processor] = None, provider: Optional[Provider] = None, max_slices: Optional[int] = None,
    now: Optional[datetime] = None,
    monotonic: Callable[[], float] = time.monotonic,
    on_slice: Callable[[int, SliceRun], None] = lambda number, run: None,
) -> tuple[list[SliceRun], str]:
    """Slices until idle. Returns the slices and why it stopped: ``idle`` (generation scanned,
    queue empty), ``nothing_due`` (no job due, or the lease is held elsewhere), ``no_progress``
    (work remains but a slice could not advance it), ``review_queue_full`` (as many proposals wait
    as the owner reviews at once: dreaming resumes as the owner decides), ``disabled`` or
    ``max_slices``.
    With ``now``, slices start at ``now`` plus the elapsed ``monotonic`` time."""
    store = store or ReconsolidationStore()
    began = monotonic()
    runs: list[SliceRun] = []
    while max_slices is None or len(runs) < max_slices:
        if review_queue(principal=principal).full:
            return runs, "review_queue_full"
        start = None if now is None else now + timedelta(seconds=monotonic() - began)
        run = run_slice(principal, lease_owner=lease_owner, store=store, now=start, process=process,
                        provider=provider, monotonic=monotonic)
        if run is None:
            return runs, "nothing_due"
        runs.append(run)
        on_slice(len(runs), run)
        if is_idle(run):
            return runs, "idle"
        if run.stopped == "disabled":
            return runs, "disabled"
        if not made_progress(run):
            return runs, "no_progress"
    return runs, "max_slices"

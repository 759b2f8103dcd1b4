"""Jobs and leases: the daily due job per owner, the one live lease that admits a worker,
renewal, release and crash recovery.

* ``claim_due`` runs under the owner lock (``memory.services.owner_state.lock_owner``), so
  claims of one owner serialize with each other and with every memory write; the
  generation high watermark it pins is therefore exact. It refuses while *any* job of the
  owner holds a live lease: fleet-wide admission is the durable lease, not a process flag.
* Missed days coalesce: an unfinished job is continued, and a finished one is followed by
  a single job for today's due day — never one per missed day.
* A crash is a lease expiry. The next claim recovers the dead slice's work: its leased
  groups count a failed attempt (terminal after ``RECON_MAX_GROUP_ATTEMPTS``) and its
  unsettled reservations stay fully charged as ``unknown``.
* ``locked_job`` (in ``reconsolidation.rows``, shared with the writers) is the gate every
  lease-bound write passes first: a token that is not the job's current, unexpired lease
  raises ``LeaseLost`` before anything is written.

This module never calls a provider and never reads source text.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Optional
from uuid import UUID, uuid4

from django.conf import settings
from django.db import connection

from memory.models import Memory
from memory.services.owner_state import lock_owner
from reconsolidation import bounds
from reconsolidation.inventory import sql
from reconsolidation.domain import JobLease
from reconsolidation.errors import Invalid, LeaseLost, ReconsolidationDisabled
from reconsolidation.models import GROUP_ACTIVE_STATES, ReconsolidationGroup, ReconsolidationJob, ReconsolidationSpend
from reconsolidation.rows import audit, locked_job, owner_fields
from reconsolidation.selectors.pause import is_paused
from reconsolidation.selectors.review_queue import queue_full
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context

# Multiplicative hashing (Knuth) spreads successive generations' start keys over the bank.
_ROTATION_STEP = 2654435761


def processing_enabled() -> bool:
    return bool(getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_ENABLED", False))


def require_enabled() -> None:
    if not processing_enabled():
        raise ReconsolidationDisabled()


def due_day_for(now: datetime) -> date:
    """The due day whose due time has most recently passed at ``now`` (UTC)."""
    now = require_aware(now)
    today = now.date()
    return today if now.time() >= bounds.RECON_DUE_TIME_UTC else today - timedelta(days=1)


def rotated_start_key(generation: int, high_watermark: int) -> int:
    if high_watermark <= 0:
        return 1
    return 1 + ((generation - 1) * _ROTATION_STEP) % high_watermark


def lease_view(principal: Principal, job: ReconsolidationJob) -> JobLease:
    started = job.slice_started_at
    return JobLease(
        **owner_fields(principal), job_id=job.id, lease_token=job.lease_token, lease_owner=job.lease_owner,
        lease_expires_at=job.lease_expires_at, slice_started_at=started,
        slice_deadline_at=started + timedelta(seconds=bounds.RECON_SLICE_DEADLINE_SECONDS),
        spend_day=started.date(), due_day=job.due_day, attempt=job.attempt_count,
        generation=job.full_generation, revision=job.revision,
    )


def _start_generation(job: ReconsolidationJob, principal: Principal, now: datetime) -> None:
    """Pin a new full-scan generation. Caller holds the owner lock."""
    with connection.cursor() as cursor:
        cursor.execute(sql.ALLOCATORS, owner_fields(principal))
        row = cursor.fetchone()
    high_watermark, journal_head = row if row else (0, 0)
    job.full_generation += 1
    job.full_high_watermark = high_watermark
    job.full_change_watermark = journal_head
    job.full_cursor_sequence = 0
    job.full_start_key = rotated_start_key(job.full_generation, high_watermark)
    job.generation_started_at = now
    job.full_scanned = job.changed_scanned = job.excluded = job.groups_queued = job.not_selected = 0


def _new_job(principal: Principal, due_day: date, previous: Optional[ReconsolidationJob], now: datetime) -> ReconsolidationJob:
    job = ReconsolidationJob(
        **owner_fields(principal), policy=bounds.POLICY, due_day=due_day, state="open",
        created_at=now, updated_at=now,
    )
    if previous is not None:
        job.full_generation = previous.full_generation
        job.changed_cursor_seq = previous.changed_cursor_seq
        _start_generation(job, principal, now)
    else:
        _start_generation(job, principal, now)
        # The first generation covers everything created so far; the changed lane starts
        # at the journal head so it does not replay the whole history a second time.
        job.changed_cursor_seq = job.full_change_watermark
    job.save(force_insert=True)
    return job


def recover_dead_slices(principal: Principal, now: datetime, *, lease_token: Optional[UUID] = None) -> None:
    """Work a slice left behind: leased groups count one failed attempt; unsettled
    reservations become ``unknown`` at their full charge. With ``lease_token`` only that
    slice's work; without, every leased group and open reservation (no live lease exists)."""
    groups = ReconsolidationGroup.objects.select_for_update().filter(policy=bounds.POLICY, state="leased")
    spend = ReconsolidationSpend.objects.select_for_update().filter(state="reserved")
    if lease_token is not None:
        groups = groups.filter(lease_token=lease_token)
        spend = spend.filter(slice_token=lease_token)
    for group in groups.order_by("id"):
        fail_attempt(principal, group, "lease_lost", now)
    for reservation in spend.order_by("id"):
        reservation.state = "unknown"
        if reservation.call_audit is not None:
            admitted = datetime.fromisoformat(reservation.call_audit["admitted_at"])
            reservation.call_audit = {**reservation.call_audit, "completion": {
                "completed_at": now.isoformat(), "transport_outcome": "recovered_unknown",
                "elapsed_ms": max(0, int((now - admitted).total_seconds() * 1000)),
                "input_tokens": None, "output_tokens": None,
            }}
        reservation.settled_at = now
        reservation.save(update_fields=["state", "call_audit", "settled_at"])


def fail_attempt(principal: Principal, group: ReconsolidationGroup, reason: str, now: datetime) -> None:
    """One failed attempt of an identical group; the last allowed one is terminal and audited."""
    group.retry_count += 1
    group.reason = reason
    group.lease_token = None
    group.updated_at = now
    if group.retry_count >= bounds.RECON_MAX_GROUP_ATTEMPTS:
        group.state = "failed"
        group.finished_at = now
        audit(principal, "group_failed", now, reason=reason, job_id=group.job_id, group_id=group.id,
              counts={"attempts": group.attempt_count, "failures": group.retry_count})
    else:
        group.state = "pending"
    group.save()


def claim_due(
    principal: Principal, *, now: datetime, lease_owner: str, lease_seconds: int = bounds.RECON_LEASE_SECONDS,
) -> Optional[JobLease]:
    """Lease the owner's due job, creating today's when the last one finished; None when
    nothing is due or another worker holds a live lease. Refuses when processing is off."""
    require_enabled()
    now = require_aware(now)
    if lease_seconds <= bounds.RECON_SLICE_DEADLINE_SECONDS:
        raise Invalid("lease_seconds: must exceed the slice deadline")
    if not lease_owner:
        raise Invalid("lease_owner: required (a label of the worker, any length)")
    with owner_context(principal):
        lock_owner(principal)
        if is_paused():
            return None  # the owner paused dreaming
        if queue_full():
            return None  # as many proposals wait as the owner is asked to review at once
        jobs = ReconsolidationJob.objects.filter(policy=bounds.POLICY)
        if jobs.filter(lease_token__isnull=False, lease_expires_at__gt=now).exists():
            return None
        job = jobs.select_for_update().filter(state="open").order_by("due_day").first()
        if job is None:
            latest = jobs.select_for_update().order_by("-due_day").first()
            today = due_day_for(now)
            if latest is None and not Memory.objects.exists():
                # A new owner's first generation waits for its first original: an empty
                # generation would complete the day and leave a same-day import to tomorrow.
                return None
            if latest is None or latest.due_day < today:
                job = _new_job(principal, today, latest, now)
            elif ReconsolidationGroup.objects.filter(policy=bounds.POLICY, state__in=GROUP_ACTIVE_STATES).exists():
                job = latest  # inventory done for today, model work still queued
            else:
                return None
        recover_dead_slices(principal, now)
        job.lease_owner = lease_owner
        job.lease_token = uuid4()
        job.lease_expires_at = now + timedelta(seconds=lease_seconds)
        job.slice_started_at = now
        job.attempt_count += 1
        job.revision += 1
        job.updated_at = now
        job.save()
        return lease_view(principal, job)


def renew(principal: Principal, job_id: UUID, lease_token: UUID, *, now: datetime) -> JobLease:
    """Extend a live lease by the lease length. The slice deadline never moves."""
    now = require_aware(now)
    with owner_context(principal):
        job = locked_job(principal, lease_token, now, job_id=job_id)
        if now >= job.slice_started_at + timedelta(seconds=bounds.RECON_SLICE_DEADLINE_SECONDS):
            raise LeaseLost("slice_deadline")
        if is_paused():
            raise LeaseLost("paused")  # the running slice stops here; release recovers its work
        job.lease_expires_at = now + timedelta(seconds=bounds.RECON_LEASE_SECONDS)
        job.revision += 1
        job.updated_at = now
        job.save(update_fields=["lease_expires_at", "revision", "updated_at"])
        return lease_view(principal, job)


def release(principal: Principal, lease_token: UUID, *, now: datetime) -> None:
    """End a slice: whatever it left leased or unsettled is recovered now, not at expiry."""
    now = require_aware(now)
    with owner_context(principal):
        job = locked_job(principal, lease_token, now)
        recover_dead_slices(principal, now, lease_token=lease_token)
        job.lease_token = None
        job.lease_owner = ""
        job.lease_expires_at = None
        job.revision += 1
        job.updated_at = now
        job.save(update_fields=["lease_token", "lease_owner", "lease_expires_at", "revision", "updated_at"])

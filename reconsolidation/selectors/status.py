"""Dreaming's recent history for one owner, content free: the last slices' audit counts,
the current day's scan coverage, and spend and operations per UTC day.

It reads jobs, audit rows (event, reason code, integer counts), spend days and operation
counts — never a statement, excerpt or summary. Unknown spend stays charged at its
reservation (the spend ledger's rule), so a day's spend is what its ceiling is measured
against, not a guess of the bill.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Optional

from django.db.models import Count
from django.db.models.functions import TruncDate

from memory.selectors import spend_by_day
from reconsolidation import bounds
from reconsolidation.domain import Coverage
from reconsolidation.inventory.coverage import coverage
from reconsolidation.models import ReconsolidationAudit, ReconsolidationJob, ReconsolidationOperation
from reconsolidation.work.spend import SPEND_PURPOSE
from veetbot.identity import Principal
from veetbot.rls import owner_context

SLICE_EVENTS = ("slice_inventory", "slice_paused")


@dataclass(frozen=True)
class SliceRecord:
    recorded_at: datetime
    event: str  # one of SLICE_EVENTS
    counts: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class DreamingHistory:
    slices: tuple[SliceRecord, ...]  # newest first
    coverage: Optional[Coverage]  # the latest job's, None before the first
    scan_day: Optional[date]
    spend_by_day: dict[date, Decimal]
    operations_by_day: dict[date, int]  # the chart's days, and every listed slice's day


def dreaming_history(*, principal: Principal, first_day: date, last_day: date, last_slices: int) -> DreamingHistory:
    """The last ``last_slices`` slices, and spend and operations of each UTC day in
    ``first_day``..``last_day``."""
    with owner_context(principal):
        audits = ReconsolidationAudit.objects.filter(event__in=SLICE_EVENTS).order_by("-recorded_at", "-id")
        slices = tuple(SliceRecord(recorded_at=a.recorded_at, event=a.event,
                                   counts=tuple(sorted((k, int(v)) for k, v in a.counts.items())))
                       for a in audits[:last_slices])
        job = ReconsolidationJob.objects.filter(policy=bounds.POLICY).order_by("-due_day", "-created_at").first()
        spend = spend_by_day(purpose=SPEND_PURPOSE, first_day=first_day, last_day=last_day)
        # From the chart's first day, or the oldest listed slice's if earlier: each listed
        # pass can say what it recorded.
        since = min([first_day, *(s.recorded_at.astimezone(timezone.utc).date() for s in slices)])
        operations = dict(ReconsolidationOperation.objects.filter(created_at__date__gte=since)
                          .annotate(day=TruncDate("created_at", tzinfo=timezone.utc)).values("day")
                          .annotate(n=Count("id")).values_list("day", "n"))
        return DreamingHistory(slices=slices, coverage=coverage(principal, job) if job is not None else None,
                               scan_day=job.due_day if job is not None else None,
                               spend_by_day=spend, operations_by_day=operations)

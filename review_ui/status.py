"""The status panel: processing mode and kill switch, the last passes (their slices added up per day), scan coverage
beside model-processed groups, spend today against the daily ceiling, and fourteen days
of spend and operations for the chart — each said in plain words (``Status.sentences``,
``PassLine.sentence``), never as counter names.

Everything here is content free by construction: it words what
``reconsolidation.selectors.status`` reads (audit counts, coverage, spend and operation
counts) — never a statement, excerpt or summary.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Optional

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from reconsolidation import bounds as recon_bounds
from reconsolidation import mode
from reconsolidation.domain import Coverage
from reconsolidation.leases import processing_enabled
from reconsolidation.selectors.pause import dreaming_pause_get
from reconsolidation.selectors.review_queue import review_queue
from reconsolidation.selectors.status import dreaming_history
from review_ui import bounds
from review_ui.words import MODE, plural
from veetbot.clock import utcnow
from veetbot.identity import Principal
# The one provider that is free and runs on this machine; every other one may cost money.
FREE_LOCAL_PROVIDERS = ("rules",)


def usd(value: Decimal) -> str:
    """Fixed-point dollars (never ``3E-8``), at least cents."""
    text = format(value.normalize(), "f")
    whole, _, cents = text.partition(".")
    return f"{whole}.{cents.ljust(2, '0')}"


@dataclass(frozen=True)
class SliceLine:
    recorded_at: datetime
    event: str
    counts: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class PassLine:
    """One day's pass: its slices added up, so the panel gives one account per pass instead
    of a list of slices of which most read nothing (model work and waiting)."""

    day: date
    slices: tuple[SliceLine, ...]
    operations: int

    @property
    def sentence(self) -> str:
        read = groups = waited = 0
        for line in self.slices:
            n = dict(line.counts)
            read += n.get("full_anchors", 0) + n.get("changed_entries", 0)
            groups += n.get("groups_queued", 0)
            waited += line.event == "slice_paused"
        parts = [f"read {plural(read, 'memory', 'memories')}", f"formed {plural(groups, 'group')}",
                 f"recorded {plural(self.operations, 'proposal')}"]
        sentence = f"{self.day.strftime('%b')} {self.day.day}: dreaming " + ", ".join(parts)
        sentence += f" in {plural(len(self.slices), 'slice')}"
        if waited:
            sentence += f" ({waited} waited for the model)"
        return sentence + "."


@dataclass(frozen=True)
class DayPoint:
    day: date
    spend_usd: Decimal
    operations: int


@dataclass(frozen=True)
class Status:
    mode: str
    processing_enabled: bool
    slices: tuple[SliceLine, ...]
    coverage: Optional[Coverage]
    spend_today_usd: Decimal
    daily_ceiling_usd: Decimal
    days: tuple[DayPoint, ...]
    provider: str = "rules"
    scan_day: Optional[date] = None
    today: Optional[date] = None
    paused: bool = False
    paused_since: Optional[datetime] = None
    operations_by_day: tuple[tuple[date, int], ...] = ()
    waiting: int = 0
    queue_bound: int = recon_bounds.RECON_REVIEW_QUEUE_MAX

    @property
    def paid(self) -> bool:
        """Spend is shown only for a provider that may charge (never for the rules one)."""
        return self.provider not in FREE_LOCAL_PROVIDERS

    @property
    def mode_sentence(self) -> str:
        return MODE.get(self.mode, MODE["refused"])

    @property
    def processing_sentence(self) -> str:
        if self.processing_enabled and self.paused:
            return "You paused dreaming: nothing new is proposed until you resume it."
        if self.processing_enabled:
            return "Dreaming is on."
        return "Dreaming is switched off. History, review, undo and erasure still work."

    @property
    def passes(self) -> tuple[PassLine, ...]:
        """The recent slices as one line per UTC day, newest first."""
        by_day: dict[date, list[SliceLine]] = {}
        for line in self.slices:
            by_day.setdefault(line.recorded_at.astimezone(timezone.utc).date(), []).append(line)
        operations = dict(self.operations_by_day)
        return tuple(PassLine(day=day, slices=tuple(lines), operations=operations.get(day, 0))
                     for day, lines in sorted(by_day.items(), reverse=True))

    @property
    def queue_sentence(self) -> str:
        """How many proposals wait, and — when the queue is full — why nothing new comes."""
        if self.waiting == 0:
            return "Nothing is waiting for your review."
        waiting = f"{plural(self.waiting, 'proposal')} {'waits' if self.waiting == 1 else 'wait'} for your review"
        if self.waiting >= self.queue_bound:
            return (f"{waiting}: that is as many as dreaming lets wait at once, so it proposes nothing new "
                    "until you approve or reject some. It keeps its place and goes on from there.")
        return waiting + ", most important first."

    @property
    def spend_sentence(self) -> str:
        if not self.paid:
            return "Free: the rules provider runs locally and sends nothing anywhere."
        return f"Spent ${self.spend_today} of the ${self.daily_ceiling} daily ceiling today."

    @property
    def coverage_sentences(self) -> tuple[str, ...]:
        """"Dreaming read 253 of 253 memories today; 8 groups reviewed; 162 waiting for a
        later pass": the scan and the model's work, reported apart."""
        cover = self.coverage
        if cover is None:
            return ("Dreaming has not read any memories yet.",)
        when = "today" if self.scan_day == self.today else f"on {self.scan_day.isoformat()}" if self.scan_day else ""
        read = min(cover.full_cursor, cover.generation_size)
        first = f"Dreaming read {read} of {plural(cover.generation_size, 'memory', 'memories')} {when}".rstrip()
        parts = [first, f"{plural(cover.groups_processed, 'group')} reviewed"]
        if cover.groups_pending:
            parts.append(f"{cover.groups_pending} queued for the model")
        parts.append(f"{cover.not_selected} waiting for a later pass")
        sentences = ["; ".join(parts) + "."]
        if cover.groups_failed:
            sentences.append(f"{plural(cover.groups_failed, 'group')} failed and will not be retried as it is.")
        if cover.excluded:
            sentences.append(f"{plural(cover.excluded, 'memory', 'memories')} were skipped as not eligible.")
        if cover.groupable_anchors:
            sentences.append(f"Of the {plural(cover.groupable_anchors, 'memory', 'memories')} with related ones, "
                             f"the model has looked at {cover.groupable_processed} "
                             f"({round(100 * cover.model_coverage)}%).")
        if cover.groups_formed:
            sentences.append(f"The evidence of {cover.groups_sent} of the {plural(cover.groups_formed, 'group')} "
                             f"formed was sent to the model ({round(100 * cover.model_reach)}%).")
        if cover.scan_complete:
            sentences.append("The whole memory bank has been read in this pass."
                             if cover.model_complete else
                             "The whole memory bank has been read; the model has not yet looked at all of it.")
        return tuple(sentences)

    @property
    def spend_today(self) -> str:
        return usd(self.spend_today_usd)

    @property
    def daily_ceiling(self) -> str:
        return usd(self.daily_ceiling_usd)


def _mode() -> str:
    try:
        return mode.current_mode()
    except ImproperlyConfigured:
        return "refused"  # a misconfigured mode records nothing; say so without the setting's value


def status(principal: Principal, *, now: Optional[datetime] = None) -> Status:
    now = now or utcnow()
    today = now.astimezone(timezone.utc).date()
    first = today - timedelta(days=bounds.REVIEW_CHART_DAYS - 1)
    history = dreaming_history(principal=principal, first_day=first, last_day=today,
                               last_slices=bounds.REVIEW_STATUS_LAST_SLICES)
    slices = tuple(SliceLine(recorded_at=r.recorded_at, event=r.event, counts=r.counts) for r in history.slices)
    spend, ops, cover, job_day = history.spend_by_day, history.operations_by_day, history.coverage, history.scan_day
    days = tuple(DayPoint(day=d, spend_usd=spend.get(d, Decimal("0")), operations=ops.get(d, 0))
                 for d in (first + timedelta(days=i) for i in range(bounds.REVIEW_CHART_DAYS)))
    paused = dreaming_pause_get(principal=principal)
    queue = review_queue(principal=principal)
    return Status(mode=_mode(), processing_enabled=processing_enabled(), slices=slices, coverage=cover,
                  operations_by_day=tuple(sorted(ops.items())),
                  waiting=queue.waiting, queue_bound=queue.bound,
                  paused=paused.paused, paused_since=paused.changed_at if paused.paused else None,
                  spend_today_usd=spend.get(today, Decimal("0")),
                  daily_ceiling_usd=recon_bounds.RECON_DAILY_BUDGET_USD,
                  days=days, provider=getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_PROVIDER", "rules"),
                  scan_day=job_day, today=today)

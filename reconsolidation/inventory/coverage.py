"""Scan coverage and model coverage of a job, reported apart: a scanned anchor no model
looked at is ``queued`` or ``not_selected``, never "done".

Two readings. ``scan_coverage`` is what every checkpoint reports: the job row's cursors
and counters and the model work still waiting, each statement bounded by the pending cap.
``coverage`` adds the counts over the whole job (its receipts, groups and sent evidence),
which grow with the generation: read when reported (``driver.coverage_after``, the status
page), never inside a slice (at 100,000 memories they were a quarter of the complete-scan
walk's time).
"""
from __future__ import annotations

from django.db import connection

from reconsolidation import bounds
from reconsolidation.domain import Coverage
from reconsolidation.inventory import sql
from reconsolidation.inventory.lanes import model_lane_done
from reconsolidation.models import ReconsolidationJob
from veetbot.identity import Principal


def scan_coverage(principal: Principal, job: ReconsolidationJob) -> Coverage:
    """The scan and the waiting work; the job's model counts are left unread (None)."""
    with connection.cursor() as cursor:
        cursor.execute(sql.WAITING_GROUPS, {"policy": bounds.POLICY})
        pending, failed_attempts = cursor.fetchone()
    scan_complete = job.full_cursor_sequence >= job.full_high_watermark
    return Coverage(
        generation=job.full_generation, generation_size=job.full_high_watermark, full_cursor=job.full_cursor_sequence,
        full_scanned=job.full_scanned, changed_scanned=job.changed_scanned, excluded=job.excluded,
        scan_complete=scan_complete, groups_queued=job.groups_queued, not_selected=job.not_selected,
        groups_pending=pending, failed_attempts=failed_attempts,
        model_complete=scan_complete and pending == 0 and job.not_selected == 0 and model_lane_done(job),
    )


def coverage(principal: Principal, job: ReconsolidationJob) -> Coverage:
    """Every count: the scan, the waiting work, and the job's model coverage and reach."""
    params = {"job_id": job.id, "policy": bounds.POLICY}
    with connection.cursor() as cursor:
        cursor.execute(sql.JOB_GROUP_OUTCOMES, params)
        processed, failed = cursor.fetchone()
        cursor.execute(sql.MODEL_COVERAGE, params)
        groupable, groupable_processed = cursor.fetchone()
        cursor.execute(sql.MODEL_REACH, params)
        groups_formed, groups_sent = cursor.fetchone()
    return scan_coverage(principal, job).model_copy(update={
        "groups_processed": processed, "groups_failed": failed,
        "groupable_anchors": groupable, "groupable_processed": groupable_processed,
        "groups_formed": groups_formed, "groups_sent": groups_sent,
    })

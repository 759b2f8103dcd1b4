"""Scan coverage and model coverage of a job, reported apart: a scanned anchor no model
looked at is ``queued`` or ``not_selected``, never "done".
"""
from __future__ import annotations

from django.db import connection

from reconsolidation import bounds
from reconsolidation.domain import Coverage
from reconsolidation.inventory import sql
from reconsolidation.inventory.lanes import model_lane_done
from reconsolidation.models import ReconsolidationJob
from veetbot.identity import Principal


def coverage(principal: Principal, job: ReconsolidationJob) -> Coverage:
    with connection.cursor() as cursor:
        cursor.execute(sql.GROUP_COUNTS, {"job_id": job.id, "policy": bounds.POLICY})
        pending, processed, failed, failed_attempts = cursor.fetchone()
        cursor.execute(sql.MODEL_COVERAGE, {"job_id": job.id, "policy": bounds.POLICY})
        groupable, groupable_processed = cursor.fetchone()
        cursor.execute(sql.MODEL_REACH, {"job_id": job.id})
        groups_formed, groups_sent = cursor.fetchone()
    scan_complete = job.full_cursor_sequence >= job.full_high_watermark
    return Coverage(
        generation=job.full_generation, generation_size=job.full_high_watermark, full_cursor=job.full_cursor_sequence,
        full_scanned=job.full_scanned, changed_scanned=job.changed_scanned, excluded=job.excluded,
        scan_complete=scan_complete, groups_queued=job.groups_queued, not_selected=job.not_selected,
        groups_pending=pending, groups_processed=processed, groups_failed=failed, failed_attempts=failed_attempts,
        model_complete=scan_complete and pending == 0 and job.not_selected == 0 and model_lane_done(job),
        groupable_anchors=groupable, groupable_processed=groupable_processed,
        groups_formed=groups_formed, groups_sent=groups_sent,
    )

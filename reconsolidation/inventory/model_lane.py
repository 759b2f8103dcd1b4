"""The model lane's walk: the slots a slice's changed lane leaves go to the job's durable
model cursor, oldest creation keys first, within the pending cap; every anchor it decides
gets a receipt.
"""
from __future__ import annotations

from datetime import datetime
from typing import Mapping, Sequence
from uuid import UUID

from django.db import connection

from reconsolidation import bounds, grouping
from reconsolidation.domain import GroupDraft, SourceRef
from reconsolidation.inventory import sql
from reconsolidation.inventory.lanes import MODEL_LANE_MAX_ANCHORS, fetch_rows, model_phase_end
from reconsolidation.models import ReconsolidationJob
from reconsolidation.rows import owner_fields
from veetbot.identity import Principal


def walk_model_lane(
    principal: Principal, job: ReconsolidationJob, *, want: int, seen: set[str], now: datetime,
) -> tuple[list[GroupDraft], list[tuple[SourceRef, str]]]:
    """Advance the job's model lane (caller holds the job lock and saves it): up to
    ``want`` new groups for the oldest anchors after the model cursor, and every eligible
    anchor decided on the way (grouped, duplicate, no_neighbours). The cursor stops just
    before the first anchor left undecided, so nothing is skipped; at most
    ``MODEL_LANE_MAX_ANCHORS`` rows are passed per slice. With no group slot the lane waits.

    Its pages double (2, 4, 8, …) as ``grouping.decide``'s statements do, each page one
    statement."""
    drafts: list[GroupDraft] = []
    decided: list[tuple[SourceRef, str]] = []
    budget, batch = MODEL_LANE_MAX_ANCHORS, bounds.RECON_NEIGHBOUR_BATCH_ANCHORS
    while job.model_phase < 2 and budget > 0 and len(drafts) < want:
        rows = fetch_rows(principal, "full", after=job.model_cursor_sequence, through=model_phase_end(job),
                          limit=min(batch, budget), now=now)
        if not rows:
            job.model_phase, job.model_cursor_sequence = job.model_phase + 1, 0
            if job.model_phase == 1 and job.full_start_key <= 1:
                job.model_phase = 2
            continue
        refs = [SourceRef(memory_id=memory_id, creation_sequence=sequence, content_revision=revision,
                          eligible=reason == "", reason=reason) for memory_id, sequence, revision, reason in rows]
        found, outcomes = grouping.decide(principal, [(ref, "full") for ref in refs if ref.eligible],
                                          start_key=job.full_start_key, want=want - len(drafts), now=now, seen=seen,
                                          batch=batch)
        batch *= 2
        drafts.extend(found)
        for ref in refs:
            if ref.eligible and ref.memory_id not in outcomes:
                break  # undecided: the next slice starts here
            if ref.eligible:
                decided.append((ref, outcomes[ref.memory_id]))
            job.model_cursor_sequence = ref.creation_sequence
            budget -= 1
    job.model_anchors += len(decided)
    return drafts, decided


def write_model_receipts(principal: Principal, job: ReconsolidationJob, decided: Sequence[tuple[SourceRef, str]],
                          group_of: Mapping[UUID, UUID], now: datetime) -> None:
    if not decided:
        return
    with connection.cursor() as cursor:
        cursor.execute(sql.MODEL_RECEIPTS_UPSERT, {
            **owner_fields(principal), "job_id": job.id, "policy": bounds.POLICY, "generation": job.full_generation,
            "now": now, "memory_ids": [ref.memory_id for ref, _ in decided],
            "revisions": [ref.content_revision for ref, _ in decided],
            "outcomes": [outcome for _, outcome in decided], "reasons": ["" for _ in decided],
            "group_ids": [group_of.get(ref.memory_id) for ref, _ in decided],
        })


# --- The equivalence pass ----------------------------------------------------------------
# Exact-key duplicates need no model and no group slot. Every checkpoint carries the
# digests of its scanned anchors that another eligible original shares into the durable
# backlog (in the checkpoint's own transaction, with the cursors), then plans merges for
# the oldest carried sets, each in its own short transaction through the writers
# (``operations.commit``: owner lock, sources locked in UUID order, every gate), within
# the slice's operation budget. What does not fit stays in the backlog for the next
# slice of the same generation, and a generation completes only once it is empty.

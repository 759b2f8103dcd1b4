"""Grouping: for each eligible anchor, a bounded group of related originals across sessions.

Neighbours come from ``reconsolidation_neighbours`` (migration 0002): exact (normalised)
subject and known entity IDs first, then lexical overlap on the stored English full-text
document of subject + statement, each channel an indexed probe with its own bound; a
lexical-only neighbour must share ``RECON_NEIGHBOUR_MIN_OVERLAP_LEXEMES``; owner, lifecycle,
erasure, expiry, direct derivation, sensitivity, scope and owner evidence are applied
inside every probe, before any bound. At most ``RECON_GROUP_MAX_MEMBERS - 1`` neighbours
are kept, ordered by subject/entity match, overlap score, the generation's rotated
creation key and UUID; the anchor is appended. Nothing compares all pairs.

Anchors are looked up in order (changed lane first) in batches of
``RECON_NEIGHBOUR_BATCH_ANCHORS`` per statement, and lookup stops once the slice has its
groups: the remaining anchors are left for the checkpoint to mark ``not_selected``.

This module reads only; it never writes, never calls a provider, and returns IDs,
revisions and digests — never text.
"""
from __future__ import annotations

from datetime import datetime
from typing import Sequence
from uuid import UUID

from django.db import connection

from reconsolidation import bounds
from reconsolidation.pipeline import inventory_sql as sql
from reconsolidation.domain import GroupDraft, InputRef, SourceRef, input_digest, sorted_inputs
from reconsolidation.models import ReconsolidationGroup
from reconsolidation.pipeline.sources import allowed_sensitivities
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context


def neighbours(principal: Principal, anchor_ids: Sequence[UUID], *, start_key: int, now: datetime) -> dict[UUID, list[tuple]]:
    """anchor -> [(memory_id, match_rank, overlap, creation_sequence, content_revision)], best first.
    Caller holds the owner context."""
    with connection.cursor() as cursor:
        cursor.execute(sql.NEIGHBOURS, {
            "anchors": list(anchor_ids), "now": now, "sensitivities": allowed_sensitivities(),
            "start_key": start_key, "neighbours": bounds.RECON_GROUP_MAX_MEMBERS - 1,
            "channel_rows": bounds.RECON_NEIGHBOUR_CHANNEL_ROWS, "max_lexemes": bounds.RECON_NEIGHBOUR_MAX_LEXEMES,
            "min_overlap": bounds.RECON_NEIGHBOUR_MIN_OVERLAP_LEXEMES,
        })
        found: dict[UUID, list[tuple]] = {anchor: [] for anchor in anchor_ids}
        for anchor_id, memory_id, match_rank, overlap, creation_sequence, revision in cursor.fetchall():
            found[anchor_id].append((memory_id, match_rank, overlap, creation_sequence, revision))
    rotated = lambda row: (-row[1], -row[2], row[3] < start_key, row[3], str(row[0]))  # noqa: E731
    return {anchor: sorted(rows, key=rotated) for anchor, rows in found.items()}


def select_groups(
    principal: Principal, *, anchors: Sequence[tuple[SourceRef, str]], start_key: int, want: int, now: datetime,
) -> tuple[list[GroupDraft], dict[UUID, str]]:
    """Up to ``want`` new groups for ``anchors`` (eligible ones, in priority order), and the
    grouping outcome of every anchor looked at: grouped, duplicate or no_neighbours."""
    now = require_aware(now)
    drafts: list[GroupDraft] = []
    outcomes: dict[UUID, str] = {}
    seen: set[str] = set()
    candidates = [(ref, lane) for ref, lane in anchors if ref.eligible]
    batch = bounds.RECON_NEIGHBOUR_BATCH_ANCHORS
    if want <= 0:
        return drafts, outcomes
    with owner_context(principal):
        for start in range(0, len(candidates), batch):
            chunk = candidates[start:start + batch]
            found = neighbours(principal, [ref.memory_id for ref, _ in chunk], start_key=start_key, now=now)
            proposals = {}
            for ref, lane in chunk:
                rows = found.get(ref.memory_id, [])
                if not rows:
                    continue
                inputs = sorted_inputs([
                    InputRef(memory_id=ref.memory_id, content_revision=ref.content_revision),
                    *(InputRef(memory_id=row[0], content_revision=row[4]) for row in rows),
                ])
                proposals[ref.memory_id] = (lane, inputs, input_digest(inputs))
            existing = set(ReconsolidationGroup.objects.filter(
                policy=bounds.POLICY, input_digest__in=[p[2] for p in proposals.values()],
            ).values_list("input_digest", flat=True)) if proposals else set()
            for ref, _ in chunk:
                proposal = proposals.get(ref.memory_id)
                if proposal is None:
                    outcomes[ref.memory_id] = "no_neighbours"
                    continue
                lane, inputs, digest = proposal
                if digest in existing or digest in seen:
                    outcomes[ref.memory_id] = "duplicate"
                    continue
                seen.add(digest)
                drafts.append(GroupDraft(anchor_id=ref.memory_id, lane=lane, inputs=inputs, input_digest=digest))
                outcomes[ref.memory_id] = "grouped"
                if len(drafts) >= want:
                    return drafts, outcomes
    return drafts, outcomes

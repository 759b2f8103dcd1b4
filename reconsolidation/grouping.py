"""Grouping: for each eligible anchor, a bounded group of related originals across sessions.

Nothing compares all pairs. Neighbours come from indexed probes, each with its own bound:
``reconsolidation_neighbours`` (exact subject and entity IDs first, then lexical overlap;
``inventory/sql.py`` says why it is a SQL function) and a semantic arm over stored vectors
(``semantic_neighbours``), so paraphrases with few shared words still meet. Every
eligibility predicate — owner, lifecycle, erasure, expiry, derivation, sensitivity, scope,
owner evidence — is applied inside each probe *before* any bound, so an ineligible row can
neither join a group nor displace an eligible neighbour. A group holds at most
``RECON_GROUP_MAX_MEMBERS`` members: the anchor and its best neighbours (``neighbours``).

``select_groups`` serves the changed lane; full-lane anchors are reached by the model lane
(``inventory.model_lane``), so an anchor a slice cannot take stays ``queued``, not
``not_selected``.

This module reads only; it never writes, never calls a provider, and returns IDs,
revisions and digests — never text.
"""
from __future__ import annotations

from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from django.db import connection

from recall import encoders
from recall.arms.semantic import use_exact_search
from reconsolidation import bounds
from reconsolidation.inventory import sql
from reconsolidation.inventory.lanes import changed_lane_slots
from reconsolidation.domain import GroupDraft, InputRef, SourceRef, input_digest, sorted_inputs
from reconsolidation.models import ReconsolidationGroup, ReconsolidationJob
from reconsolidation.sources import allowed_sensitivities
from veetbot.clock import require_aware
from veetbot.identity import Principal
from veetbot.rls import owner_context


def neighbours(principal: Principal, anchor_ids: Sequence[UUID], *, start_key: int, now: datetime) -> dict[UUID, list[tuple]]:
    """anchor -> [(memory_id, match_rank, overlap, creation_sequence, content_revision)], best first.
    Caller holds the owner context.

    At most ``RECON_GROUP_MAX_MEMBERS - 1`` per anchor: the lexical neighbours (a lexical-only
    one must share ``RECON_NEIGHBOUR_MIN_OVERLAP_LEXEMES``) ordered by subject/entity match,
    overlap score, the generation's rotated creation key and UUID, then the semantic ones
    (nearest first) under the same total bound.
    """
    found = lexical_neighbours(anchor_ids, start_key=start_key, now=now)
    rotated = lambda row: (-row[1], -row[2], row[3] < start_key, row[3], str(row[0]))  # noqa: E731
    bound = bounds.RECON_GROUP_MAX_MEMBERS - 1
    # Semantic rows only fill what the lexical probe left of the bound, so an anchor whose
    # lexical neighbours already fill it is not probed: the same groups, one probe fewer.
    nearest = semantic_neighbours(principal, [anchor for anchor, rows in found.items() if len(rows) < bound], now=now)
    merged: dict[UUID, list[tuple]] = {}
    for anchor, rows in found.items():
        lexical = sorted(rows, key=rotated)
        known = {row[0] for row in lexical}
        extra = [row for row in nearest.get(anchor, []) if row[0] not in known]
        merged[anchor] = (lexical + extra)[:bound]
    return merged


def lexical_neighbours(anchor_ids: Sequence[UUID], *, start_key: int, now: datetime) -> dict[UUID, list[tuple]]:
    """anchor -> [(memory_id, match_rank, overlap, creation_sequence, content_revision)] from
    ``reconsolidation_neighbours``: subject, entity and lexeme matches, unordered. Caller
    holds the owner context."""
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
    return found


def semantic_neighbours(principal: Principal, anchor_ids: Sequence[UUID], *, now: datetime) -> dict[UUID, list[tuple]]:
    """anchor -> [(memory_id, 0, 0, creation_sequence, content_revision)], nearest first, from
    the configured encoder's space; {} when semantic recall is off (or for an anchor with no
    current vector). Same hard predicates as the lexical probe, equal scope, within
    ``RECON_SEMANTIC_NEIGHBOUR_MAX_DISTANCE`` (``inventory.sql.semantic_neighbours_sql``): an
    exact scan while the owner has few vectors, the HNSW index above that, as recall does. An
    index probe that comes back with fewer than the bound's nearest rows (before the distance
    bound) is never taken as final — the scan may have spent its tuple bound on other owners'
    vectors, or the owner has fewer eligible originals of that scope — and that anchor is
    searched exactly, as recall's semantic arm does. An anchor of a local scope with at most
    ``RECALL_EXACT_SEARCH_MAX_VECTORS`` originals is searched exactly among them alone
    whenever the owner is searched through the index.
    Caller holds the owner context. Reads stored vectors only: nothing is encoded here.
    """
    from django.conf import settings

    if not settings.AGENT_MEMORY_SEMANTIC_ENABLED or not anchor_ids:
        return {}
    try:
        encoder = encoders.get_encoder()
    except encoders.EncoderUnavailable:
        return {}
    if encoder is None:
        return {}
    space = encoder.tuple.space
    exact = use_exact_search(space, (principal.tenant_id, principal.principal_id),  # else HNSW, tuned
                             ef_search=bounds.RECON_SEMANTIC_HNSW_EF_SEARCH)
    bound, max_distance = bounds.RECON_GROUP_MAX_MEMBERS - 1, bounds.RECON_SEMANTIC_NEIGHBOUR_MAX_DISTANCE
    params = {"tenant_id": principal.tenant_id, "principal_id": principal.principal_id, "space": space, "now": now,
              "sensitivities": allowed_sensitivities(), "neighbours": bound, "max_distance": max_distance}
    nearest: dict[UUID, list[tuple]] = {anchor: [] for anchor in anchor_ids}
    with connection.cursor() as cursor:
        # Searched through the index, an anchor of a small local scope is compared with its
        # scope's originals only: an index probe would walk the owner's other scopes for the
        # few it may keep, then come back short and search exactly anyway. (An owner
        # searched exactly has few vectors: one scan of them serves every anchor.)
        local: set[UUID] = set()
        if not exact:
            cursor.execute(sql.SMALL_LOCAL_SCOPE_ANCHORS, {**params, "anchors": list(anchor_ids),
                                                            "small": settings.RECALL_EXACT_SEARCH_MAX_VECTORS})
            local = {row[0] for row in cursor.fetchall()}
        if local:
            cursor.execute(sql.SEMANTIC_NEIGHBOURS_IN_SCOPE, {**params, "anchors": list(local)})
            for anchor_id, *row in cursor.fetchall():
                nearest[anchor_id].append(tuple(row))
        rest = [anchor for anchor in anchor_ids if anchor not in local]
        if not exact and rest:
            cursor.execute(sql.semantic_neighbours_sql(exact=False), {**params, "anchors": rest})
            for anchor_id, *row in cursor.fetchall():
                nearest[anchor_id].append(tuple(row))
        short = [anchor for anchor in rest if exact or len(nearest[anchor]) < bound]
        if short:
            cursor.execute(sql.semantic_neighbours_sql(exact=True), {**params, "anchors": short})
            for anchor in short:
                nearest[anchor] = []
            for anchor_id, *row in cursor.fetchall():
                nearest[anchor_id].append(tuple(row))
    found: dict[UUID, list[tuple]] = {}
    for anchor_id, rows in nearest.items():
        for memory_id, creation_sequence, revision, distance in rows:
            if distance <= max_distance:
                found.setdefault(anchor_id, []).append((memory_id, 0, 0, creation_sequence, revision))
    return found


def anchor_drafts(
    principal: Principal, chunk: Sequence[tuple[SourceRef, str]], *, start_key: int, now: datetime,
) -> dict[UUID, Optional[GroupDraft]]:
    """anchor -> its candidate group (None: no neighbours) for one batch of eligible
    anchors, in one neighbour statement. Caller holds the owner context."""
    found = neighbours(principal, [ref.memory_id for ref, _ in chunk], start_key=start_key, now=now)
    drafts: dict[UUID, Optional[GroupDraft]] = {}
    for ref, lane in chunk:
        rows = found.get(ref.memory_id, [])
        if not rows:
            drafts[ref.memory_id] = None
            continue
        inputs = sorted_inputs([
            InputRef(memory_id=ref.memory_id, content_revision=ref.content_revision),
            *(InputRef(memory_id=row[0], content_revision=row[4]) for row in rows),
        ])
        drafts[ref.memory_id] = GroupDraft(anchor_id=ref.memory_id, lane=lane, inputs=inputs,
                                           input_digest=input_digest(inputs))
    return drafts


def known_digests(drafts: Sequence[Optional[GroupDraft]]) -> set[str]:
    """The digests among ``drafts`` that some group of the owner already has."""
    wanted = [draft.input_digest for draft in drafts if draft is not None]
    if not wanted:
        return set()
    return set(ReconsolidationGroup.objects.filter(policy=bounds.POLICY, input_digest__in=wanted)
               .values_list("input_digest", flat=True))


def decide(
    principal: Principal, candidates: Sequence[tuple[SourceRef, str]], *, start_key: int, want: int, now: datetime,
    seen: set[str], batch: int = bounds.RECON_NEIGHBOUR_BATCH_ANCHORS,
) -> tuple[list[GroupDraft], dict[UUID, str]]:
    """Look ``candidates`` (eligible, in priority order) up until ``want`` new groups are
    found: the drafts and the outcome of every anchor decided (grouped, duplicate,
    no_neighbours). Anchors after the last new group are left undecided. ``seen`` holds the
    digests already drafted in this slice (updated). Caller holds the owner context.

    The first statement looks up ``batch`` anchors and each next one twice as many: most
    calls find their groups in the first (an anchor looked up past the last group found is
    probed for nothing, so the first is small), and a run of duplicate or isolated anchors
    then costs a few statements, whose key probes the batch's anchors share."""
    drafts: list[GroupDraft] = []
    outcomes: dict[UUID, str] = {}
    if want <= 0:
        return drafts, outcomes
    start = 0
    while start < len(candidates):
        chunk = candidates[start:start + batch]
        start, batch = start + batch, 2 * batch
        found = anchor_drafts(principal, chunk, start_key=start_key, now=now)
        existing = known_digests(list(found.values()))
        for ref, _ in chunk:
            draft = found[ref.memory_id]
            if draft is None:
                outcomes[ref.memory_id] = "no_neighbours"
                continue
            if draft.input_digest in existing or draft.input_digest in seen:
                outcomes[ref.memory_id] = "duplicate"
                continue
            seen.add(draft.input_digest)
            drafts.append(draft)
            outcomes[ref.memory_id] = "grouped"
            if len(drafts) >= want:
                return drafts, outcomes
    return drafts, outcomes


def select_groups(
    principal: Principal, *, anchors: Sequence[tuple[SourceRef, str]], start_key: int, want: int, now: datetime,
) -> tuple[list[GroupDraft], dict[UUID, str]]:
    """Up to ``want`` new groups for the slice's *changed* anchors (eligible ones, in
    priority order), and the grouping outcome of every anchor looked at: grouped,
    duplicate or no_neighbours. Full-lane anchors are the model lane's: the checkpoint
    walks them from the job's model cursor (``inventory.model_lane``), so no anchor a slice
    cannot take is a dead end."""
    now = require_aware(now)
    candidates = [(ref, lane) for ref, lane in anchors if ref.eligible and lane == "changed"]
    with owner_context(principal):
        leased = ReconsolidationJob.objects.filter(policy=bounds.POLICY, lease_token__isnull=False).first()
        return decide(principal, candidates, start_key=start_key, want=changed_lane_slots(leased, want), now=now,
                      seen=set())

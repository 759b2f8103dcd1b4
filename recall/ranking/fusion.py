"""Weighted reciprocal-rank fusion of the arms' ranked candidate lists.

score(d) = Σ over the lists that hold d of weight(list) / (k + rank), rank counted from 1,
k = settings.RECALL_RRF_K and weight(list) = settings.RECALL_RRF_WEIGHTS[arm] (1 for an
arm it does not name; all 1 is plain RRF). Only ranks count, never the arms' raw signals,
so lists on different scales (coverage, tiers, cosine distance) fuse without calibration.

Two refinements keep coarse signals from outvoting a strong semantic match: equal signals
of the arms in settings.RECALL_RRF_SHARED_TIE_ARMS share one rank (``_ranks``), and
``min_signals`` gives an arm a vote floor (in hybrid, lexical coverage: ``lexical_floor``).

A candidate appears once in the result however many lists hold it. Ties of the fused score
are stable: higher store position first, then lower ID.

Pure: no database; settings are read only for the arguments left out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Protocol, Sequence
from uuid import UUID

from django.conf import settings


@dataclass(frozen=True)
class Ranked:
    id: UUID
    score: float
    store_position: int


class _HasPosition(Protocol):  # what fusion needs of a candidate (recall.arms.permitted.Candidate)
    @property
    def id(self) -> UUID: ...

    @property
    def store_position(self) -> int: ...

    @property
    def signal(self) -> float: ...


def _ranks(candidates: Sequence[_HasPosition], shared_ties: bool) -> dict[UUID, float]:
    """Each candidate's rank in its list (first occurrence only), from 1; equal signals
    share the mean of their positions when ``shared_ties``.

    The lexical and structured arms rank by a coarse signal — a coverage count, a tier — and
    break its ties by recency (store position) only to be deterministic. Counting those
    tie-break positions as ranks would hand every newer belief with the same coverage (or
    every newer belief of an anchored type) a better rank than an older one the arm cannot
    tell apart from it, and the newest of a broad anchor list would outvote a strong
    semantic match. The semantic arm's distances are not coarse and keep their own order.
    """
    unique: list[_HasPosition] = []
    seen: set[UUID] = set()
    for candidate in candidates:
        if candidate.id not in seen:  # a list votes once per candidate
            seen.add(candidate.id)
            unique.append(candidate)
    ranks: dict[UUID, float] = {}
    start = 0
    while start < len(unique):
        end = start + 1
        if shared_ties:
            while end < len(unique) and unique[end].signal == unique[start].signal:
                end += 1
        rank = (start + 1 + end) / 2  # mean of positions start+1 .. end
        for candidate in unique[start:end]:
            ranks[candidate.id] = rank
        start = end
    return ranks


def reciprocal_rank_fusion(
    lists: Mapping[str, Sequence[_HasPosition]], *, k: Optional[int] = None,
    weights: Optional[Mapping[str, float]] = None, shared_tie_arms: Optional[Iterable[str]] = None,
    min_signals: Optional[Mapping[str, float]] = None,
) -> list[Ranked]:
    """The fused list. ``min_signals``: arm -> the least signal with which its candidates vote
    (one below stays a candidate but gets no vote from that arm; ranks are counted among
    those that do vote). Only arms whose signal grows with relevance (coverage) may be given
    one: a belief matching one word of a six-word question is lexical noise that would
    otherwise outvote a semantic match."""
    k = settings.RECALL_RRF_K if k is None else k
    floors = min_signals or {}
    weights = settings.RECALL_RRF_WEIGHTS if weights is None else weights
    shared = set(settings.RECALL_RRF_SHARED_TIE_ARMS if shared_tie_arms is None else shared_tie_arms)
    scores: dict[UUID, float] = {}
    positions: dict[UUID, int] = {}
    for arm, candidates in lists.items():
        weight = weights.get(arm, 1.0)
        if arm in floors:
            candidates = [c for c in candidates if c.signal >= floors[arm]]
        for memory_id, rank in _ranks(candidates, arm in shared).items():
            scores[memory_id] = scores.get(memory_id, 0.0) + weight / (k + rank)
        for candidate in candidates:
            positions[candidate.id] = candidate.store_position
    ranked = [Ranked(id=i, score=s, store_position=positions[i]) for i, s in scores.items()]
    ranked.sort(key=lambda r: (-r.score, -r.store_position, r.id))
    return ranked


def union_ids(lists: Iterable[Sequence[_HasPosition]]) -> list[UUID]:
    """Every candidate once, in the order first seen (arm by arm)."""
    seen: dict[UUID, None] = {}
    for candidates in lists:
        for candidate in candidates:
            seen.setdefault(candidate.id, None)
    return list(seen)


def lexical_floor(lexemes: Sequence[str]) -> int:
    """The least coverage with which a lexical candidate votes in hybrid fusion
    (``min_signals["lexical"]``): RECALL_HYBRID_LEXICAL_MIN_COVERAGE of the query's lexemes."""
    return max(1, math.ceil(settings.RECALL_HYBRID_LEXICAL_MIN_COVERAGE * len(lexemes)))

"""Reciprocal-rank fusion of the arms' ranked candidate lists.

score(d) = Σ over the lists that hold d of 1 / (k + rank), rank counted from 1 and k =
settings.RECALL_RRF_K (60 by default). Only ranks count, never the arms' raw signals, so
lists on different scales (coverage, tiers, cosine distance) fuse without calibration, and
semantic order follows cosine rank. A candidate appears once in the result however many
lists hold it (the union is deduplicated). Ties are stable: higher store position first,
then lower ID.

Pure: no database, no settings read unless ``k`` is omitted.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Protocol, Sequence
from uuid import UUID

from django.conf import settings


@dataclass(frozen=True)
class Ranked:
    id: UUID
    score: float
    store_position: int


class _HasPosition(Protocol):  # what fusion needs of a candidate (recall.arms.Candidate)
    @property
    def id(self) -> UUID: ...

    @property
    def store_position(self) -> int: ...


def reciprocal_rank_fusion(lists: Mapping[str, Sequence[_HasPosition]], *, k: Optional[int] = None) -> list[Ranked]:
    k = settings.RECALL_RRF_K if k is None else k
    scores: dict[UUID, float] = {}
    positions: dict[UUID, int] = {}
    for candidates in lists.values():
        seen: set[UUID] = set()
        rank = 0
        for candidate in candidates:
            if candidate.id in seen:  # a list votes once per candidate
                continue
            seen.add(candidate.id)
            rank += 1
            scores[candidate.id] = scores.get(candidate.id, 0.0) + 1.0 / (k + rank)
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

"""Reciprocal-rank fusion: ranks only, deduplicated, stable ties."""
from __future__ import annotations

import uuid

import pytest

from recall.arms import Candidate
from recall.fusion import reciprocal_rank_fusion, union_ids


def c(memory_id, position=1, signal=0.0):
    return Candidate(id=memory_id, store_position=position, signal=signal)


A, B, C, D = (uuid.UUID(int=n) for n in (1, 2, 3, 4))


def test_score_is_the_sum_of_reciprocal_ranks_with_k():
    fused = reciprocal_rank_fusion({"lexical": [c(A), c(B)], "semantic": [c(B), c(C)]}, k=60)
    scores = {r.id: r.score for r in fused}
    assert scores[A] == pytest.approx(1 / 61)
    assert scores[B] == pytest.approx(1 / 62 + 1 / 61)
    assert scores[C] == pytest.approx(1 / 62)
    assert [r.id for r in fused] == [B, A, C]


def test_k_defaults_to_the_setting(settings):
    settings.RECALL_RRF_K = 10
    (only,) = reciprocal_rank_fusion({"lexical": [c(A)]})
    assert only.score == pytest.approx(1 / 11)


def test_raw_signals_never_count_only_ranks():
    fused = reciprocal_rank_fusion({"lexical": [c(A, signal=99.0), c(B, signal=1.0)],
                                    "semantic": [c(B, signal=0.0001), c(A, signal=0.9)]}, k=60)
    assert fused[0].score == pytest.approx(fused[1].score)


def test_union_is_deduplicated_and_a_list_votes_once_per_candidate():
    fused = reciprocal_rank_fusion({"lexical": [c(A), c(A), c(B)]}, k=60)
    assert [r.id for r in fused] == [A, B]
    assert fused[1].score == pytest.approx(1 / 62)
    assert union_ids([[c(A), c(B)], [c(B), c(C)], [c(A)]]) == [A, B, C]


def test_ties_break_by_store_position_desc_then_id():
    fused = reciprocal_rank_fusion({"x": [c(C, 5)], "y": [c(A, 5)], "z": [c(B, 9)], "w": [c(D, 5)]}, k=60)
    assert [r.id for r in fused] == [B, A, C, D]


def test_empty_lists_fuse_to_nothing():
    assert reciprocal_rank_fusion({}, k=60) == []
    assert reciprocal_rank_fusion({"lexical": []}, k=60) == []

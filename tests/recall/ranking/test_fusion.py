"""Weighted reciprocal-rank fusion: ranks only, deduplicated, shared ranks for coarse ties, stable order."""
from __future__ import annotations

import uuid

import pytest

from recall.arms.permitted import Candidate
from recall.ranking.fusion import reciprocal_rank_fusion, union_ids


def c(memory_id, position=1, signal=0.0):
    return Candidate(id=memory_id, store_position=position, signal=signal)


A, B, C, D = (uuid.UUID(int=n) for n in (1, 2, 3, 4))


def test_score_is_the_sum_of_reciprocal_ranks_with_k():
    fused = reciprocal_rank_fusion({"lexical": [c(A), c(B)], "semantic": [c(B), c(C)]}, k=60,
                                   weights={}, shared_tie_arms=())
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
                                    "semantic": [c(B, signal=0.0001), c(A, signal=0.9)]}, k=60, weights={})
    assert fused[0].score == pytest.approx(fused[1].score)


def test_union_is_deduplicated_and_a_list_votes_once_per_candidate():
    fused = reciprocal_rank_fusion({"lexical": [c(A), c(A), c(B)]}, k=60, shared_tie_arms=())
    assert [r.id for r in fused] == [A, B]
    assert fused[1].score == pytest.approx(1 / 62)
    assert union_ids([[c(A), c(B)], [c(B), c(C)], [c(A)]]) == [A, B, C]


def test_ties_break_by_store_position_desc_then_id():
    fused = reciprocal_rank_fusion({"x": [c(C, 5)], "y": [c(A, 5)], "z": [c(B, 9)], "w": [c(D, 5)]}, k=60)
    assert [r.id for r in fused] == [B, A, C, D]


def test_empty_lists_fuse_to_nothing():
    assert reciprocal_rank_fusion({}, k=60) == []
    assert reciprocal_rank_fusion({"lexical": []}, k=60) == []


def test_weights_scale_each_arms_contribution():
    fused = reciprocal_rank_fusion({"lexical": [c(A)], "semantic": [c(B)]}, k=60,
                                   weights={"semantic": 3.0}, shared_tie_arms=())
    scores = {r.id: r.score for r in fused}
    assert scores[A] == pytest.approx(1 / 61) and scores[B] == pytest.approx(3 / 61)
    assert [r.id for r in fused] == [B, A]


def test_weights_and_shared_ties_default_to_the_settings(settings):
    settings.RECALL_RRF_WEIGHTS = {"semantic": 2.0}
    settings.RECALL_RRF_SHARED_TIE_ARMS = ("lexical",)
    fused = reciprocal_rank_fusion({"lexical": [c(A, signal=1.0), c(B, signal=1.0)], "semantic": [c(C)]}, k=60)
    scores = {r.id: r.score for r in fused}
    assert scores[A] == pytest.approx(1 / 61.5) == pytest.approx(scores[B])
    assert scores[C] == pytest.approx(2 / 61)


def test_equal_signals_share_the_mean_rank_of_their_run_in_tie_arms():
    # coverage 3, then three beliefs with coverage 2 (tie-broken by recency), then coverage 1
    lexical = [c(A, signal=3.0), c(B, signal=2.0), c(C, signal=2.0), c(D, signal=2.0), c(uuid.UUID(int=5), signal=1.0)]
    fused = reciprocal_rank_fusion({"lexical": lexical}, k=60, weights={}, shared_tie_arms=("lexical",))
    scores = {r.id: r.score for r in fused}
    assert scores[A] == pytest.approx(1 / 61)
    assert scores[B] == scores[C] == scores[D] == pytest.approx(1 / 63)  # positions 2, 3, 4
    assert scores[uuid.UUID(int=5)] == pytest.approx(1 / 65)


def test_a_newer_tie_no_longer_outranks_an_older_semantic_match():
    # B is newer than A (listed first on the tie), A is the better semantic match
    lexical = [c(B, position=9, signal=2.0), c(A, position=1, signal=2.0)]
    semantic = [c(A, position=1, signal=0.1), c(B, position=9, signal=0.2)]
    plain = reciprocal_rank_fusion({"lexical": lexical, "semantic": semantic}, k=60, weights={}, shared_tie_arms=())
    shared = reciprocal_rank_fusion({"lexical": lexical, "semantic": semantic}, k=60, weights={},
                                    shared_tie_arms=("lexical",))
    assert [r.id for r in plain] == [B, A]  # equal scores: the newer wins the tie
    assert [r.id for r in shared] == [A, B]


def test_semantic_and_recent_lists_keep_their_own_order_by_default():
    recent = [c(A, signal=0.0), c(B, signal=0.0)]
    fused = reciprocal_rank_fusion({"recent": recent}, k=60)
    assert [r.score for r in fused] == [pytest.approx(1 / 61), pytest.approx(1 / 62)]

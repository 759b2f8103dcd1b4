"""Vote floors in fusion, and the hybrid lexical-coverage floor (RECALL_HYBRID_LEXICAL_MIN_COVERAGE)."""
from __future__ import annotations

import uuid

import pytest

from recall.arms.permitted import Candidate
from recall.ranking.fusion import lexical_floor, reciprocal_rank_fusion
from tests.recall.helpers import Bank, MappedEncoder, bank, basis, semantic_on  # noqa: F401

A, B, C = (uuid.UUID(int=n) for n in (1, 2, 3))


def c(memory_id, signal, position=1):
    return Candidate(id=memory_id, store_position=position, signal=signal)


def test_a_candidate_below_its_arms_floor_gets_no_vote_and_ranks_count_among_voters():
    fused = reciprocal_rank_fusion({"lexical": [c(A, 3.0), c(B, 2.0), c(C, 1.0)]}, k=60, weights={},
                                   shared_tie_arms=(), min_signals={"lexical": 2.0})
    assert {r.id: r.score for r in fused} == {A: pytest.approx(1 / 61), B: pytest.approx(1 / 62)}


def test_a_floor_applies_to_its_own_arm_only():
    fused = reciprocal_rank_fusion({"lexical": [c(A, 1.0)], "semantic": [c(A, 0.1)]}, k=60, weights={},
                                   shared_tie_arms=(), min_signals={"lexical": 2.0})
    assert [(r.id, r.score) for r in fused] == [(A, pytest.approx(1 / 61))]


def test_the_lexical_floor_is_a_fraction_of_the_query_lexemes_and_at_least_one(settings):
    settings.RECALL_HYBRID_LEXICAL_MIN_COVERAGE = 0.5
    assert [lexical_floor(["x"] * n) for n in (0, 1, 2, 3, 4, 5, 6)] == [1, 1, 1, 2, 2, 3, 3]
    settings.RECALL_HYBRID_LEXICAL_MIN_COVERAGE = 0.0
    assert lexical_floor(["x"] * 6) == 1


def test_hybrid_drops_one_word_lexical_noise_that_sparse_keeps(bank, semantic_on):
    query = "passport renewal town hall"  # four lexemes: a hybrid lexical vote needs two
    encoder = MappedEncoder({query: basis(0)})
    noise = bank.add("Passport photos are in a drawer.", subject="photos", belief_type="fact")
    strong = bank.add("Renewed the passport at the town hall.", subject="paperwork", belief_type="fact")
    semantic = bank.add("Travel documents were sorted out last spring.", subject="documents", belief_type="fact")
    bank.vector(semantic, basis(0), encoder)
    hybrid = bank.recall(query, encoder=encoder)
    assert noise in hybrid.stages.lexical_ids and noise in hybrid.stages.candidate_ids
    assert noise not in hybrid.stages.ranked_ids
    assert set(hybrid.stages.ranked_ids) == {strong, semantic}
    sparse = bank.recall(query, channel="sparse")
    assert noise in sparse.stages.ranked_ids

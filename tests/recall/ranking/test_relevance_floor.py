"""The relevance floor (recall.ranking.floor, RECALL_RELEVANCE_SIMILARITY_MARGIN): ranked originals
no channel relates to the query are not rendered; the trace says how many were withheld."""
from __future__ import annotations

import uuid

import pytest

from recall.arms.permitted import Candidate
from recall.context import planner
from recall.context.former import ContextNeed
from recall.ranking.floor import relevance_floor
from recall.models import RecallTrace
from tests.recall.helpers import NOW, MappedEncoder, bank, basis, blend, semantic_on  # noqa: F401
from veetbot.rls import owner_context

A, B, C, D = (uuid.UUID(int=n) for n in (1, 2, 3, 4))


def c(memory_id, signal):
    return Candidate(id=memory_id, store_position=1, signal=signal)


# --- the rule, per channel signal ----------------------------------------------------------

def test_semantic_candidates_at_the_margin_are_kept_and_just_past_it_withheld():
    floor = relevance_floor({"semantic": [c(A, 0.0), c(B, 0.25), c(C, 0.2501)]}, lexical_min=None, margin=0.25)
    assert floor.min_similarity == pytest.approx(0.75)
    assert floor.split([A, B, C]) == ([A, B], [C])


def test_the_margin_is_relative_to_the_querys_nearest_original():
    # The same distances pass or fail by how near the nearest is, not by an absolute cosine.
    near = relevance_floor({"semantic": [c(A, 0.5), c(B, 0.7)]}, lexical_min=None, margin=0.25)
    assert near.min_similarity == pytest.approx(0.25) and near.split([A, B]) == ([A, B], [])
    far = relevance_floor({"semantic": [c(A, 0.1), c(B, 0.7)]}, lexical_min=None, margin=0.25)
    assert far.split([A, B]) == ([A], [B])


def test_a_lexical_vote_keeps_a_candidate_without_similarity_and_less_coverage_does_not():
    lists = {"semantic": [c(A, 0.0)], "lexical": [c(B, 2.0), c(C, 1.0)]}
    floor = relevance_floor(lists, lexical_min=2.0, margin=0.25)
    assert floor.split([A, B, C]) == ([A, B], [C])


def test_an_exact_structured_match_is_kept_and_a_broad_type_anchor_is_not():
    lists = {"semantic": [c(A, 0.0)], "structured": [c(B, 0.0), c(C, 1.0)]}
    assert relevance_floor(lists, lexical_min=1.0, margin=0.25).split([B, C]) == ([B], [C])


def test_expansion_siblings_are_kept_whatever_their_own_cosine():
    lists = {"semantic": [c(A, 0.0)], "expansion": [c(B, 0.9)]}
    assert relevance_floor(lists, lexical_min=1.0, margin=0.25).split([A, B, C]) == ([A, B], [C])


def test_dense_gives_no_lexical_or_structured_pass():
    lists = {"semantic": [c(A, 0.0), c(B, 0.9)], "lexical": [c(B, 5.0)], "structured": [c(B, 0.0)]}
    assert relevance_floor(lists, lexical_min=None, margin=0.25).split([A, B]) == ([A], [B])


def test_no_floor_without_a_semantic_list_or_with_margin_zero():
    assert relevance_floor({"lexical": [c(A, 1.0)], "structured": []}, lexical_min=1.0, margin=0.25) is None
    assert relevance_floor({"semantic": []}, lexical_min=None, margin=0.25) is None
    assert relevance_floor({"semantic": [c(A, 0.0)]}, lexical_min=None, margin=0.0) is None


def test_the_setting_is_read_when_no_margin_is_given(settings):
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.5
    assert relevance_floor({"semantic": [c(A, 0.0)]}, lexical_min=None).min_similarity == pytest.approx(0.5)


# --- through the retriever ---------------------------------------------------------------

QUERY = "what do I drink in the afternoon"


@pytest.fixture
def drinks(bank, semantic_on):
    encoder = MappedEncoder({QUERY: basis(0)})
    rows = {
        "coffee": bank.add("The owner drinks a flat white around three.", subject="coffee"),
        "tea": bank.add("Green tea after lunch on workdays.", subject="tea"),
        "bedtime": bank.add("Lights out at eleven, phone in the kitchen.", subject="bedtime"),
        "pottery": bank.add("Glazing class on Thursday evenings.", subject="pottery"),
        "lexical": bank.add("Afternoon walks by the canal.", subject="walks"),
    }
    bank.vector(rows["coffee"], basis(0), encoder)
    bank.vector(rows["tea"], blend(0, 1, 0.8), encoder)  # similarity 0.8: within 0.25 of the nearest
    bank.vector(rows["bedtime"], blend(0, 2, 0.5), encoder)  # 0.5: past the margin
    bank.vector(rows["pottery"], blend(0, 3, 0.3), encoder)
    bank.vector(rows["lexical"], blend(0, 4, 0.1), encoder)  # far by meaning, but "afternoon" is half the query
    return rows, encoder


def trace_of(bank, result):
    with owner_context(bank.principal):
        return RecallTrace.objects.get(id=result.trace_id)


def test_hybrid_renders_related_items_and_a_lexical_hit_but_withholds_unrelated_ones(bank, drinks, settings):
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.25
    rows, encoder = drinks
    result = bank.recall(QUERY, encoder=encoder)
    rendered = set(result.stages.rendered_ids)
    assert rendered == {rows["coffee"], rows["tea"], rows["lexical"]}
    assert set(result.stages.below_floor_ids) == {rows["bedtime"], rows["pottery"]}
    assert set(result.stages.ranked_ids) >= set(rows.values())  # the ranked stage keeps the whole fused order
    trace = trace_of(bank, result)
    assert trace.policy == ["recall@1", "semantic@2", "expansion@2", "floor@1"]
    assert trace.floor_withheld == 2 and trace.floor_min_similarity == pytest.approx(0.75, abs=1e-6)


def test_the_margin_just_past_an_item_withholds_it_and_just_beyond_keeps_it(bank, drinks, settings):
    rows, encoder = drinks
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.45  # threshold 0.55: bedtime (0.5) withheld
    assert rows["bedtime"] in bank.recall(QUERY, encoder=encoder).stages.below_floor_ids
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.55  # threshold 0.45: bedtime rendered, pottery not
    result = bank.recall(QUERY, encoder=encoder)
    assert rows["bedtime"] in result.stages.rendered_ids and rows["pottery"] in result.stages.below_floor_ids


def test_dense_applies_the_floor_to_similarity_alone(bank, drinks, settings):
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.25
    rows, encoder = drinks
    result = bank.recall(QUERY, encoder=encoder, channel="dense")
    assert set(result.stages.rendered_ids) == {rows["coffee"], rows["tea"]}
    assert trace_of(bank, result).floor_withheld == 3


def test_sparse_and_margin_zero_render_unfloored_and_trace_no_floor(bank, drinks, settings):
    rows, encoder = drinks
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.25
    sparse = bank.recall(QUERY, encoder=encoder, channel="sparse")
    trace = trace_of(bank, sparse)
    assert (trace.floor_min_similarity, trace.floor_withheld, sparse.stages.below_floor_ids) == (None, 0, ())
    assert "floor@1" not in trace.policy
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.0
    off = bank.recall(QUERY, encoder=encoder)
    assert set(off.stages.rendered_ids) == set(rows.values())
    assert trace_of(bank, off).floor_min_similarity is None


def test_an_exact_lexical_match_is_rendered_however_far_its_vector(bank, semantic_on, settings):
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.25
    query = "passport renewal town hall"
    encoder = MappedEncoder({query: basis(0)})
    near = bank.add("Travel documents were sorted out last spring.", subject="documents")
    exact = bank.add("Renewed the passport at the town hall.", subject="paperwork")
    bank.vector(near, basis(0), encoder)
    bank.vector(exact, basis(1), encoder)  # orthogonal to the query
    result = bank.recall(query, encoder=encoder)
    assert set(result.stages.rendered_ids) == {near, exact} and result.stages.below_floor_ids == ()


# --- context assembly: the floor leaves room for the second round -------------------------

def test_the_floor_keeps_unrelated_memories_out_of_an_assembled_context(bank, semantic_on, settings):
    question = "Where does my sister live?"
    # the reference the question makes ("my sister") means what the question does here
    encoder = MappedEncoder({question: basis(0), "my sister": basis(0)}, default=basis(9))
    lives = bank.add("Maria, the owner's sister, lives in Porto.", subject="Maria's flat")
    door = bank.add("The blue door on Rua Alegre is the one to knock on.", subject="Maria's flat")
    bank.vector(lives, basis(0), encoder)
    bank.vector(door, blend(0, 1, 0.2), encoder)
    noise = []
    for n in range(22):  # unrelated memories that, unfloored, fill round one's 20 items
        noise.append(bank.add(f"Pottery glaze batch {n} fired on a Thursday.", subject=f"glaze {n}"))
        bank.vector(noise[-1], blend(0, 10 + n, 0.3), encoder)

    def assemble():
        return planner.assemble(bank.principal, ContextNeed(current_message=question), filters={"ceiling": "internal"},
                                max_items=20, max_tokens=2000, now=NOW, encoder=encoder)

    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.0
    unfloored = assemble()
    assert unfloored.searches[0].returned == 20
    assert len(set(noise) & {i.id for i in unfloored.items}) >= 18
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = 0.25
    floored = assemble()
    # Round one renders the sister's home (and its same-subject sibling), not the pottery;
    # round two's reference search ("my sister") finds nothing more, and nothing was left out.
    assert floored.searches[0].returned == 2 and floored.rounds == 2 and floored.stopped == ""
    assert {i.id for i in floored.items} == {lives, door}
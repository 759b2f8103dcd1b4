"""Relevance is computed in SQL before every arm's limit.

Each test plants one *old* strong match and 200 *newer* weak matches of the same query,
with ``max_items=5`` so each arm keeps max(5 × 8, 64) = 64 candidates: an implementation
that took a recent page and re-sorted it would never see the old memory.
"""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory.domain import MemoryChanges
from memory.services import memory_revise
from recall.arms import permitted, structured
from tests.factories import T0
from tests.recall.helpers import MappedEncoder, bank, basis, blend, semantic_on  # noqa: F401

WEAK = 200
LATER = T0 + timedelta(days=3)


def test_arm_limit_is_eight_per_item_with_a_floor_of_64():
    assert permitted.arm_limit(5) == 64
    assert permitted.arm_limit(8) == 64
    assert permitted.arm_limit(20) == 160


def test_lexical_arm_keeps_an_old_full_coverage_match_amid_200_newer_single_term_matches(bank):
    old = bank.add("Grandmother's lasagna recipe uses nutmeg and ricotta.", subject="family recipe", belief_type="fact")
    bank.add_many([dict(statement=f"Ate lasagna at place {n}.", subject=f"dinner {n}", belief_type="fact")
                   for n in range(WEAK)], at=LATER)
    result = bank.recall("grandmother lasagna nutmeg ricotta", channel="sparse", max_items=5)
    assert len(result.stages.lexical_ids) == 64
    assert result.stages.lexical_ids[0] == old
    assert result.stages.ranked_ids[0] == old
    assert result.items[0].id == old


def test_lexical_coverage_counts_each_distinct_query_term_once(bank):
    # The older memory holds the repeated term; a repetition vote would rank it first.
    repeated = bank.add("A lasagna evening.", subject="evening a", belief_type="fact")
    single = bank.add("A nutmeg evening.", subject="evening b", belief_type="fact", at=LATER)
    result = bank.recall("lasagna lasagna lasagna nutmeg", channel="sparse")
    assert result.stages.lexical_ids == (single, repeated)  # equal coverage: newer first


def test_lexical_ties_break_by_store_position_then_id(bank):
    ids = bank.add_many([dict(statement="Ordered a lasagna.", subject=f"order {n}", belief_type="fact")
                         for n in range(3)])
    result = bank.recall("lasagna", channel="sparse")
    assert result.stages.lexical_ids == tuple(reversed(ids))


def test_lexical_matching_is_whole_lexeme_not_substring(bank):
    bank.add("The owner collects cartography books.", subject="hobby", belief_type="fact")
    result = bank.recall("car", channel="sparse")
    assert result.stages.lexical_ids == ()


def test_lexical_arm_copes_with_punctuation_quotes_and_backslashes_in_the_query(bank):
    url = bank.add("Bookmarked https://ex.com/a?b=1&c=2 for later.", subject="bookmark", belief_type="fact")
    result = bank.recall("what was https://ex.com/a?b=1&c=2 o'neil C:\\tmp\\x (again) 'quoted' | & !", channel="sparse")
    assert url in result.stages.lexical_ids


def test_stop_word_only_query_recalls_without_a_lexical_arm(bank):
    bank.add("Some statement.", subject="note", belief_type="fact")
    result = bank.recall("the of and", channel="sparse")
    assert result.stages.lexical_ids == ()
    assert result.trace_id is not None


def test_structured_arm_ranks_an_entity_id_match_before_200_newer_type_anchors(bank):
    old = bank.add("Booked the small hotel near the river.", subject="lodging", belief_type="fact",
                   entity_ids=("trip:lisbon-2026",))
    bank.add_many([dict(statement=f"Likes shade {n} of blue.", subject=f"colour {n}", belief_type="preference")
                   for n in range(WEAK)], at=LATER)
    result = bank.recall("what do I prefer", channel="sparse", max_items=5, entity_ids=("trip:lisbon-2026",))
    assert result.stages.lexical_ids == ()  # nothing shares a term: only the structured arm speaks
    assert len(result.stages.structured_ids) == 64
    assert result.stages.structured_ids[0] == old
    assert result.items[0].id == old


def test_structured_arm_ranks_an_exact_subject_phrase_before_200_newer_type_anchors(bank):
    old = bank.add("Always books 14A on long flights.", subject="Window-Seat", belief_type="fact")
    bank.add_many([dict(statement=f"Likes shade {n} of blue.", subject=f"colour {n}", belief_type="preference")
                   for n in range(WEAK)], at=LATER)
    result = bank.recall("Which window seat do I prefer?", channel="sparse", max_items=5)
    assert result.stages.structured_ids[0] == old
    assert len(result.stages.structured_ids) == 64


def test_subject_matches_only_as_a_whole_phrase_of_the_query(bank):
    partial = bank.add("Seat preference noted.", subject="window seats", belief_type="fact")
    result = bank.recall("window seat", channel="sparse", belief_types=())
    assert partial not in result.stages.structured_ids


def test_structured_arm_anchors_on_types_named_by_the_query_keywords(bank):
    goal = bank.add("Run a marathon in under four hours.", subject="running", belief_type="goal")
    fact = bank.add("Run club meets at the park.", subject="club", belief_type="fact")
    result = bank.recall("what are my goals", channel="sparse")
    assert goal in result.stages.structured_ids
    assert fact not in result.stages.structured_ids
    assert structured.anchor_types("what are my goals") == ["goal"]


def test_semantic_arm_keeps_an_old_exact_vector_match_amid_200_newer_weaker_ones(bank, semantic_on):
    encoder = MappedEncoder({"where did I park": basis(0)})
    old = bank.add("Left it on level three.", subject="garage", belief_type="fact")
    newer = bank.add_many([dict(statement=f"Weak {n}.", subject=f"weak {n}", belief_type="fact")
                           for n in range(WEAK)], at=LATER)
    bank.vector(old, basis(0), encoder)
    for n, memory_id in enumerate(newer):
        bank.vector(memory_id, blend(0, 1 + n % 300, 0.5), encoder)
    result = bank.recall("where did I park", channel="dense", encoder=encoder, max_items=5)
    assert result.channel == "dense"
    assert len(result.stages.dense_ids) == 64
    assert result.stages.dense_ids[0] == old
    assert result.items[0].id == old


def test_semantic_order_follows_cosine_rank(bank, semantic_on):
    encoder = MappedEncoder({"q": basis(0)})
    ids = bank.add_many([dict(statement=f"S {n}.", subject=f"s {n}", belief_type="fact") for n in range(3)])
    for memory_id, cosine in zip(ids, (0.7, 0.9, 0.8)):  # all within the relevance floor's margin
        bank.vector(memory_id, blend(0, 7, cosine), encoder)
    result = bank.recall("q", channel="dense", encoder=encoder)
    assert result.stages.dense_ids == (ids[1], ids[2], ids[0])
    assert [item.id for item in result.items] == [ids[1], ids[2], ids[0]]


# --- the historical path -----------------------------------------------------------------

AS_OF = T0 + timedelta(days=10)


@pytest.mark.parametrize("arm", ["lexical", "structured", "semantic"])
def test_historical_recall_keeps_an_old_strong_match_amid_200_newer_weak_ones(bank, semantic_on, arm):
    encoder = MappedEncoder({"grandmother lasagna nutmeg ricotta": basis(0), "what do I prefer": basis(0)})
    old = bank.add("Grandmother's lasagna recipe uses nutmeg and ricotta.", subject="family recipe",
                   belief_type="fact", entity_ids=("recipe:lasagna",))
    newer = bank.add_many([dict(statement=f"Ate lasagna at place {n}, liked it.", subject=f"dinner {n}",
                                belief_type="preference") for n in range(WEAK)], at=LATER)
    bank.vector(old, basis(0), encoder)
    for n, memory_id in enumerate(newer):
        bank.vector(memory_id, blend(0, 1 + n % 300, 0.5), encoder)
    query, kwargs = {
        "lexical": ("grandmother lasagna nutmeg ricotta", {"channel": "sparse"}),
        "structured": ("what do I prefer", {"channel": "sparse", "entity_ids": ("recipe:lasagna",)}),
        "semantic": ("grandmother lasagna nutmeg ricotta", {"channel": "dense"}),
    }[arm]
    result = bank.recall(query, encoder=encoder, max_items=5, as_of=AS_OF, **kwargs)
    arm_ids = {"lexical": result.stages.lexical_ids, "structured": result.stages.structured_ids,
               "semantic": result.stages.dense_ids}[arm]
    assert len(arm_ids) == 64
    assert arm_ids[0] == old
    assert result.items[0].id == old


def test_historical_recall_chooses_the_revision_current_at_as_of_before_relevance(bank):
    then_match = bank.add("The owner drives a red Volvo.", subject="car", belief_type="resource")
    now_match = bank.add("The owner rides a bicycle.", subject="commute", belief_type="routine")
    memory_revise(principal=bank.principal, memory_id=then_match,
                  changes=MemoryChanges(statement="The owner sold the old estate."), now=AS_OF + timedelta(days=1))
    memory_revise(principal=bank.principal, memory_id=now_match,
                  changes=MemoryChanges(statement="The owner drives a blue Volvo."), now=AS_OF + timedelta(days=1))

    past = bank.recall("Volvo", channel="sparse", as_of=AS_OF)
    assert past.stages.lexical_ids == (then_match,)
    assert past.items[0].statement == "The owner drives a red Volvo."
    assert past.items[0].content_revision == 1

    current = bank.recall("Volvo", channel="sparse")
    assert current.stages.lexical_ids == (now_match,)
    assert current.items[0].statement == "The owner drives a blue Volvo."


def test_historical_dense_uses_a_vector_only_for_the_revision_current_at_as_of(bank, semantic_on):
    encoder = MappedEncoder({"q": basis(0)})
    memory_id = bank.add("Version one.", subject="versioned", belief_type="fact")
    memory_revise(principal=bank.principal, memory_id=memory_id,
                  changes=MemoryChanges(statement="Version two."), now=AS_OF + timedelta(days=1))
    bank.vector(memory_id, basis(0), encoder, revision=2)  # the current revision's vector
    assert memory_id in bank.recall("q", channel="dense", encoder=encoder).stages.dense_ids
    assert bank.recall("q", channel="dense", encoder=encoder, as_of=AS_OF).stages.dense_ids == ()

    bank.vector(memory_id, basis(0), encoder, revision=1)  # a vector of the as_of revision
    assert bank.recall("q", channel="dense", encoder=encoder, as_of=AS_OF).stages.dense_ids == (memory_id,)
    assert bank.recall("q", channel="dense", encoder=encoder).stages.dense_ids == ()


def test_recent_mode_is_the_bounded_newest_first_legacy_selection(bank):
    ids = bank.add_many([dict(statement=f"Note {n}.", subject=f"n {n}", belief_type="fact") for n in range(70)])
    result = bank.recall("anything at all", selection_mode="recent", max_items=5)
    assert result.selection_mode == "recent"
    assert result.stages.candidate_ids == tuple(reversed(ids))[:64]
    assert [item.id for item in result.items] == list(reversed(ids))[:5]
    assert result.stages.lexical_ids == () and result.stages.dense_ids == ()


def test_relevance_mode_does_not_fill_with_unrelated_recent_memories(bank):
    bank.add_many([dict(statement=f"Note {n}.", subject=f"n {n}", belief_type="fact") for n in range(10)])
    result = bank.recall("lasagna", channel="sparse")
    assert result.items == () and result.rendered == ""


def test_historical_recall_picks_the_latest_revision_recorded_by_as_of(bank):
    memory_id = bank.add("First wording about the kayak.", subject="boat", belief_type="fact")
    memory_revise(principal=bank.principal, memory_id=memory_id,
                  changes=MemoryChanges(statement="Second wording about the canoe."), now=AS_OF - timedelta(days=1))
    memory_revise(principal=bank.principal, memory_id=memory_id,
                  changes=MemoryChanges(statement="Third wording about the dinghy."), now=AS_OF + timedelta(days=1))
    for word, found in (("kayak", ()), ("canoe", (memory_id,)), ("dinghy", ())):
        result = bank.recall(word, channel="sparse", as_of=AS_OF)
        assert result.stages.lexical_ids == found, word
    assert bank.recall("canoe", channel="sparse", as_of=AS_OF).items[0].content_revision == 2


def test_more_distinct_query_terms_beat_one_term_repeated_in_the_memory(bank):
    covering = bank.add("Lasagna with nutmeg.", subject="dish a", belief_type="fact")
    repeating = bank.add("Lasagna, lasagna, lasagna, lasagna: lasagna forever.", subject="dish b",
                         belief_type="fact", at=LATER)
    result = bank.recall("lasagna nutmeg", channel="sparse")
    assert result.stages.lexical_ids == (covering, repeating)

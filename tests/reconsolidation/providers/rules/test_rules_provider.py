"""The rules provider: a pure, deterministic function of its source views — merges per
equivalence class, conflict flags for polarity/value differences (kept out of summaries),
extractive summaries of related sources, and an explicit abstention from hypotheses."""
from __future__ import annotations

import random

from reconsolidation.providers.rules import provider as rules
from tests.reconsolidation.providers.rules.test_equivalence import view


def kinds(proposals):
    return [(p.kind, {ref.memory_id.int for ref in p.inputs}, p.reason) for p in proposals]


def test_one_merge_per_equivalence_class_of_two_or_more():
    views = [view(1), view(2), view(3, statement="Other fact."), view(4, statement="Other fact."), view(5, subject="x",
                                                                                                       statement="Lone.")]
    merges = [k for k in kinds(rules.propose(views)) if k[0] == "merge_equivalent"]
    assert merges == [("merge_equivalent", {1, 2}, "equivalence_key"), ("merge_equivalent", {3, 4}, "equivalence_key")]


def test_polarity_and_value_differences_are_flagged_and_kept_out_of_summaries():
    a = view(1, statement="The owner's flat is on floor 3.", subject="home")
    b = view(2, statement="The owner's flat is on floor 4.", subject="home")
    c = view(3, statement="The owner's flat is on floor 5.", subject="home")
    d = view(4, statement="The owner waters the plants.", subject="home")
    e = view(5, statement="The owner likes the garden.", subject="home")
    f = view(6, statement="The owner likes the garden.", subject="home", polarity="negated")
    found = kinds(rules.propose([a, b, c, d, e, f]))
    assert [k for k in found if k[0] == "flag_conflict"] == [
        ("flag_conflict", {1, 2, 3}, "value_difference"), ("flag_conflict", {5, 6}, "polarity_difference")]
    assert not [k for k in found if k[0] == "summarize_related"]  # only d is left unconflicted


def test_conflict_flags_grow_linearly_with_the_group():
    views = [view(n, statement=f"The owner paid {n} EUR.") for n in range(1, 33)]
    assert kinds(rules.propose(views)) == [("flag_conflict", set(range(1, 33)), "value_difference")]


def test_proposals_are_deterministic_whatever_the_input_order():
    views = [view(n, statement=f"Statement {n % 3}.") for n in range(1, 10)]
    expected = rules.propose(views)
    for seed in range(5):
        shuffled = views[:]
        random.Random(seed).shuffle(shuffled)
        assert rules.propose(shuffled) == expected


def test_the_rules_never_propose_a_hypothesis_and_name_their_abstention():
    views = [view(n, statement=f"Statement {n}.", entity_ids=("e",)) for n in range(1, 5)]
    assert all(p.kind != "infer_connection" for p in rules.propose(views))
    assert rules.HYPOTHESIS_ABSTENTION == "rules_abstain_hypothesis"


def test_proposals_name_only_supplied_sources_and_carry_the_rules_identity():
    views = [view(1), view(2), view(3, statement="Related.")]
    supplied = {v.ref for v in views}
    for proposal in rules.propose(views):
        assert set(proposal.inputs) <= supplied and proposal.model_identity == rules.MODEL_IDENTITY


def test_a_contradiction_inside_a_related_group_is_flagged_not_summarised():
    from tests.reconsolidation.providers.rules.test_summaries_time_and_conflict import theo
    views = [theo(1, "Theo lives in Paris."), theo(2, "Theo lives in Berlin."), theo(3, "Theo has a cat.")]
    proposals = rules.propose(views)
    assert [p.kind for p in proposals] == ["flag_conflict"]
    assert proposals[0].reason == "place_difference"
    assert {ref.memory_id for ref in proposals[0].inputs} == {views[0].memory_id, views[1].memory_id}

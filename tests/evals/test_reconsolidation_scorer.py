"""reconsolidation-scorer@1 on hand-built observations: one rule per test, each able to fail."""
import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

from reconsolidation.evidence import f1, scorer
from reconsolidation.evidence.scorer import CaseObservation, all_passed, combine, gates, score


def case(case_id="c1", split="development", memories="abcdefgh", classes=(), survivors="", hypotheses=(),
         probes=()):
    """A labelled case; the scorer reads only memory IDs from the bank, so one-letter IDs do."""
    return {
        "id": case_id, "split": split, "category": "test",
        "bank": {"memories": [{"id": m} for m in memories]},
        "duplicate_classes": [list(members) for members in classes],
        "required_survivors": list(survivors),
        "hypotheses": [{"statement": s, "support": list(support)} for s, support in hypotheses],
        "probes": [{"id": pid, "question": "?", "answers": list(answers), "kind": kind}
                   for pid, answers, kind in probes],
    }


def corpus(*cases):
    return {"version": "test-corpus", "cases": list(cases)}


def obs(case_id="c1", merges=(), survivors="", hypotheses=(), answers=None, rendered=None, failed=False):
    item = {
        "case_id": case_id, "merges": [list(group) for group in merges], "survivors": list(survivors),
        "hypotheses": [{"statement": s, "support": list(support)} for s, support in hypotheses],
        "failed": failed,
    }
    if answers is not None:
        item["answers"] = [{"probe_id": p, "answer": a} for p, a in answers]
    if rendered is not None:
        item["rendered_evidence"] = [{"probe_id": p, "text": t} for p, t in rendered]
    return item


def hypothesis_counts(figures):
    return figures["hypotheses_expected"], figures["hypotheses_output"], figures["hypotheses_matched"]


def dev(report):
    return report["splits"]["development"]


def one(labels, observation):
    """Score one development case; return (split figures, case details)."""
    report = score(corpus(labels), [observation])
    return dev(report), report["cases"][labels["id"]]


# -- merges ------------------------------------------------------------------------------------

def test_transitive_pairs_through_overlapping_groups_count_every_false_pair():
    # a~b is labelled; b~c and c~d are not. The chain makes one component {a, b, c, d}: 6 pairs,
    # only a-b correct. Scoring each operation alone would find just 2 false pairs.
    figures, _ = one(case(classes=["ab"]), obs(merges=["ab", "bc", "cd"]))
    assert figures["correct_merge_pairs"] == 1
    assert figures["false_merge_pairs"] == 5
    assert figures["invalid_operations"] == 0


def test_overlapping_operations_inside_one_class_are_all_correct_and_cover_it():
    figures, _ = one(case(classes=["abc"]), obs(merges=["ab", "bc"]))
    assert (figures["correct_merge_pairs"], figures["false_merge_pairs"]) == (3, 0)
    assert figures["classes_covered"] == 1 and figures["duplicate_set_coverage"] == 1.0


def test_a_pair_from_two_different_classes_is_false():
    figures, _ = one(case(classes=["ab", "cd"]), obs(merges=["ac"]))
    assert (figures["correct_merge_pairs"], figures["false_merge_pairs"]) == (0, 1)


def test_a_singleton_group_is_an_invalid_operation_that_fails_the_case():
    figures, details = one(case(classes=["ab"]), obs(merges=["ab", "c"]))
    assert figures["invalid_operations"] == 1
    assert details["failed"] and figures["failed_cases"] == 1
    assert figures["classes_covered"] == 0  # the valid merge covered "ab", but the case failed
    assert figures["correct_merge_pairs"] == 1


def test_an_empty_group_is_an_invalid_operation():
    figures, _ = one(case(), obs(merges=[""]))
    assert figures["invalid_operations"] == 1 and figures["failed_cases"] == 1


def test_a_repeated_member_is_invalid_and_its_known_pairs_still_count():
    figures, _ = one(case(classes=["ab"]), obs(merges=[["a", "a", "c"]]))
    assert figures["invalid_operations"] == 1
    assert figures["false_merge_pairs"] == 1  # a-c: an invalid operation never hides a false merge
    assert figures["failed_cases"] == 1


def test_an_unknown_id_is_invalid_and_the_known_members_still_count():
    figures, details = one(case(classes=["ab"]), obs(merges=[["a", "zz", "c"]]))
    assert figures["invalid_operations"] == 1 and figures["false_merge_pairs"] == 1
    assert any("unknown IDs" in p for p in details["problems"])


def test_coverage_counts_a_class_only_when_one_component_is_exactly_it():
    exact, _ = one(case(classes=["ab"]), obs(merges=["ab"]))
    superset, _ = one(case(classes=["ab"]), obs(merges=["abc"]))
    subset, _ = one(case(classes=["abc"]), obs(merges=["ab"]))
    split_in_two, _ = one(case(classes=["abcd"]), obs(merges=["ab", "cd"]))
    assert exact["classes_covered"] == 1
    assert superset["classes_covered"] == 0 and superset["false_merge_pairs"] == 2
    assert subset["classes_covered"] == 0 and subset["false_merge_pairs"] == 0
    assert split_in_two["classes_covered"] == 0


# -- survivors -----------------------------------------------------------------------------------

def test_missing_required_survivors_are_lost_facts():
    figures, details = one(case(survivors="abc"), obs(survivors="ac"))
    assert figures["lost_facts"] == 1 and details["lost_fact_ids"] == ["b"]
    assert figures["failed_cases"] == 0  # a lost fact is a failure of the gate, not of collection


def test_unknown_and_repeated_survivors_are_invalid_observations():
    figures, _ = one(case(survivors="ab"), obs(survivors=["a", "b", "zz", "b"]))
    assert figures["invalid_observations"] == 2
    assert figures["failed_cases"] == 1
    assert figures["lost_facts"] == 0


# -- failed and missing cases -----------------------------------------------------------------------

def test_a_harness_failed_case_stays_in_every_denominator_and_reports_no_lost_facts():
    labels = case(classes=["ab"], survivors="abc", hypotheses=[("H.", "cd")],
                  probes=[("p1", ["oat milk"], "direct")])
    figures, details = one(labels, obs(merges=["ab", "ce"], survivors="", hypotheses=[("H.", "cd")],
                                       answers=[("p1", "oat milk")], failed=True))
    assert details["failed"] and figures["failed_cases"] == 1
    assert figures["lost_facts"] == 0  # survivors of a failed run were never observed
    assert figures["false_merge_pairs"] == 1  # a committed false merge is still real
    assert (figures["classes_total"], figures["classes_covered"]) == (1, 0)
    assert hypothesis_counts(figures) == (1, 1, 0)
    assert figures["probes_total"]["direct"] == 1 and figures["probes_correct"]["direct"] == 0
    assert figures["duplicate_set_coverage"] == 0.0 and figures["direct_recall"] == 0.0


def test_a_case_without_observation_is_a_failed_case_never_omitted():
    report = score(corpus(case("c1", classes=["ab"]), case("c2", classes=["ab"])), [obs("c1", merges=["ab"])])
    figures = dev(report)
    assert (figures["cases"], figures["failed_cases"], figures["missing_cases"]) == (2, 1, 1)
    assert figures["duplicate_set_coverage"] == 0.5


def test_observations_of_unknown_or_repeated_cases_are_refused():
    with pytest.raises(ValueError, match="unknown case"):
        score(corpus(case("c1")), [obs("c9")])
    with pytest.raises(ValueError, match="more than one"):
        score(corpus(case("c1")), [obs("c1"), obs("c1")])


# -- hypotheses -----------------------------------------------------------------------------------

def test_hypotheses_match_one_to_one_and_a_repeated_output_is_a_false_positive():
    labels = case(hypotheses=[("Ana works at Naturalis.", "ab"), ("Priya has a dog.", "cd")])
    twice = [("Ana works at Naturalis.", "ab"), ("Ana works at Naturalis.", "ba")]
    figures, _ = one(labels, obs(hypotheses=twice))
    assert hypothesis_counts(figures) == (2, 2, 1)
    assert figures["precision"] == 0.5 and figures["recall"] == 0.5


def test_hypothesis_statements_match_after_nfc_and_whitespace_normalisation_only():
    labels = case(hypotheses=[("The café opens at nine.", "ab")])
    decomposed = " The cafe\u0301  opens\tat\nnine. "
    matched, _ = one(labels, obs(hypotheses=[(decomposed, "ab")]))
    other_case, _ = one(labels, obs(hypotheses=[("the café opens at nine.", "ab")]))
    other_words, _ = one(labels, obs(hypotheses=[("The café opens at 9.", "ab")]))
    assert matched["hypotheses_matched"] == 1
    assert other_case["hypotheses_matched"] == 0
    assert other_words["hypotheses_matched"] == 0


def test_a_hypothesis_with_the_wrong_support_set_does_not_match():
    labels = case(hypotheses=[("Ana works at Naturalis.", "ab")])
    superset, _ = one(labels, obs(hypotheses=[("Ana works at Naturalis.", "abc")]))
    subset, _ = one(labels, obs(hypotheses=[("Ana works at Naturalis.", "a")]))
    other, _ = one(labels, obs(hypotheses=[("Ana works at Naturalis.", "ac")]))
    assert superset["hypotheses_matched"] == subset["hypotheses_matched"] == other["hypotheses_matched"] == 0
    assert superset["precision"] == 0.0


def test_no_hypothesis_output_gives_zero_recall_and_undefined_precision():
    figures, _ = one(case(hypotheses=[("Ana works at Naturalis.", "ab")]), obs())
    assert figures["recall"] == 0.0
    assert figures["precision"] is None


def test_a_hypothesis_citing_unknown_or_repeated_support_is_an_invalid_observation():
    labels = case(hypotheses=[("Ana works at Naturalis.", "ab")])
    unknown, _ = one(labels, obs(hypotheses=[("Ana works at Naturalis.", ["a", "zz"])]))
    repeated, _ = one(labels, obs(hypotheses=[("Ana works at Naturalis.", ["a", "b", "b"])]))
    for figures in (unknown, repeated):
        assert figures["invalid_observations"] == 1 and figures["hypotheses_matched"] == 0
        assert figures["failed_cases"] == 1


# -- probes -----------------------------------------------------------------------------------------

PROBES = [("p1", ["oat milk"], "direct"), ("p2", ["Dr. Kaya", "Kaya"], "direct"),
          ("x1", ["Naturalis"], "cross_session")]


def test_a_probe_counts_only_at_f1_one_against_some_alias():
    answers = [("p1", "oat"), ("p2", "kaya!"), ("x1", "The Naturalis")]
    figures, _ = one(case(probes=PROBES), obs(answers=answers))
    assert f1.max_f1("oat", ["oat milk"]) == pytest.approx(2 / 3)
    assert figures["probes_correct"] == {"direct": 1, "cross_session": 1}
    assert figures["direct_recall"] == 0.5 and figures["cross_session_coverage"] == 1.0


def test_a_missing_answer_scores_zero_without_invalidating_the_case():
    figures, _ = one(case(probes=PROBES), obs(answers=[("p1", "Oat milk.")]))
    assert figures["probes_correct"] == {"direct": 1, "cross_session": 0}
    assert figures["failed_cases"] == 0 and figures["invalid_observations"] == 0


def test_a_duplicate_probe_id_invalidates_the_observation():
    answers = [("p1", "oat milk"), ("p1", "oat milk"), ("x1", "Naturalis")]
    figures, details = one(case(probes=PROBES), obs(answers=answers))
    assert figures["invalid_observations"] == 1
    assert details["failed"] and figures["probes_correct"] == {"direct": 0, "cross_session": 0}


def test_an_unknown_probe_id_invalidates_the_observation():
    figures, _ = one(case(probes=PROBES), obs(answers=[("p1", "oat milk"), ("p9", "oat milk")]))
    assert figures["invalid_observations"] == 1 and figures["failed_cases"] == 1
    assert figures["probes_correct"]["direct"] == 0


def test_rendered_evidence_covers_a_probe_only_with_a_contiguous_alias():
    figures, _ = one(case(probes=PROBES), obs(rendered=[
        ("p1", "- The owner takes oat milk in their coffee.\n- The owner cycles to work."),
        ("p2", "The owner's dentist is Dr. Visser."),
        ("x1", "Ana works as a curator at a museum; Naturalis-style exhibits."),
    ]))
    assert figures["probe_mode"] == "rendered_evidence"
    assert figures["probes_correct"] == {"direct": 1, "cross_session": 0}
    scattered, _ = one(case(probes=PROBES), obs(rendered=[("p1", "The milk is oat-free; oat grows.")]))
    assert scattered["probes_correct"]["direct"] == 0


def test_a_run_mixing_answers_and_rendered_evidence_is_refused():
    labels = corpus(case("c1", probes=PROBES), case("c2", probes=PROBES))
    with pytest.raises(ValueError, match="probe modes"):
        score(labels, [obs("c1", answers=[]), obs("c2", rendered=[])])


# -- observation schema ------------------------------------------------------------------------------

def test_the_observation_schema_is_closed_and_strict():
    CaseObservation.model_validate(obs())
    with pytest.raises(ValidationError):
        CaseObservation.model_validate({**obs(), "coverage": 1.0})  # no self-reported metrics
    with pytest.raises(ValidationError):
        CaseObservation.model_validate({**obs(answers=[]), "rendered_evidence": []})
    with pytest.raises(ValidationError):
        CaseObservation.model_validate({key: value for key, value in obs().items() if key != "failed"})
    with pytest.raises(ValidationError):
        CaseObservation.model_validate({**obs(), "failed": "no"})
    with pytest.raises(ValidationError):
        scored = [{"statement": "x", "support": ["a"], "score": 1}]
        CaseObservation.model_validate({**obs(), "hypotheses": scored})


# -- aggregation -------------------------------------------------------------------------------------

def test_integer_counts_are_summed_before_dividing_never_averaged():
    # Case 1 covers 1 of 1 class (100%), case 2 covers 0 of 4 (0%): the mean of percentages is
    # 0.5, the aggregate is 1/5. Probes the same way: 1/1 and 0/3 -> 1/4, not 0.5.
    labels = corpus(
        case("c1", classes=["ab"], probes=[("p1", ["yes"], "direct")]),
        case("c2", memories="abcdefgh", classes=["ab", "cd", "ef", "gh"],
             probes=[(f"q{i}", ["yes"], "direct") for i in range(3)]),
    )
    report = score(labels, [obs("c1", merges=["ab"], answers=[("p1", "yes")]), obs("c2", answers=[])])
    figures = dev(report)
    assert (figures["classes_covered"], figures["classes_total"]) == (1, 5)
    assert figures["duplicate_set_coverage"] == pytest.approx(0.2)
    assert figures["direct_recall"] == pytest.approx(0.25)


def test_empty_denominators_are_none_and_their_gates_fail():
    report = score(corpus(case()), [obs(answers=[])])
    figures = dev(report)
    for name in ("duplicate_set_coverage", "precision", "recall", "direct_recall", "cross_session_coverage"):
        assert figures[name] is None, name
    assert report["splits"]["holdout"]["cases"] == 0
    results = gates({"original": report, "merge": report, "connections": report})
    assert results["development/merge/duplicate_set_coverage"] == {
        "value": None, "threshold": 0.8, "passed": False}
    assert results["development/connections/cross_session_coverage_lift"]["passed"] is False
    assert results["development/merge/direct_recall_change"]["passed"] is False
    assert "development/connections/hypothesis_precision" not in results  # none expected
    assert not all_passed(results)
    assert not all_passed({})


def test_combine_sums_counts_across_repeats_before_dividing():
    labels = corpus(case("c1", classes=["ab"]))
    hit = score(labels, [obs("c1", merges=["ab"])])
    miss = score(labels, [obs("c1")])
    combined = combine([hit, miss, miss])
    assert combined["repeats"] == 3
    assert (dev(combined)["classes_covered"], dev(combined)["classes_total"]) == (1, 3)
    assert dev(combined)["duplicate_set_coverage"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        combine([hit, {**miss, "corpus": "other"}])


# -- gates ------------------------------------------------------------------------------------------

def gate_corpus():
    cases = []
    for split in scorer.SPLITS:
        probes = [("d1", ["oat milk"], "direct")]
        probes += [(f"x{i}", [f"answer {i}"], "cross_session") for i in range(10)]
        cases.append(case(f"{split}-1", split, classes=["ab"], survivors="abcdefgh",
                          hypotheses=[("Ana works at Naturalis.", "cd")], probes=probes))
    return corpus(*cases)


def arm_run(merges=(), hypotheses=(), cross_correct=2, direct="oat milk"):
    observations = []
    for split in scorer.SPLITS:
        answers = [("d1", direct)]
        answers += [(f"x{i}", f"answer {i}" if i < cross_correct else "no idea") for i in range(10)]
        observations.append(obs(f"{split}-1", merges=merges, survivors="abcdefgh", hypotheses=hypotheses,
                                answers=answers))
    return score(gate_corpus(), observations)


HYPOTHESES = [("Ana works at Naturalis.", "cd")]


def three_arms(**changes):
    arms = {
        "original": arm_run(),
        "merge": arm_run(merges=["ab"]),
        "connections": arm_run(merges=["ab"], hypotheses=HYPOTHESES, cross_correct=3),
    }
    arms.update(changes)
    return arms


def test_every_gate_passes_for_a_clean_run_with_the_lift_exactly_at_its_floor():
    results = gates(three_arms())
    assert all_passed(results), {name: g for name, g in results.items() if not g["passed"]}
    # 3/10 - 2/10 is 0.09999999999999998 in floats; the gate compares exact fractions.
    assert results["holdout/connections/cross_session_coverage_lift"]["value"] == pytest.approx(0.1)
    assert {name.split("/", 1)[0] for name in results} == {"development", "holdout"}
    assert "development/connections/hypothesis_precision" in results


def test_one_false_merge_fails_the_zero_false_merge_gate():
    results = gates(three_arms(merge=arm_run(merges=["ab", "bc"])))
    assert results["development/merge/false_merge_pairs"] == {"value": 2, "threshold": 0, "passed": False}
    assert results["development/merge/duplicate_set_coverage"]["passed"] is False


def test_a_lost_fact_fails_its_gate():
    run = arm_run(merges=["ab"])
    run["splits"]["holdout"]["lost_facts"] = 1
    assert gates(three_arms(merge=run))["holdout/merge/lost_facts"]["passed"] is False


def test_a_direct_recall_regression_against_the_original_arm_fails():
    results = gates(three_arms(merge=arm_run(merges=["ab"], direct="soy milk")))
    assert results["development/merge/direct_recall_change"] == {
        "value": -1.0, "threshold": 0, "passed": False}


def test_hypothesis_floors_apply_to_the_connections_arm():
    results = gates(three_arms(connections=arm_run(merges=["ab"], cross_correct=3)))
    assert results["development/connections/hypothesis_recall"]["value"] == 0.0
    assert results["development/connections/hypothesis_recall"]["passed"] is False
    assert results["development/connections/hypothesis_precision"] == {"value": None, "threshold": 0.8,
                                                                        "passed": False}


def test_a_lift_below_the_floor_or_from_another_probe_mode_fails():
    below = gates(three_arms(connections=arm_run(merges=["ab"], hypotheses=HYPOTHESES)))
    assert below["development/connections/cross_session_coverage_lift"]["value"] == 0.0
    assert below["development/connections/cross_session_coverage_lift"]["passed"] is False
    offline = score(gate_corpus(), [obs(f"{split}-1", survivors="abcdefgh", rendered=[])
                                    for split in scorer.SPLITS])
    mixed = gates(three_arms(original=offline))
    assert mixed["development/connections/cross_session_coverage_lift"]["value"] is None
    assert mixed["development/merge/direct_recall_change"]["passed"] is False


def test_a_missing_arm_fails_its_gates():
    arms = three_arms()
    del arms["connections"]
    results = gates(arms)
    assert results["development/connections/false_merge_pairs"]["passed"] is False
    assert results["development/connections/hypothesis_precision"]["passed"] is False
    assert not all_passed(results)


# -- F1 and purity -------------------------------------------------------------------------------------

def test_f1_normalises_like_squad_and_never_matches_emptiness():
    assert f1.normalize_answer("The  Oat-Milk, please!") == "oatmilk please"
    assert f1.normalize_answer("An apple a day") == "apple day"
    assert f1.token_f1("oat milk", "Oat milk.") == 1.0
    assert f1.token_f1("milk oat", "oat milk") == 1.0  # a bag of tokens
    assert f1.token_f1("", "the") == 0.0
    assert f1.max_f1("anything", []) == 0.0


@pytest.mark.parametrize("module", [scorer, f1])
def test_scorer_and_f1_are_pure(module):
    tree = ast.parse(Path(module.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            module_name = node.module or ""
            imported.add("f1" if module_name == "reconsolidation.evidence.f1" else module_name.split(".")[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in ("open", "print", "exec", "eval", "__import__"), node.func.id
    allowed = {"__future__", "collections", "dataclasses", "fractions", "re", "string", "typing",
               "unicodedata", "pydantic", "f1"}
    assert imported <= allowed, imported - allowed

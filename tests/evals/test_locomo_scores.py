"""LoCoMo aggregates (evals/recall/locomo.py): the paper's per-question mean is the headline,
pooled recall is kept beside it, and the printed table says which is which."""
import pytest

from evals.recall import locomo
from evals.recall.locomo import KS, _Acc, questions


def _acc(*questions_covered: tuple[int, int]) -> _Acc:
    acc = _Acc()
    for covered, evidence in questions_covered:
        acc.add({k: covered for k in [*KS, "rendered"]}, evidence)
    return acc


def test_paper_recall_is_the_mean_over_questions_and_pooled_recall_the_micro_ratio():
    # one question with 1 of 4 evidence turns, one with its single turn
    cell = _acc((1, 4), (1, 1)).as_dict()["@10"]
    assert cell["paper_recall"] == pytest.approx((0.25 + 1.0) / 2)
    assert cell["pooled_recall"] == pytest.approx(2 / 5)
    assert cell["all_evidence_rate"] == pytest.approx(1 / 2)
    assert "recall" not in cell and "question_mean" not in cell  # no unlabelled figure


def test_an_empty_group_reports_none_not_zero():
    cell = _Acc().as_dict()["@5"]
    assert cell["paper_recall"] is None and cell["pooled_recall"] is None


def test_questions_without_evidence_are_neither_asked_nor_scored():
    sample = {"qa": [
        {"question": "No evidence?", "evidence": [], "category": 2},
        {"question": "Only unknown turns?", "evidence": ["D9:9"], "category": 1},
        {"question": "Known?", "evidence": ["D1:1", "D9:9"], "category": 4},
    ]}
    asked, counts = questions(sample, {"D1:1"})
    assert [q["question"] for q in asked] == ["Known?"] and asked[0]["evidence"] == ["D1:1"]
    assert counts["questions_without_evidence"] == 2 and counts["unresolvable_evidence_ids"] == 2


def test_the_summary_names_paper_recall_first_and_pooled_in_parentheses():
    scores = {"overall": _acc((1, 4), (1, 1)).as_dict()}
    report = {"data": {"conversations": 1}, "conversion": {"totals": {"questions": 2}},
              "scores": {"hybrid": scores}, "latency_ms": {"hybrid": {"p50": 1.0, "p95": 2.0}},
              "fallbacks": {"hybrid": 0}}
    text = locomo.summary(report)
    assert "paper recall (mean over questions" in text and "pooled recall" in text
    assert "paper @10 (pooled)" in text
    assert "62.5 (40.0)" in text  # paper 62.5 %, pooled 40.0 %


def test_rendered_precision_adds_counts_and_unrelated_items_are_the_rest():
    acc = _Acc()
    acc.add({k: 1 for k in _Acc.STAGES}, 2, rendered=20, relevant=2)  # 18 unrelated
    acc.add({k: 1 for k in _Acc.STAGES}, 1, rendered=4, relevant=1)
    cell = acc.as_dict()
    assert cell["precision"] == pytest.approx(3 / 24)
    assert (cell["rendered_items"], cell["relevant_rendered"], cell["unrelated_rendered"]) == (24, 3, 21)
    assert cell["rendered@20"]["paper_recall"] == pytest.approx((0.5 + 1.0) / 2)
    assert _Acc().as_dict()["precision"] is None


def test_the_summary_shows_rendered_precision_and_unrelated_items():
    acc = _Acc()
    acc.add({k: 1 for k in _Acc.STAGES}, 1, rendered=4, relevant=1)
    report = {"data": {"conversations": 1}, "conversion": {"totals": {"questions": 1}},
              "scores": {"hybrid": {"overall": acc.as_dict()}}, "latency_ms": {"hybrid": {"p50": 1.0, "p95": 2.0}},
              "fallbacks": {"hybrid": 0}}
    text = locomo.summary(report)
    assert "rendered@20" in text and "precision" in text and "unrelated" in text

"""The recall stage scorer on small hand-built stage lists (evals/recall/scoring.py)."""
import pytest

from evals.recall.scoring import NeedLabel, Observation, found, need_outcome, ratio, score, score_channel


def need(need_id, required, family="f1", split="development", **kw):
    return NeedLabel(id=need_id, required=tuple(required), tags={"family": family, "split": split, "kind": "k"}, **kw)


def obs(need_id, *, candidates=(), ranked=(), rendered=(), channel="hybrid", effective=None, **kw):
    return Observation(need_id=need_id, channel=channel, effective_channel=effective or channel,
                       candidate_ids=tuple(candidates), ranked_ids=tuple(ranked), rendered_ids=tuple(rendered), **kw)


def test_recall_aggregates_integer_counts_before_dividing():
    needs = [need("a", ["x1", "x2"]), need("b", ["y1"])]
    observations = [obs("a", candidates=["x1", "z"], ranked=["x1"], rendered=["x1"]),
                    obs("b", candidates=["y1"], ranked=["y1"], rendered=["y1"])]
    overall = score_channel(needs, observations)["stages"]["candidate"]["overall"]
    # 2 of 3 required IDs, not the mean of 0.5 and 1.0
    assert (overall["hits"], overall["required"]) == (2, 3)
    assert overall["recall"] == pytest.approx(2 / 3)
    assert overall["needs"] == 2 and overall["complete_needs"] == 1


def test_ranked_stage_counts_only_the_first_twenty_ids():
    ranked = [f"n{i}" for i in range(20)] + ["x"]
    result = score_channel([need("a", ["x"])], [obs("a", candidates=ranked, ranked=ranked, rendered=[])])
    assert result["stages"]["candidate"]["overall"]["recall"] == 1.0
    assert result["stages"]["ranked@20"]["overall"]["recall"] == 0.0
    assert result["stages"]["rendered"]["overall"]["recall"] == 0.0


def test_empty_denominators_are_none_never_success():
    assert ratio(0, 0) is None and ratio(0, 4) == 0.0
    needs = [need("a", ["x"], family="f1"), need("u", [], family="f2", distractors=("d",))]
    result = score_channel(needs, [obs("a", candidates=["x"], ranked=["x"], rendered=["x"]),
                                   obs("u", candidates=["d"], ranked=["d"], rendered=["d"])])
    by_family = result["stages"]["rendered"]["by_family"]
    assert by_family["f1"]["recall"] == 1.0
    assert by_family["f2"] == {"recall": None, "hits": 0, "required": 0, "needs": 0, "complete_needs": 0,
                               "complete_rate": None}
    # an empty observation list: nothing to score, every figure None
    empty = score_channel(needs, [])
    assert empty["stages"]["candidate"]["overall"]["recall"] is None
    assert empty["needs_without_observation"] == 2


def test_unanswerable_needs_stay_out_of_recall_and_are_reported_apart():
    needs = [need("a", ["x"]), need("u1", [], distractors=("trap",)), need("u2", [], invalid=("old",))]
    result = score_channel(needs, [
        obs("a", candidates=["x"], ranked=["x"], rendered=[]),
        obs("u1", candidates=["trap"], ranked=["trap"], rendered=["trap"]),
        obs("u2", candidates=["old"], ranked=["old"], rendered=[]),
    ])
    assert result["stages"]["candidate"]["overall"]["needs"] == 1
    assert result["unanswerable"] == {"needs": 2, "distractor_in_candidates": 1, "distractor_rendered": 1,
                                      "invalid_in_candidates": 1, "invalid_rendered": 0, "rendered_items": 1}
    assert result["invalid_leaks"] == {"needs_with_invalid_labels": 1, "invalid_in_candidates": 1,
                                       "invalid_rendered": 0}


def test_per_family_and_split_groups():
    needs = [need("a", ["x"], family="f1", split="development"), need("b", ["y"], family="f2", split="holdout"),
             need("c", ["z", "w"], family="f2", split="holdout")]
    result = score_channel(needs, [obs("a", candidates=["x"]), obs("b", candidates=[]), obs("c", candidates=["w"])])
    candidate = result["stages"]["candidate"]
    assert candidate["by_family"]["f1"]["recall"] == 1.0
    assert (candidate["by_family"]["f2"]["hits"], candidate["by_family"]["f2"]["required"]) == (1, 3)
    assert candidate["by_split"]["holdout"]["recall"] == pytest.approx(1 / 3)
    assert candidate["by_split"]["development"]["needs"] == 1


def test_fallback_is_not_an_observation_of_the_requested_channel():
    needs = [need("a", ["x"]), need("b", ["y"])]
    result = score_channel(needs, [
        obs("a", channel="dense", candidates=["x"], ranked=["x"], rendered=["x"]),
        obs("b", channel="dense", effective="sparse", fallback_reason="encoder_unavailable",
            candidates=["y"], ranked=["y"], rendered=["y"]),
    ])
    assert result["fallbacks"] == 1 and result["fallback_reasons"] == {"encoder_unavailable": 1}
    assert result["stages"]["rendered"]["overall"]["needs"] == 1


def test_arms_and_distractor_rank_are_attributed():
    needs = [need("a", ["x"], distractors=("d",))]
    result = score_channel(needs, [obs("a", candidates=["d", "x"], ranked=["d", "x"], rendered=["d", "x"],
                                       lexical_ids=("d",), dense_ids=("x",))])
    assert result["arms"]["lexical"]["recall"] == 0.0 and result["arms"]["dense"]["recall"] == 1.0
    assert result["arms"]["structured"]["recall"] == 0.0
    assert result["distractors"] == {"needs_with_distractors": 1, "distractor_ranked_above_all_evidence": 1}


def test_score_splits_channels_and_rejects_bad_input():
    needs = [need("a", ["x"])]
    both = score(needs, [obs("a", channel="sparse", candidates=["x"]), obs("a", channel="dense")])
    assert both["sparse"]["stages"]["candidate"]["overall"]["recall"] == 1.0
    assert both["dense"]["stages"]["candidate"]["overall"]["recall"] == 0.0
    with pytest.raises(ValueError):
        score_channel(needs, [obs("a"), obs("a")])
    with pytest.raises(ValueError):
        score_channel(needs, [obs("zzz")])
    with pytest.raises(ValueError):
        score_channel(needs, [obs("a", channel="sparse"), obs("a", channel="dense")])


def test_found_counts_distinct_required_ids_and_outcome_ranks():
    assert found(["x", "x", "y"], ["x", "x"]) == 1
    outcome = need_outcome(need("a", ["x", "y"]), obs("a", candidates=["q", "x"], ranked=["q", "x"], rendered=["q"]))
    assert outcome["required_ranks"] == [2, None]
    assert outcome["found"] == {"candidate": 1, "ranked": 1, "rendered": 0}


# --- rendered precision beside recall ---------------------------------------------------

def test_precision_adds_counts_before_dividing_and_separates_labelled_from_unrelated_items():
    needs = [need("a", ["x1", "x2"], distractors=("d",), invalid=("old",)), need("b", ["y"], family="f2")]
    result = score_channel(needs, [
        obs("a", rendered=["x1", "d", "old", "n1", "n2"]),  # 1 required, 2 labelled, 2 unrelated
        obs("b", rendered=["y"]),
    ])
    overall = result["precision"]["overall"]
    assert overall["precision"] == pytest.approx(2 / 6)  # not the mean of 1/5 and 1/1
    assert (overall["rendered"], overall["required_rendered"], overall["not_required_rendered"],
            overall["unrelated_rendered"], overall["needs"]) == (6, 2, 4, 2, 2)
    assert result["precision"]["by_family"]["f1"]["unrelated_rendered"] == 2
    assert result["precision"]["by_family"]["f2"]["precision"] == 1.0


def test_precision_is_none_when_nothing_is_rendered_and_unanswerable_needs_stay_out():
    needs = [need("a", ["x"]), need("u", [], family="f2", distractors=("d",))]
    result = score_channel(needs, [obs("a", rendered=[]), obs("u", rendered=["d", "n"])])
    assert result["precision"]["overall"]["precision"] is None
    assert result["precision"]["by_family"]["f2"]["needs"] == 0
    assert result["unanswerable"]["rendered_items"] == 2


def test_required_evidence_the_floor_withheld_is_counted():
    result = score_channel([need("a", ["x", "y"])], [obs("a", ranked=["x", "n", "y"], rendered=["x"],
                                                         below_floor_ids=("n", "y"))])
    assert result["precision"]["overall"]["withheld_required"] == 1
    assert need_outcome(need("a", ["x", "y"]), obs("a", rendered=["x"], below_floor_ids=("n", "y")))["below_floor"] == 2

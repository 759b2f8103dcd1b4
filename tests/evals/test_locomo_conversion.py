"""LoCoMo → memory-bank@1 conversion (evals/recall/locomo.py) on a fabricated miniature sample."""
import json

from evals.recall.locomo import convert, dia_ids, questions
from memory.bank.parse import Problems, parse_document
from memory.bank.validate import validate_document

SAMPLE = {
    "sample_id": "mini-1",
    "conversation": {
        "speaker_a": "Ada", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "I adopted a cat."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Look at this!", "blip_caption": "a photo of a kite"},
        ],
        "session_2_date_time": "9:00 am on 1 June, 2023",
        "session_2": [{"speaker": "Ada", "dia_id": "D2:1", "text": "The cat is called Miso."}],
    },
    "observation": {
        "session_1_observation": {"Ada": [["Ada adopted a cat.", "D1:1"]], "Bo": [["Bo flies kites.", ["D1:2"]]]},
        "session_2_observation": {"Ada": [["Ada's cat is Miso.", "D2:1; D1:1"], ["Orphan.", "D9:9"]]},
    },
    "qa": [
        {"question": "What is the cat called?", "answer": "Miso", "evidence": ["D2:1", "D1:1"], "category": 4},
        {"question": "Adversarial?", "evidence": ["D1:2"], "category": 5, "adversarial_answer": "x"},
        {"question": "Unresolvable?", "answer": "?", "evidence": ["D7:7"], "category": 1},
    ],
}


def test_dia_ids_normalise_the_published_variants():
    assert dia_ids("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert dia_ids("D:11:26") == ["D11:26"]
    assert dia_ids(["D1:3", "D1:3"]) == ["D1:3"]
    assert dia_ids("D") == []


def test_conversion_is_a_valid_bank_with_turns_observations_and_a_harness_side_mapping():
    document, mapping, counts = convert(SAMPLE)
    problems = Problems()
    validate_document(parse_document(json.dumps(document).encode(), problems), problems)
    assert problems.lines() == []
    assert counts == {"sessions": 2, "turns": 3, "observations": 3, "observations_skipped": 1, "images": 1}
    statements = [m["statement"] for m in document["memories"]]
    assert "Ada said: I adopted a cat." in statements
    assert "Bo said: Look at this! [shared an image: a photo of a kite]" in statements
    turn = next(m for m in document["memories"] if m["statement"].startswith("Ada said: The cat"))
    assert turn["attribution"].startswith("person:") and turn["evidence_at"] == "2023-06-01T09:00:30Z"
    observation = next(m for m in document["memories"] if m["statement"] == "Ada's cat is Miso.")
    assert sorted(mapping[observation["id"]]) == ["D1:1", "D2:1"] and len(observation["sources"]) == 2
    assert "D1:1" not in json.dumps(document)  # labels stay in the harness


def test_questions_skip_category_5_and_count_unresolvable_evidence():
    document, mapping, _ = convert(SAMPLE)
    known = {i for ids in mapping.values() for i in ids}
    asked, counts = questions(SAMPLE, known)
    assert [q["question"] for q in asked] == ["What is the cat called?"]
    assert counts == {"category_5_skipped": 1, "unresolvable_evidence_ids": 1, "questions_without_evidence": 1}

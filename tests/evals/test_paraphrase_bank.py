"""The own paraphrase bank (evals/reconsolidation/paraphrase_bank.py): its scorer runs the
real rules provider, and no look-alike pair — each differing in one guarded respect — merges."""
from __future__ import annotations

import json

from evals.reconsolidation import paraphrase_bank


def test_no_lookalike_pair_merges_and_every_guarded_respect_is_represented():
    report = paraphrase_bank.score()
    assert report["false_merge_pairs"] == 0
    assert report["classes_total"] == len(paraphrase_bank.CLASSES)
    assert {case["guard"] for case in report["cases"] if case["kind"] == "lookalike"} >= {
        "numbers", "dates", "weekdays", "frequency", "entities", "negation", "modality", "tense", "status",
        "comparison", "direction", "relation", "role", "content", "fields"}


def test_the_command_writes_its_report_exclusively(tmp_path, capsys):
    path = tmp_path / "bank.json"
    assert paraphrase_bank.main(["--output", str(path)]) == 0
    written = json.loads(path.read_text())
    assert written["bank"] == paraphrase_bank.VERSION and written["lost_facts"] is None
    try:
        paraphrase_bank.main(["--output", str(path)])
    except FileExistsError:
        pass
    else:
        raise AssertionError("an existing report was replaced")

"""The look-alike bank (evals/reconsolidation/lookalike_bank.py): pairs that share their words but
differ in meaning — antonyms, co-hyponyms, part and whole, a kind and its instance, a changed
role, a shared rare sense — never merge through the real rules provider."""
from __future__ import annotations

import json

import pytest

from evals.reconsolidation import lookalike_bank


def test_no_lookalike_pair_merges_and_every_kind_is_represented():
    report = lookalike_bank.score()
    assert report["false_merge_pairs"] == 0, [c for c in report["cases"] if c["false_merge_pairs"]]
    assert report["pairs"] == len(lookalike_bank.PAIRS)
    assert all(report["by_kind"][kind] >= 5 for kind in lookalike_bank.KINDS)


def test_the_command_writes_its_report_exclusively(tmp_path):
    path = tmp_path / "lookalikes.json"
    assert lookalike_bank.main(["--output", str(path)]) == 0
    assert json.loads(path.read_text())["bank"] == lookalike_bank.VERSION
    with pytest.raises(FileExistsError):
        lookalike_bank.main(["--output", str(path)])

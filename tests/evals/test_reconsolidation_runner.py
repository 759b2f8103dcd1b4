"""The reconsolidation comparison runner: refusals before anything runs, a reduced real run
through the store and recall, and its exclusive report files."""
import json
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evals.reconsolidation import runner, scorer

CORPUS = json.loads(runner.CORPUS_PATH.read_text())
DEV = [c["id"] for c in CORPUS["cases"] if c["split"] == "development"]


def config(**overrides):
    values = {"arms": ("original",), "repeats": 1, "provider": "rules", "split": "development",
              "case_ids": (DEV[0],)}
    values.update(overrides)
    return runner.Configuration(**values)


@pytest.mark.parametrize("overrides, message", [
    ({"arms": ("original", "bogus")}, "--arms"),
    ({"arms": ("merge", "merge")}, "--arms"),
    ({"arms": ()}, "--arms"),
    ({"repeats": 0}, "--repeats"),
    ({"provider": "gpt"}, "--provider"),
    ({"split": "train"}, "--split"),
    ({"case_ids": ("no-such-case",)}, "--cases"),
    ({"spend_ceiling_usd": Decimal(0)}, "--spend-ceiling-usd"),
])
def test_bad_arguments_are_refused_naming_the_option(overrides, message):
    with pytest.raises(runner.RunnerError, match=message):
        runner.validate(config(**overrides), CORPUS)


def test_a_holdout_case_is_unknown_in_a_development_run():
    holdout = next(c["id"] for c in CORPUS["cases"] if c["split"] == "holdout")
    with pytest.raises(runner.RunnerError, match=holdout):
        runner.validate(config(case_ids=(holdout,)), CORPUS)


def test_pins_refuse_a_corpus_whose_bytes_changed(tmp_path, monkeypatch):
    changed = tmp_path / "corpus.json"
    changed.write_bytes(runner.CORPUS_PATH.read_bytes() + b" ")
    manifest = json.loads(runner.MANIFEST_PATH.read_text())
    manifest["corpus"]["path"] = str(changed)
    pinned = tmp_path / "manifest.json"
    pinned.write_text(json.dumps(manifest))
    monkeypatch.setattr(runner, "MANIFEST_PATH", pinned)
    with pytest.raises(runner.RunnerError, match="pinned SHA-256"):
        runner.check_pins()


def test_the_committed_pins_hold():
    pins = runner.check_pins()
    assert pins["corpus"]["version"] == CORPUS["version"]
    assert pins["scorer"]["version"] == scorer.VERSION


def test_original_arm_observes_every_live_original_and_scores_probes_on_rendered_evidence(db):
    case = next(c for c in CORPUS["cases"] if c["id"] == DEV[0])
    observation = runner.run_case(case, "original", instant=runner._instant(CORPUS), namespace=runner.uuid.uuid4(),
                                  spend=runner.Spend())
    assert observation["failed"] is False, observation
    assert observation["merges"] == []
    assert sorted(observation["survivors"]) == sorted(case["required_survivors"])
    assert {e["probe_id"] for e in observation["rendered_evidence"]} == {p["id"] for p in case["probes"]}
    assert all(e["text"] for e in observation["rendered_evidence"])


def test_report_is_written_exclusively_with_summary_and_chart(db, tmp_path):
    report = runner.run(config())
    assert set(report) >= {"gates", "arms", "code", "pins", "configuration", "usage", "provider"}
    assert report["arms"]["original"]["splits"]["development"]["cases"] == 1
    paths = runner.write(report, tmp_path / "report.json")
    assert [p.suffix for p in paths] == [".json", ".txt", ".png"]
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(FileExistsError):
        runner.write(report, tmp_path / "report.json")


def test_command_refuses_an_existing_output_before_running(tmp_path):
    existing = tmp_path / "r.json"
    existing.write_text("{}")
    with pytest.raises(CommandError, match="never overwritten"):
        call_command("eval_reconsolidation", "--output", str(existing))
    assert existing.read_text() == "{}"

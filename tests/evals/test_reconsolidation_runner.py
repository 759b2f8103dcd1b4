"""The reconsolidation comparison runner: refusals before anything runs, a reduced real run
through the store and recall, and its exclusive report files."""
import json
from decimal import Decimal

import pytest

from evals.reconsolidation import case_inputs, compare, runner
from reconsolidation.evidence import scorer

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


def test_command_refuses_an_existing_output_before_running(tmp_path, capsys):
    existing = tmp_path / "r.json"
    existing.write_text("{}")
    assert compare.main(["--output", str(existing)]) == 2
    assert "never overwritten" in capsys.readouterr().err
    assert existing.read_text() == "{}"


def test_merge_arms_merge_exact_copies_only_and_gates_cover_every_arm(db, tmp_path):
    """A reduced three-arm run (the full run is the command): the identical-copies case's
    text-and-key-identical class merges under the local key; nothing else merges."""
    case_id = "dev-identical_source_copies-1"
    report = runner.run(config(arms=scorer.ARMS, case_ids=(case_id,)))
    dev = {arm: report["arms"][arm]["splits"]["development"] for arm in scorer.ARMS}
    assert dev["original"]["classes_covered"] == 0
    for arm in ("merge", "connections"):
        assert dev[arm]["failed_cases"] == 0, report["arms"][arm]["cases"]
        assert dev[arm]["classes_covered"] >= 1
        assert dev[arm]["false_merge_pairs"] == 0
        assert dev[arm]["lost_facts"] == 0
    assert Decimal(report["usage"]["by_arm"]["original"]["spend_usd"]) == 0
    assert Decimal(report["usage"]["by_arm"]["merge"]["spend_usd"]) > 0  # the rules provider still reserves
    assert {name.split("/")[1] for name in report["gates"]} == {"merge", "connections"}
    assert all(set(g) == {"value", "threshold", "passed"} for g in report["gates"].values())


def test_command_exits_nonzero_on_a_failed_gate_and_still_writes_the_report(db, tmp_path):
    output = tmp_path / "smoke.json"
    code = compare.main(["--arms", "original,merge", "--repeats", "1", "--provider", "rules",
                         "--split", "development", "--cases", DEV[0], "--output", str(output)])
    assert code == 1  # the connections arm did not run, so its gates fail
    report = json.loads(output.read_text())
    assert report["passed"] is False and report["gates"]
    assert output.with_suffix(".summary.txt").exists() and output.with_suffix(".png").exists()


def test_scripted_provider_runs_offline_through_admission_and_verification_with_no_label_in_any_request(db):
    """Reduced scripted run: the heuristic responder answers each prepared request from its own
    bytes; every prepared request (proposal and verification) is checked for label values."""
    case_id = "dev-identical_source_copies-1"
    report = runner.run(config(arms=("merge",), provider="scripted", case_ids=(case_id,)))
    dev = report["arms"]["merge"]["splits"]["development"]
    assert dev["failed_cases"] == 0, report["arms"]["merge"]["cases"]
    assert dev["classes_covered"] >= 1 and dev["false_merge_pairs"] == 0
    assert report["provider"]["name"] == "scripted" and report["provider"]["model"] == "heuristic-responder@2"
    assert report["provider"]["requests_checked_for_labels"] >= 2  # a proposal and its verification
    assert report["provider"]["label_leaks"] == 0
    assert set(report["provider"]) >= {"prompt_digest", "schema_digest", "policy"}
    # free scripted prices: every call reserved (proposal + verification) and settled to zero
    assert report["usage"]["by_arm"]["merge"]["reservations"] >= 2
    assert Decimal(report["usage"]["by_arm"]["merge"]["spend_usd"]) == 0


def test_a_prepared_request_carrying_a_label_value_stops_the_run(db, monkeypatch):
    case_id = "dev-identical_source_copies-1"
    case = next(c for c in CORPUS["cases"] if c["id"] == case_id)
    watch = runner.RequestWatch(case, "rules")
    leaked = "{\"claims\": " + case_inputs.id_list(case["duplicate_classes"][0]) + "}"
    with pytest.raises(runner.LabelLeak):
        watch.observe(leaked)
    assert watch.leaks == 1
    real = case_inputs.leaked_label_values
    monkeypatch.setattr(runner.case_inputs, "leaked_label_values",  # only provider requests "leak"
                        lambda case, text: {"x"} if '"stage":"proposal"' in text else real(case, text))
    with pytest.raises(runner.LabelLeak):
        runner.run(config(arms=("merge",), provider="scripted", case_ids=(case_id,)))


def test_openai_provider_is_refused_clearly_when_not_configured(settings):
    settings.VEETBOT_OPENAI_MODEL = ""
    with pytest.raises(runner.RunnerError, match="--provider openai: not configured"):
        runner.validate(config(provider="openai"), CORPUS)


def test_the_arms_render_what_the_product_renders_so_a_merge_changes_the_evidence(db):
    """Probes recall at the evaluation clock through the read path the API uses: in the
    merge arm a merged class renders once, where the original arm renders every copy
    (runner@1-@3 recalled with as_of, which turned that read path off: identical arms)."""
    case = next(c for c in CORPUS["cases"] if c["id"] == "dev-identical_source_copies-1")
    instant = runner._instant(CORPUS)
    seen = {arm: runner.run_case(case, arm, instant=instant, namespace=runner.uuid.uuid4(), spend=runner.Spend())
            for arm in ("original", "merge")}
    assert seen["merge"]["merges"] and not seen["original"]["merges"]
    citations = {arm: sum(e["text"].count("[m:") for e in o["rendered_evidence"]) for arm, o in seen.items()}
    assert citations["merge"] < citations["original"], citations


def test_a_report_keeps_every_observation_and_its_input_manifest(db):
    report = runner.run(config())
    assert [len(repeat) for repeat in report["observations"]["original"]] == [1]
    assert report["observations"]["original"][0][0]["case_id"] == DEV[0]
    assert "reconsolidation/read_paths.py" in report["code"]["files"]


def test_every_arm_runs_in_the_production_configuration_so_probes_recall_hybrid_over_an_embedded_bank(db):
    """runner@5: semantic recall on and the seeded bank embedded (runner@1-@4 created no
    vectors, so every probe was keyword-only and grouping's semantic arm never ran)."""
    from memory.models import Memory
    from recall.models import MemoryVector
    from veetbot.rls import owner_context

    case = next(c for c in CORPUS["cases"] if c["id"] == DEV[0])
    instant = runner._instant(CORPUS)
    observation = runner.run_case(case, "merge", instant=instant, namespace=runner.uuid.uuid4(), spend=runner.Spend())
    assert not observation["failed"], observation.get("error")
    assert observation["channels"] == {"hybrid": len(case["probes"])}

    principal, _, _ = runner._seed(case, instant, runner.uuid.uuid4())
    runner._embed(principal)
    with owner_context(principal):
        live = Memory.objects.filter(status="active", erased_at__isnull=True).count()
        assert live and MemoryVector.objects.count() == live


def test_downstream_value_reports_each_arm_and_split_against_the_original_arm(db):
    case_id = "dev-identical_source_copies-1"
    report = runner.run(config(arms=("original", "merge"), case_ids=(case_id,)))
    value = report["downstream_value"]
    original, merge = value["original"]["development"], value["merge"]["development"]
    assert original["direct_recall_change"] == 0
    assert merge["direct_recall_change"] == (report["arms"]["merge"]["splits"]["development"]["direct_recall"]
                                             - report["arms"]["original"]["splits"]["development"]["direct_recall"])
    assert original["proposed"] == {} and original["groups_processed"] == 0
    assert merge["proposed"]["merge_equivalent"] >= merge["approved"]["merge_equivalent"] >= 1
    assert merge["cross_session_coverage"] == report["arms"]["merge"]["splits"]["development"]["cross_session_coverage"]
    assert set(merge["channels"]) == {"hybrid"} and merge["observations"] == 1 and merge["seconds"] > 0
    assert report["provider"]["recall_channel"] == "hybrid"
    assert "downstream value" in runner.summary(report)

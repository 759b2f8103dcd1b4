"""The unattended gate admits only measured evidence for the running code (issue 16 item 6).

No passing report exists (the published ones are runner@1 reports without observations, and
their gates fail), so the admitted report is constructed: observations derived from the
frozen v2 corpus's own labels, scored by the pinned scorer (``evidence.recompute``), pinned
with ``runner.check_pins``, configured with ``runner.Configuration``, the provider identity of
``runner.provider_identity``, the running code manifest, and written by ``runner.write``.
Every refusal below alters such a report (or a real published one) as a hand-edit or a
subset run would, and checks the reason code and the field it names.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from reconsolidation.evidence import verify as evidence, scorer
from evals.reconsolidation import runner
from reconsolidation import mode
from reconsolidation.evidence import admission

CORPUS_PATH = runner.CORPORA["v2"][0]
PUBLISHED = runner.REPO / "evals/reports/reconsolidation-comparison-rules-v2-ba0c268.json"
SCORE_ANCHOR = "development/merge/duplicate_set_coverage"


@lru_cache(maxsize=1)
def _corpus() -> dict:
    return json.loads(CORPUS_PATH.read_text(encoding="utf-8"))


def _observation(case: dict, arm: str) -> dict:
    """What an arm that does everything right would show (the original arm never dreams and
    here renders no cross-session answer, so the connections arm's lift is measurable)."""
    dreaming = arm != scorer.ORIGINAL_ARM
    evidence_text = [{"probe_id": p["id"], "text": p["answers"][0]
                      if arm == scorer.CONNECTIONS_ARM or p["kind"] == "direct" else ""} for p in case["probes"]]
    return {"case_id": case["id"], "merges": [list(c) for c in case["duplicate_classes"]] if dreaming else [],
            "survivors": list(case["required_survivors"]),
            "hypotheses": [dict(h) for h in case["hypotheses"]] if arm == scorer.CONNECTIONS_ARM else [],
            "rendered_evidence": evidence_text, "failed": False, "seconds": 0.25}


def _failed(case_id: str) -> dict:
    return {"case_id": case_id, "merges": [], "survivors": [], "hypotheses": [], "rendered_evidence": [],
            "failed": True, "error": "RuntimeError", "seconds": 0.1}


def build_report(*, split: str = "both", case_ids: tuple = (), repeats: int = 3, lift: bool = True,
                 failed: tuple = ()) -> dict:
    """A report as ``runner.run`` assembles it, plus the observations and code manifest an
    evidence-producing runner records. ``failed``: (arm, repeat, case_id) kept as failed."""
    corpus = _corpus()
    config = runner.Configuration(arms=scorer.ARMS, repeats=repeats, provider="rules", split=split,
                                  case_ids=case_ids, corpus="v2")
    cases = runner.validate(config, corpus)
    observations = {}
    for arm in scorer.ARMS:
        shown = arm if lift or arm != scorer.ORIGINAL_ARM else scorer.CONNECTIONS_ARM
        observations[arm] = [[_failed(case["id"]) if (arm, number, case["id"]) in failed else _observation(case, shown)
                              for case in cases] for number in range(1, repeats + 1)]
    splits = scorer.SPLITS if split == "both" else (split,)
    derived = evidence.recompute({**corpus, "cases": cases}, observations, splits)
    return json.loads(json.dumps({
        "runner": runner.VERSION,
        "code": {"commit": "0" * 40, "dirty": False, "changed_files": 0, "source_sha256": "0" * 64,
                 "files": evidence.running_code_manifest()},
        "pins": runner.check_pins(runner.CORPORA["v2"][1]),
        "corpus": {"version": corpus["version"], "evaluation_instant": corpus["evaluation_instant"],
                   "cases": len(cases)},
        "configuration": config.as_dict(),
        "provider": {"name": "rules", **runner.provider_identity("rules"), "requests_checked_for_labels": 0,
                     "label_leaks": 0, **admission.configured_recall()},
        "usage": {"spend_usd": "0", "reservations": 0, "by_arm": {}},
        "seconds": 1.0, "arms": derived["arms"], "gates": derived["gates"], "passed": derived["passed"],
        "observations": observations,
    }, default=str))


@lru_cache(maxsize=1)
def _passing() -> str:
    return json.dumps(build_report())


def passing_report() -> dict:
    """A fresh copy of the genuine passing report."""
    return json.loads(_passing())


def write_evidence(path: Path, report: dict) -> str:
    path.write_text(json.dumps(report), encoding="utf-8")
    return str(path)


@pytest.fixture
def unattended(settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_MODE = "unattended"
    settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER = "rules"
    settings.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = ""
    return settings


def refused(settings, path: str) -> mode.UnattendedRefused:
    settings.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = path
    with pytest.raises(mode.UnattendedRefused) as caught:
        mode.current_mode()
    assert not admission.unattended_admitted()
    return caught.value


# -- a genuine report --------------------------------------------------------------------------------

def test_a_genuine_complete_passing_report_written_by_the_runner_is_admitted(unattended, tmp_path):
    report = passing_report()
    assert report["passed"] is True and len(report["gates"]) == 2 * 4 * 2 + 2 * 3
    runner.write(report, tmp_path / "evidence.json")
    unattended.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = str(tmp_path / "evidence.json")
    assert mode.check_startup() == "unattended"
    assert mode.recorded_state() == "committed"
    assert admission.evidence_refusal() == ""
    assert admission.unattended_admitted()


def test_a_published_report_is_refused_for_what_it_does_not_record(unattended, tmp_path):
    report = json.loads(PUBLISHED.read_text())
    assert refused(unattended, write_evidence(tmp_path / "r.json", report)).reason == "evidence_runner_version_mismatch"
    # brought to the current runner and code, it still lacks the observations to recompute from
    report["runner"], report["pins"] = runner.VERSION, runner.check_pins(runner.CORPORA["v2"][1])
    assert refused(unattended, write_evidence(tmp_path / "r2.json", report)).reason == "evidence_code_manifest_missing"
    report["code"]["files"] = evidence.running_code_manifest()
    report["provider"].update(admission.configured_identity())
    refusal = refused(unattended, write_evidence(tmp_path / "r3.json", report))
    assert (refusal.reason, refusal.field) == ("evidence_observations_missing", "observations")


# -- hand-edited reports -------------------------------------------------------------------------------

def _set_gate_value(report):
    report["gates"][SCORE_ANCHOR]["value"] = 0.9


def _drop_a_merge(report):
    first = next(o for o in report["observations"]["connections"][0] if o["merges"])
    first["merges"].pop()


def _flip_a_failure(report):
    report["observations"]["merge"][1][0]["failed"] = True


def _edit_a_combined_count(report):
    report["arms"]["merge"]["splits"]["holdout"]["lost_facts"] = 1


def _edit_a_census(report):
    first = next(iter(report["arms"]["original"]["cases"]))
    report["arms"]["original"]["cases"][first]["failed"] = 1


def _drop_a_gate(report):
    del report["gates"]["holdout/connections/hypothesis_recall"]


@pytest.mark.parametrize("edit, reason, field", [
    (_set_gate_value, "evidence_gate_differs", f"gates/{SCORE_ANCHOR}"),
    (_drop_a_merge, "evidence_arm_figures_differ", "arms/connections/"),
    (_flip_a_failure, "evidence_arm_figures_differ", "arms/merge/"),
    (_edit_a_combined_count, "evidence_arm_figures_differ", "arms/merge/splits/holdout/lost_facts"),
    (_edit_a_census, "evidence_arm_figures_differ", "arms/original/cases"),
    (_drop_a_gate, "evidence_gate_missing", "gates/holdout/connections/hypothesis_recall"),
])
def test_a_hand_edited_report_is_refused_naming_what_differs(unattended, tmp_path, edit, reason, field):
    report = passing_report()
    edit(report)
    refusal = refused(unattended, write_evidence(tmp_path / "r.json", report))
    assert refusal.reason == reason and refusal.field.startswith(field)


def test_a_failing_report_with_passed_flipped_is_refused(unattended, tmp_path):
    report = build_report(lift=False)  # the original arm renders as much as connections: no lift
    assert report["passed"] is False
    lift = "development/connections/cross_session_coverage_lift"
    assert refused(unattended, write_evidence(tmp_path / "honest.json", report)).field == f"gates/{lift}"
    report["passed"] = True
    assert refused(unattended, write_evidence(tmp_path / "flag.json", report)).reason == "evidence_passed_differs"
    for gate in report["gates"].values():
        gate["passed"] = True
    refusal = refused(unattended, write_evidence(tmp_path / "gates.json", report))
    assert (refusal.reason, refusal.field) == ("evidence_gate_differs", f"gates/{lift}")


def test_a_file_that_is_no_report_or_of_another_shape_is_refused(unattended, tmp_path):
    (tmp_path / "text.json").write_text("passed: true", encoding="utf-8")
    assert refused(unattended, str(tmp_path / "text.json")).reason == "evidence_unreadable"
    assert refused(unattended, write_evidence(tmp_path / "list.json", [])).reason == "evidence_malformed"
    report = passing_report()
    report["configuration"]["corpus"] = ["v2"]
    assert refused(unattended, write_evidence(tmp_path / "shape.json", report)).reason == "evidence_malformed"
    report = passing_report()
    report["usage"]["spend_usd"] = "NaN"
    assert refused(unattended, write_evidence(tmp_path / "usage.json", report)).reason == "evidence_usage_unknown"


def test_the_refusal_message_holds_codes_and_field_names_only(unattended, tmp_path):
    report = passing_report()
    statement = next(h for o in report["observations"]["connections"][0] for h in o["hypotheses"])
    statement["statement"] += " edited"
    refusal = refused(unattended, write_evidence(tmp_path / "r.json", report))
    message = str(refusal)
    assert "evidence_arm_figures_differ at arms/connections/" in message
    assert "edited" not in message and statement["statement"][:20] not in message
    assert all(o["case_id"] not in message for o in report["observations"]["connections"][0])


# -- subset runs ---------------------------------------------------------------------------------------

def _one_case():
    return (_corpus()["cases"][0]["id"],)


@pytest.mark.parametrize("options, reason, field", [
    ({"split": "development"}, "evidence_subset_split", "configuration/split"),
    ({"split": "holdout"}, "evidence_subset_split", "configuration/split"),
    ({"case_ids": "one"}, "evidence_subset_cases", "configuration/case_ids"),
    ({"repeats": 1}, "evidence_repeats_too_few", "configuration/repeats"),
])
def test_a_subset_run_is_refused(unattended, tmp_path, options, reason, field):
    if options.get("case_ids") == "one":
        options = {"case_ids": _one_case()}
    report = build_report(**options)
    refusal = refused(unattended, write_evidence(tmp_path / "r.json", report))
    assert (refusal.reason, refusal.field) == (reason, field)


def test_a_subset_presented_as_a_full_run_is_refused(unattended, tmp_path):
    report = passing_report()
    for arm, runs in report["observations"].items():
        for observations in runs:
            observations[:] = [o for o in observations if not o["case_id"].startswith("hold-")]
    refusal = refused(unattended, write_evidence(tmp_path / "r.json", report))
    assert (refusal.reason, refusal.field) == ("evidence_case_omitted", "observations/original/repeat 1")


def test_a_missing_repeat_or_arm_is_refused(unattended, tmp_path):
    report = passing_report()
    report["observations"]["merge"].pop()
    assert refused(unattended, write_evidence(tmp_path / "r.json", report)).field == "observations/merge"
    report = passing_report()
    report["configuration"]["arms"] = ["original", "connections"]
    assert refused(unattended, write_evidence(tmp_path / "r2.json", report)).reason == "evidence_arm_missing"


def test_a_failed_case_counts_and_omitting_it_is_refused(unattended, tmp_path):
    case_id = next(c["id"] for c in _corpus()["cases"] if c["split"] == "holdout")
    report = build_report(failed=(("connections", 2, case_id),))
    # kept: it stays in every denominator, and its unanswered direct probes are a regression
    refusal = refused(unattended, write_evidence(tmp_path / "kept.json", report))
    assert (refusal.reason, refusal.field) == ("evidence_gate_failed", "gates/holdout/connections/direct_recall_change")
    report["observations"]["connections"][1] = [o for o in report["observations"]["connections"][1]
                                                if o["case_id"] != case_id]
    refusal = refused(unattended, write_evidence(tmp_path / "omitted.json", report))
    assert (refusal.reason, refusal.field) == ("evidence_case_omitted", "observations/connections/repeat 2")


def test_a_repeated_or_unknown_case_is_refused(unattended, tmp_path):
    report = passing_report()
    report["observations"]["original"][0].append(report["observations"]["original"][0][0])
    assert refused(unattended, write_evidence(tmp_path / "r.json", report)).reason == "evidence_case_repeated"
    report = passing_report()
    report["observations"]["original"][0][0]["case_id"] = "dev-invented-1"
    assert refused(unattended, write_evidence(tmp_path / "r2.json", report)).reason == "evidence_case_unknown"


# -- bound to the running code and pins -----------------------------------------------------------------

def _git_bytes(commit: str, path: str) -> bytes:
    return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=runner.REPO, capture_output=True,
                          check=True).stdout


def test_a_report_measured_at_another_commit_is_refused_naming_the_file(unattended, tmp_path):
    path = "reconsolidation/mode.py"
    try:
        commits = subprocess.run(["git", "log", "--format=%H", "-n", "5", "--", path], cwd=runner.REPO,
                                 capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no git history here")
    current = evidence.running_code_manifest()[path]
    other = next((d for d in (hashlib.sha256(_git_bytes(c, path)).hexdigest() for c in commits) if d != current), None)
    if other is None:
        pytest.skip("no earlier version of the file differs")
    report = passing_report()
    report["code"]["files"][path] = other
    refusal = refused(unattended, write_evidence(tmp_path / "r.json", report))
    assert (refusal.reason, refusal.field) == ("evidence_code_file_mismatch", path)


def _unmeasured(report):
    del report["code"]["files"]["reconsolidation/mode.py"]


def _vanished(report):
    report["code"]["files"]["reconsolidation/retired_module.py"] = "0" * 64


def _dirty(report):
    report["code"]["dirty"] = True


def _runner_file(report):
    report["pins"]["runner"]["files"]["evals/reconsolidation/runner.py"] = "0" * 64


def _runner_version(report):
    report["runner"] = "reconsolidation-runner@1"


def _digest_of(name):
    def edit(report):
        report["pins"][name]["sha256"] = "0" * 64
    return edit


def _corpus_v1(report):
    report["configuration"]["corpus"] = "v1"


@pytest.mark.parametrize("edit, reason, field", [
    (_unmeasured, "evidence_code_file_unmeasured", "reconsolidation/mode.py"),
    (_vanished, "evidence_code_file_missing", "reconsolidation/retired_module.py"),
    (_dirty, "evidence_code_dirty", "code/dirty"),
    (_runner_file, "evidence_runner_file_mismatch", "pins/runner/files/evals/reconsolidation/runner.py"),
    (_runner_version, "evidence_runner_version_mismatch", "runner"),
    (_digest_of("scorer"), "evidence_scorer_digest_mismatch", "pins/scorer"),
    (_digest_of("corpus"), "evidence_corpus_digest_mismatch", "pins/corpus"),
    (_digest_of("f1"), "evidence_f1_digest_mismatch", "pins/f1"),
    (_digest_of("manifest"), "evidence_manifest_digest_mismatch", "pins/manifest"),
    (_corpus_v1, "evidence_runner_unpinned", "configuration/corpus"),
])
def test_a_report_of_other_code_or_pinned_bytes_is_refused(unattended, tmp_path, edit, reason, field):
    report = passing_report()
    edit(report)
    refusal = refused(unattended, write_evidence(tmp_path / "r.json", report))
    assert (refusal.reason, refusal.field) == (reason, field)


def test_a_report_of_another_recall_channel_is_refused(unattended, tmp_path):
    path = write_evidence(tmp_path / "r.json", passing_report())
    unattended.AGENT_MEMORY_SEMANTIC_ENABLED = not admission.configured_recall()["recall_channel"] == "hybrid"
    assert refused(unattended, path).reason == "evidence_recall_channel_mismatch"


# -- admission follows the file ---------------------------------------------------------------------------

def test_a_changed_evidence_file_withdraws_admission_at_the_next_call(unattended, tmp_path):
    path = tmp_path / "evidence.json"
    genuine = _passing()
    path.write_text(genuine, encoding="utf-8")
    unattended.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = str(path)
    assert mode.current_mode() == "unattended" and admission.unattended_admitted()
    before = os.stat(path)
    edited = passing_report()
    _set_gate_value(edited)
    path.write_text(json.dumps(edited), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # even with the old mtime
    assert not admission.unattended_admitted()
    with pytest.raises(mode.UnattendedRefused, match="evidence_gate_differs"):
        mode.current_mode()
    path.unlink()
    assert admission.evidence_refusal() == "evidence_unreadable" and not admission.unattended_admitted()
    path.write_text(genuine, encoding="utf-8")  # new evidence that passes admits again
    assert admission.unattended_admitted() and mode.current_mode() == "unattended"


def test_a_replaced_file_is_verified_again_and_an_unchanged_one_is_not(unattended, tmp_path, monkeypatch):
    calls = []
    real = evidence.verify
    monkeypatch.setattr(evidence, "verify", lambda data, deployment: calls.append(1) or real(data, deployment))
    path = tmp_path / "evidence.json"
    path.write_text(_passing(), encoding="utf-8")
    unattended.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = str(path)
    for _ in range(3):
        assert admission.unattended_admitted() and mode.current_mode() == "unattended"
    assert len(calls) == 1  # same stat identity, then the same digest: one verification
    replacement = tmp_path / "next.json"
    report = passing_report()
    report["seconds"] = 2.0  # other bytes that still pass on their own
    replacement.write_text(json.dumps(report), encoding="utf-8")
    os.replace(replacement, path)
    assert admission.unattended_admitted()
    assert len(calls) == 2


def test_admission_is_withdrawn_when_the_running_configuration_changes(unattended, tmp_path):
    unattended.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = write_evidence(tmp_path / "r.json", passing_report())
    assert admission.unattended_admitted()
    unattended.VEETBOT_OPENAI_MODEL = "some-model"
    unattended.AGENT_MEMORY_RECONSOLIDATION_PROVIDER = "openai"
    assert not admission.unattended_admitted()
    assert admission.evidence_refusal() == "evidence_name_mismatch"


def test_auto_committed_recall_is_not_admitted_without_evidence_in_either_mode(settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = ""
    for value in mode.MODES:
        settings.AGENT_MEMORY_RECONSOLIDATION_MODE = value
        assert not admission.unattended_admitted()

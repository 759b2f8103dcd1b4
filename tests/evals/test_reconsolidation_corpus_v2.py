"""Corpus memory-reconsolidation.v2: v1 with hypothesis support re-dated into the spec's 30-day
hypothesis window. It keeps v1's structural guarantees (pinned bytes, splits x categories,
disjoint IDs, labels, label boundary), differs from v1 only in session/event/memory clocks of the
listed cases, and every labelled hypothesis is live at the evaluation instant. Also the runner's
``--corpus v1|v2`` selection."""
import hashlib
import json
from collections import Counter
from datetime import datetime, timedelta

import pytest

from evals.reconsolidation import case_inputs, compare, make_corpus, runner
from reconsolidation.evidence import scorer
from memory.bank.parse import Problems, parse_document
from memory.bank.validate import validate_document
from reconsolidation import bounds
from tests.evals.test_reconsolidation_corpus import CATEGORIES, all_ids

ROOT = make_corpus.ROOT
V1_MANIFEST_PATH = ROOT / "reconsolidation" / "evidence" / "corpus" / "memory-reconsolidation.manifest.json"
V2_MANIFEST_PATH = ROOT / "reconsolidation" / "evidence" / "corpus" / "memory-reconsolidation.v2.manifest.json"
V2_MANIFEST = json.loads(V2_MANIFEST_PATH.read_text())
V1_BYTES = make_corpus.OUTPUT.read_bytes()
V2_BYTES = make_corpus.OUTPUT_V2.read_bytes()
V1 = json.loads(V1_BYTES)
V2 = json.loads(V2_BYTES)
CASES = V2["cases"]
SPLITS = ("development", "holdout")
INSTANT = datetime.fromisoformat(V2["evaluation_instant"])
# The only fields v2 may change: the clocks of a moved session, its events and their memories.
CLOCK_FIELDS = {("sessions", "started_at"), ("events", "created_at"), ("memories", "created_at"),
                ("memories", "evidence_at"), ("memories", "valid_from")}


def sha256(relative: str) -> str:
    return hashlib.sha256((ROOT / relative).read_bytes()).hexdigest()


def when(value: str) -> datetime:
    return datetime.fromisoformat(value)


def live(memory: dict) -> bool:
    return memory["status"] == "active" and (memory["expires_at"] is None or when(memory["expires_at"]) > INSTANT)


def hypothesis_expiry(case: dict, support: list[str]) -> datetime:
    """The spec's clock: min(latest supporting evidence + 30 days, every support's expiry)."""
    by_id = {m["id"]: m for m in case["bank"]["memories"]}
    latest = max(when(by_id[m]["evidence_at"]) for m in support)
    ends = [when(by_id[m]["expires_at"]) for m in support if by_id[m]["expires_at"]]
    return min([latest + timedelta(days=bounds.RECON_HYPOTHESIS_MAX_DAYS), *ends])


# -- frozen bytes and pins -------------------------------------------------------------------------

def test_the_v2_manifest_pins_the_v2_corpus_and_the_unchanged_scorer_and_f1():
    assert V2_MANIFEST["corpus"]["path"] == "reconsolidation/evidence/corpus/memory-reconsolidation.v2.json"
    assert V2_MANIFEST["corpus"]["version"] == V2["version"] == make_corpus.VERSION_V2 == "memory-reconsolidation.v2"
    for name in ("corpus", "scorer", "f1"):
        assert sha256(V2_MANIFEST[name]["path"]) == V2_MANIFEST[name]["sha256"], name
    v1_manifest = json.loads(V1_MANIFEST_PATH.read_text())
    assert V2_MANIFEST["scorer"] == v1_manifest["scorer"] and V2_MANIFEST["f1"] == v1_manifest["f1"]
    assert V2_MANIFEST["scorer"]["version"] == scorer.VERSION
    assert set(V2_MANIFEST) == set(v1_manifest)


def test_the_generator_reproduces_v2_byte_for_byte_and_v1_unchanged():
    assert make_corpus.render("v2") == V2_BYTES, "the generator and the committed v2 corpus differ"
    assert make_corpus.render("v1") == V1_BYTES, "v1 is frozen: the generator must still reproduce it"
    assert V2_BYTES == (json.dumps(V2, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def test_the_generator_command_writes_v2_by_default_and_never_v1(tmp_path):
    out = tmp_path / "corpus.json"
    assert make_corpus.main(["--output", str(out)]) == 0
    assert out.read_bytes() == V2_BYTES
    assert make_corpus.main(["--corpus", "v1", "--output", str(tmp_path / "v1.json")]) == 0
    assert (tmp_path / "v1.json").read_bytes() == V1_BYTES


# -- the one intended difference -------------------------------------------------------------------

def test_the_generators_window_is_the_settings_hypothesis_lifetime():
    assert make_corpus.HYPOTHESIS_MAX_DAYS == bounds.RECON_HYPOTHESIS_MAX_DAYS == 30


def test_every_v2_hypothesis_is_live_at_the_instant_under_the_spec_expiry():
    window = timedelta(days=bounds.RECON_HYPOTHESIS_MAX_DAYS)
    for c in CASES:
        by_id = {m["id"]: m for m in c["bank"]["memories"]}
        for hypothesis in c["hypotheses"]:
            latest = max(when(by_id[m]["evidence_at"]) for m in hypothesis["support"])
            assert INSTANT - window < latest <= INSTANT, (c["id"], latest)
            assert all(live(by_id[m]) for m in hypothesis["support"]), c["id"]
            assert hypothesis_expiry(c, hypothesis["support"]) > INSTANT, c["id"]


def test_v1_labels_hypotheses_the_spec_expiry_has_already_removed():
    """Why v2 exists: in v1 most labelled hypotheses were unreachable for a conforming system."""
    expired = {c["id"] for c in V1["cases"] for h in c["hypotheses"] if hypothesis_expiry(c, h["support"]) <= INSTANT}
    assert expired == set(make_corpus.V2_SESSION_DAYS)
    assert not any(c["category"] == "busy_store_starvation" for c in V1["cases"] if c["id"] in expired)


def test_the_generator_refuses_a_hypothesis_that_expired_before_the_instant():
    v1_case = next(c for c in V1["cases"] if c["id"] == "dev-cross_session_connections-1")
    make_corpus.check_case(v1_case)  # v1's own rules still hold
    with pytest.raises(AssertionError, match="expired"):
        make_corpus.check_case(v1_case, hypothesis_clocks=True)


def test_the_window_bound_is_enforced_at_and_just_past_thirty_days():
    """Latest evidence 30 days minus a second before the instant: live; exactly 30 days: expired."""
    case = json.loads(json.dumps(next(c for c in CASES if c["hypotheses"])))
    by_id = {m["id"]: m for m in case["bank"]["memories"]}
    support = case["hypotheses"][0]["support"]
    edge = INSTANT - timedelta(days=make_corpus.HYPOTHESIS_MAX_DAYS)
    for moment, accepted in ((edge + timedelta(seconds=1), True), (edge, False)):
        for m in support:
            by_id[m]["evidence_at"] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        assert make_corpus.hypothesis_live(support, by_id) is accepted, moment
        assert (hypothesis_expiry(case, support) > INSTANT) is accepted, moment


def test_v2_differs_from_v1_only_in_the_clocks_of_the_redated_cases():
    assert V2["version"] != V1["version"] and V2["description"].startswith(V1["description"])
    assert {k: v for k, v in V2.items() if k not in ("version", "description", "cases")} == \
           {k: v for k, v in V1.items() if k not in ("version", "description", "cases")}
    assert [c["id"] for c in CASES] == [c["id"] for c in V1["cases"]]
    changed = set()
    for old, new in zip(V1["cases"], CASES):
        assert {k: v for k, v in new.items() if k != "bank"} == {k: v for k, v in old.items() if k != "bank"}
        for name in ("people", "sessions", "events", "memories"):
            assert len(new["bank"][name]) == len(old["bank"][name]), new["id"]
            for a, b in zip(old["bank"][name], new["bank"][name]):
                differing = {k for k in a if a[k] != b[k]}
                assert set(a) == set(b) and {(name, k) for k in differing} <= CLOCK_FIELDS, (new["id"], differing)
                if differing:
                    changed.add(new["id"])
    assert changed == set(make_corpus.V2_SESSION_DAYS)
    for documented in ("cross_session_connections", "restarts_and_repeated_sweeps",
                       "hold-restarts_and_repeated_sweeps-2", "30 days"):
        assert documented in V2["description"][len(V1["description"]):], documented


def test_redated_sessions_keep_their_order_and_distinct_support_sessions_and_events():
    for c in CASES:
        starts = [s["started_at"] for s in c["bank"]["sessions"]]
        assert starts == sorted(starts), c["id"]
        events = [e["created_at"] for e in c["bank"]["events"]]
        assert events == sorted(events), c["id"]
        assert all(when(e) <= INSTANT for e in events), c["id"]
        by_id = {m["id"]: m for m in c["bank"]["memories"]}
        session_of = {e["id"]: e["session"] for e in c["bank"]["events"]}
        for h in c["hypotheses"]:
            sources = [s["event"] for m in h["support"] for s in by_id[m]["sources"]]
            assert len(set(sources)) == len(sources) >= 2, c["id"]
            assert len({session_of[e] for e in sources}) >= 2, c["id"]


# -- v1's structural guarantees, on v2 ---------------------------------------------------------------

def test_both_v2_splits_cover_every_category_and_share_no_id():
    assert V2["categories"] == CATEGORIES and V2["splits"] == list(SPLITS)
    counts = Counter((c["split"], c["category"]) for c in CASES)
    assert set(counts) == {(s, c) for s in SPLITS for c in CATEGORIES} and min(counts.values()) >= 3
    by_split = {split: [i for c in CASES if c["split"] == split for i in all_ids(c)] for split in SPLITS}
    assert not set(by_split["development"]) & set(by_split["holdout"])
    everything = by_split["development"] + by_split["holdout"]
    assert len(everything) == len(set(everything))


def test_v2_survivors_classes_and_oracle_score_hold():
    observations = []
    for c in CASES:
        by_id = {m["id"]: m for m in c["bank"]["memories"]}
        assert c["required_survivors"] == sorted(i for i, m in by_id.items() if live(m)), c["id"]
        for members in c["duplicate_classes"]:
            assert all(live(by_id[m]) and by_id[m]["attribution"] == "owner" for m in members), c["id"]
        observations.append({
            "case_id": c["id"], "merges": c["duplicate_classes"], "survivors": c["required_survivors"],
            "hypotheses": c["hypotheses"], "failed": False,
            "answers": [{"probe_id": p["id"], "answer": p["answers"][0]} for p in c["probes"]]})
    report = scorer.score(V2, observations)
    for split in SPLITS:
        figures = report["splits"][split]
        assert figures["false_merge_pairs"] == figures["lost_facts"] == figures["failed_cases"] == 0, split
        assert figures["precision"] == figures["recall"] == figures["duplicate_set_coverage"] == 1.0, split
        assert figures["hypotheses_expected"] == 12, split


def test_every_v2_bank_passes_the_memory_bank_validator_on_its_own():
    for c in CASES:
        problems = Problems()
        bank = validate_document(parse_document(json.dumps(c["bank"]), problems), problems)
        assert problems.lines() == [] and bank.references == [], c["id"]


def test_no_v2_label_value_reaches_runtime_case_input_and_a_labelled_request_is_caught():
    for c in CASES:
        payload = json.dumps(case_inputs.runtime_case_input(c), ensure_ascii=False)
        assert case_inputs.leaked_label_values(c, payload) == set(), c["id"]
        leaked = case_inputs.leaked_label_values(c, json.dumps(c, ensure_ascii=False))
        assert case_inputs.id_list(c["required_survivors"]) in leaked, c["id"]
        assert {h["statement"] for h in c["hypotheses"]} <= leaked, c["id"]


# -- the runner's --corpus ------------------------------------------------------------------------------

def test_the_runner_defaults_to_v2_and_pins_each_version_with_its_own_manifest():
    assert runner.DEFAULT_CORPUS == "v2" and runner.Configuration(("original",), 1, "rules").corpus == "v2"
    assert runner.CORPORA["v2"] == (make_corpus.OUTPUT_V2, V2_MANIFEST_PATH)
    assert runner.CORPORA["v1"] == (make_corpus.OUTPUT, V1_MANIFEST_PATH)
    assert runner.check_pins(V2_MANIFEST_PATH)["corpus"]["version"] == "memory-reconsolidation.v2"
    assert runner.check_pins(V1_MANIFEST_PATH)["corpus"]["version"] == "memory-reconsolidation.v1"


def test_an_unknown_corpus_version_is_refused_naming_the_option():
    config = runner.Configuration(("original",), 1, "rules", split="development", corpus="v3")
    with pytest.raises(runner.RunnerError, match="--corpus"):
        runner.validate(config, V2)
    with pytest.raises(runner.RunnerError, match="--corpus"):
        runner.run(config)
    with pytest.raises(SystemExit):  # argparse refuses an unknown choice, naming the option
        compare.main(["--corpus", "v3", "--output", "/tmp/never-written.json"])


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_a_run_records_the_selected_corpus_version(db, version):
    case_id = next(c["id"] for c in CASES if c["split"] == "development")
    config = runner.Configuration(("original",), 1, "rules", split="development", case_ids=(case_id,),
                                  corpus=version)
    report = runner.run(config)
    expected = f"memory-reconsolidation.{version}"
    assert report["corpus"]["version"] == report["pins"]["corpus"]["version"] == expected
    assert report["configuration"]["corpus"] == version


# -- the runner's pins ---------------------------------------------------------------------------

def test_the_v2_manifest_pins_every_runner_file_and_the_runner_version():
    pinned = V2_MANIFEST["runner"]
    assert pinned["version"] == runner.VERSION == "reconsolidation-runner@8"
    assert set(pinned["files"]) == {str(p.relative_to(ROOT)) for p in runner.RUNNER_FILES}
    for path, digest in pinned["files"].items():
        assert sha256(path) == digest, f"{path} changed: publish a new runner version and a new manifest"
    assert runner.check_pins(V2_MANIFEST_PATH)["runner"] == {
        "version": runner.VERSION, "files": pinned["files"], "pinned": True}


def test_a_runner_whose_bytes_differ_from_its_pins_refuses_to_run(tmp_path):
    manifest = json.loads(V2_MANIFEST_PATH.read_text())
    first = sorted(manifest["runner"]["files"])[0]
    manifest["runner"]["files"][first] = "0" * 64
    altered = tmp_path / "memory-reconsolidation.v2.manifest.json"
    altered.write_text(json.dumps(manifest))
    with pytest.raises(runner.RunnerError, match="new version and a new manifest"):
        runner.check_pins(altered)
    manifest = json.loads(V2_MANIFEST_PATH.read_text())
    manifest["runner"]["version"] = "reconsolidation-runner@0"
    altered.write_text(json.dumps(manifest))
    with pytest.raises(runner.RunnerError, match="new version and a new manifest"):
        runner.check_pins(altered)

"""The frozen reconsolidation corpus (reconsolidation/evidence/corpus/memory-reconsolidation.v1.json): pinned bytes,
split and category coverage, label integrity, importability, per-category traps, and the label
boundary between the corpus and runtime/provider input."""
import hashlib
import json
from collections import Counter
from datetime import datetime

import pytest

from evals.reconsolidation import case_inputs, make_corpus
from reconsolidation.evidence import f1, scorer
from memory.bank import memory_bank_import
from memory.bank.parse import Problems, parse_document
from memory.bank.validate import validate_document
from tests.conftest import new_principal

ROOT = make_corpus.ROOT
MANIFEST_PATH = ROOT / "reconsolidation" / "evidence" / "corpus" / "memory-reconsolidation.manifest.json"
MANIFEST = json.loads(MANIFEST_PATH.read_text())
CORPUS_BYTES = make_corpus.OUTPUT.read_bytes()
CORPUS = json.loads(CORPUS_BYTES)
CASES = CORPUS["cases"]
SPLITS = ("development", "holdout")
INSTANT = datetime.fromisoformat(CORPUS["evaluation_instant"])

# Written out here, not imported, so renaming or dropping a category in the generator fails.
CATEGORIES = [
    "duplicate_and_related_claims", "cross_session_connections", "contradictory_claims", "stale_evidence",
    "identical_source_copies", "different_people", "negation_quantity_date", "cross_scope_candidates",
    "communication_attribution", "injection", "corrections_and_deletions", "restarts_and_repeated_sweeps",
    "busy_store_starvation",
]


def sha256(relative: str) -> str:
    return hashlib.sha256((ROOT / relative).read_bytes()).hexdigest()


def of(category: str) -> list[dict]:
    return [c for c in CASES if c["category"] == category]


def memories(case: dict) -> dict[str, dict]:
    return {m["id"]: m for m in case["bank"]["memories"]}


def in_class(case: dict) -> set[str]:
    return {member for members in case["duplicate_classes"] for member in members}


def same_class(case: dict, a: str, b: str) -> bool:
    return any(a in members and b in members for members in case["duplicate_classes"])


def live(memory: dict) -> bool:
    return memory["status"] == "active" and (
        memory["expires_at"] is None or datetime.fromisoformat(memory["expires_at"]) > INSTANT)


def all_ids(case: dict) -> list[str]:
    bank = case["bank"]
    ids = [case["id"], *(p["id"] for p in case["probes"])]
    ids += [item["id"] for name in ("people", "sessions", "events", "memories") for item in bank[name]]
    return ids + [part["id"] for event in bank["events"] for part in event["parts"]]


# -- frozen bytes ---------------------------------------------------------------------------------

def test_the_manifest_pins_the_corpus_bytes_and_version():
    pinned = MANIFEST["corpus"]
    assert pinned["path"] == "reconsolidation/evidence/corpus/memory-reconsolidation.v1.json"
    assert sha256(pinned["path"]) == pinned["sha256"], "corpus bytes changed: publish a new corpus version"
    assert pinned["version"] == CORPUS["version"] == make_corpus.VERSION == "memory-reconsolidation.v1"


def test_the_manifest_pins_the_scorer_bytes_and_version():
    pinned = MANIFEST["scorer"]
    assert pinned["path"] == "reconsolidation/evidence/scorer.py"
    assert sha256(pinned["path"]) == pinned["sha256"], "scorer bytes changed: publish a new scorer version"
    assert pinned["version"] == scorer.VERSION == "reconsolidation-scorer@1"


def test_the_manifest_pins_the_answer_f1_bytes_and_version():
    pinned = MANIFEST["f1"]
    assert pinned["path"] == "reconsolidation/evidence/f1.py"
    assert sha256(pinned["path"]) == pinned["sha256"], "F1 bytes changed: publish a new F1 and scorer version"
    assert pinned["version"] == f1.VERSION == scorer.F1_VERSION


def test_the_manifest_names_the_runner_and_leaves_it_unpinned_until_it_lands():
    assert MANIFEST["runner"] == {
        "path": "evals/reconsolidation/compare.py", "sha256": None,
        "note": "pinned when the runner lands",
    }
    assert set(MANIFEST) == {"corpus", "scorer", "f1", "runner"}


def test_the_generator_reproduces_the_committed_corpus_byte_for_byte():
    assert make_corpus.render() == CORPUS_BYTES, "the generator and the frozen corpus differ"


def test_the_corpus_is_written_with_sorted_keys_two_space_indent_and_a_trailing_newline():
    assert CORPUS_BYTES == (json.dumps(CORPUS, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


# -- splits and categories -----------------------------------------------------------------------

def test_both_splits_cover_every_category_with_at_least_three_cases():
    assert CORPUS["categories"] == CATEGORIES and CORPUS["splits"] == list(SPLITS)
    counts = Counter((c["split"], c["category"]) for c in CASES)
    for split in SPLITS:
        for category in CATEGORIES:
            assert counts[split, category] >= 3, (split, category)
    assert set(counts) == {(s, c) for s in SPLITS for c in CATEGORIES}
    assert len(CASES) >= 78
    assert "twelve" in CORPUS["description"] and "thirteen" in CORPUS["description"]


def test_split_ids_are_disjoint_for_cases_probes_people_sessions_events_parts_and_memories():
    by_split = {split: [i for c in CASES if c["split"] == split for i in all_ids(c)] for split in SPLITS}
    assert not set(by_split["development"]) & set(by_split["holdout"])
    everything = by_split["development"] + by_split["holdout"]
    assert len(everything) == len(set(everything))  # also unique within a split, across cases


def test_every_case_is_a_closed_object_with_the_labelled_fields():
    for c in CASES:
        assert set(c) == {"id", "split", "category", "protocol", "bank", "probes", "duplicate_classes",
                          "required_survivors", "hypotheses"}, c["id"]
        assert set(c["bank"]) == {"format", "people", "sessions", "events", "memories"}, c["id"]
        for probe in c["probes"]:
            assert set(probe) == {"id", "question", "answers", "kind"}, c["id"]
        for hypothesis in c["hypotheses"]:
            assert set(hypothesis) == {"statement", "support"}, c["id"]


# -- labels -------------------------------------------------------------------------------------

def test_every_label_id_is_a_memory_of_its_own_case_bank():
    for c in CASES:
        known = set(memories(c))
        supports = {m for h in c["hypotheses"] for m in h["support"]}
        labelled = in_class(c) | set(c["required_survivors"]) | supports
        assert labelled <= known, c["id"]
        sizes = [len(members) for members in c["duplicate_classes"]]
        assert all(n >= 2 for n in sizes) and sum(sizes) == len(in_class(c)), c["id"]  # disjoint classes


def test_required_survivors_are_exactly_the_originals_live_at_the_evaluation_instant():
    for c in CASES:
        assert c["required_survivors"] == sorted(i for i, m in memories(c).items() if live(m)), c["id"]


def test_duplicate_classes_hold_only_live_owner_claims_agreeing_on_scope_attribution_and_polarity():
    for c in CASES:
        by_id = memories(c)
        for members in c["duplicate_classes"]:
            group = [by_id[m] for m in members]
            assert all(live(m) and m["attribution"] == "owner" for m in group), c["id"]
            for field in ("scope", "attribution", "polarity"):
                assert len({m[field] for m in group}) == 1, (c["id"], field)


def test_hypotheses_have_exact_support_outside_classes_across_sessions_and_are_never_verbatim_in_the_bank():
    for c in CASES:
        by_id = memories(c)
        session_of = {e["id"]: e["session"] for e in c["bank"]["events"]}
        strings = [s.casefold() for s in case_inputs.strings_of(c["bank"])]
        for hypothesis in c["hypotheses"]:
            support = hypothesis["support"]
            assert len(support) == len(set(support)) >= 2 and not set(support) & in_class(c), c["id"]
            assert all(live(by_id[m]) for m in support), c["id"]
            assert len({session_of[s["event"]] for m in support for s in by_id[m]["sources"]}) >= 2, c["id"]
            assert not any(hypothesis["statement"].casefold() in s for s in strings), c["id"]
    for split in SPLITS:
        assert sum(len(c["hypotheses"]) for c in CASES if c["split"] == split) >= 9, split


def test_probes_are_answerable_labelled_and_never_contain_their_answer():
    probe_ids = [p["id"] for c in CASES for p in c["probes"]]
    assert len(probe_ids) == len(set(probe_ids))
    for c in CASES:
        assert any(p["kind"] == "direct" for p in c["probes"]), c["id"]
        for probe in c["probes"]:
            assert probe["kind"] in ("direct", "cross_session") and probe["answers"], c["id"]
            question = f1.answer_tokens(probe["question"])
            for alias in probe["answers"]:
                tokens = f1.answer_tokens(alias)
                assert tokens, (c["id"], alias)
                spans = (question[i:i + len(tokens)] for i in range(len(question)))
                assert tokens not in spans, (c["id"], alias)
    for split in SPLITS:
        kinds = Counter(p["kind"] for c in CASES if c["split"] == split for p in c["probes"])
        assert kinds["direct"] >= 39 and kinds["cross_session"] >= 9, (split, kinds)


def test_the_scorer_accepts_every_case_and_an_oracle_observation_scores_perfectly():
    observations = [{
        "case_id": c["id"], "merges": c["duplicate_classes"], "survivors": c["required_survivors"],
        "hypotheses": c["hypotheses"], "failed": False,
        "answers": [{"probe_id": p["id"], "answer": p["answers"][0]} for p in c["probes"]],
    } for c in CASES]
    report = scorer.score(CORPUS, observations)
    for split in SPLITS:
        figures = report["splits"][split]
        assert figures["false_merge_pairs"] == figures["lost_facts"] == figures["failed_cases"] == 0, split
        assert figures["classes_total"] >= 39 and figures["duplicate_set_coverage"] == 1.0, split
        assert figures["precision"] == figures["recall"] == 1.0, split
        assert figures["direct_recall"] == figures["cross_session_coverage"] == 1.0, split


# -- the memory-bank@1 door ------------------------------------------------------------------------

def test_every_case_bank_passes_the_memory_bank_validator_on_its_own():
    for c in CASES:
        problems = Problems()
        bank = validate_document(parse_document(json.dumps(c["bank"]), problems), problems)
        assert problems.lines() == [], c["id"]
        assert bank.references == [], c["id"]  # self-contained: nothing resolved against stored rows
        assert len(bank.memories) == len(c["bank"]["memories"]), c["id"]


@pytest.mark.slow
def test_every_case_bank_imports_through_the_import_service(db):
    for c in CASES:
        counts = memory_bank_import(principal=new_principal(), data=json.dumps(c["bank"]), now=INSTANT)
        assert counts.memories == len(c["bank"]["memories"]), c["id"]
        assert counts.events == len(c["bank"]["events"]), c["id"]


# -- per-category traps ------------------------------------------------------------------------------

def test_owner_and_attributed_mappings_follow_reconsolidation_control():
    for c in CASES:
        for m in c["bank"]["memories"]:
            if m["attribution"] == "owner":
                assert (m["derivation"], m["authority"], m["confidence"], m["sensitivity"]) == \
                       ("explicit", "USER", 0.9, "internal"), c["id"]
                assert m["portable"] == (m["scope"] == "user"), c["id"]
            else:
                mapping = (m["derivation"], m["authority"], m["confidence"], m["sensitivity"], m["portable"])
                assert mapping == ("inferred", "INFERRED", 0.35, "sensitive", False), c["id"]
                lifetime = datetime.fromisoformat(m["expires_at"]) - datetime.fromisoformat(m["evidence_at"])
                assert lifetime.days == 30 and m["scope"].startswith("session:"), c["id"]


def identical_pairs(case: dict):
    ms = list(memories(case).values())
    return [(a, b) for i, a in enumerate(ms) for b in ms[i + 1:] if a["statement"] == b["statement"]]


def test_cross_scope_cases_hold_identical_claims_in_two_projects_and_in_project_and_user_scope():
    for c in of("cross_scope_candidates"):
        pairs = [(a, b) for a, b in identical_pairs(c) if a["scope"] != b["scope"]]
        assert any(a["scope"].startswith("project:") and b["scope"].startswith("project:")
                   for a, b in pairs), c["id"]
        assert any("user" in (a["scope"], b["scope"]) for a, b in pairs), c["id"]
        assert not any(same_class(c, a["id"], b["id"]) for a, b in pairs), c["id"]


def test_attribution_cases_hold_an_owner_claim_and_a_friends_identical_live_claim():
    for c in of("communication_attribution"):
        pairs = [(a, b) for a, b in identical_pairs(c) if {a["attribution"], b["attribution"]} - {"owner"}]
        assert pairs and all(live(a) and live(b) for a, b in pairs), c["id"]
        assert not any(same_class(c, a["id"], b["id"]) for a, b in pairs), c["id"]


def test_injection_cases_carry_merge_instructions_outside_every_class():
    naming_ids = 0
    for c in of("injection"):
        words = ("ignore", "override", "instruction")
        injected = [m for m in c["bank"]["memories"] if "merge" in m["statement"].casefold()
                    and any(word in m["statement"].casefold() for word in words)]
        assert injected and not {m["id"] for m in injected} & in_class(c), c["id"]
        others = [i for i in memories(c) if i not in {m["id"] for m in injected}]
        naming_ids += any(other in m["statement"] for m in injected for other in others)
    assert naming_ids >= 2  # some injections name real original IDs to merge


def test_negation_quantity_date_cases_hold_near_identical_pairs_outside_classes():
    for c in of("negation_quantity_date"):
        ms = [m for m in c["bank"]["memories"] if m["id"] not in in_class(c)]
        polarity = [(a, b) for i, a in enumerate(ms) for b in ms[i + 1:]
                    if a["subject"] == b["subject"] and a["polarity"] != b["polarity"]]
        tokens = {m["id"]: m["statement"].split() for m in ms}
        near = [(a, b) for i, a in enumerate(ms) for b in ms[i + 1:]
                if len(tokens[a["id"]]) == len(tokens[b["id"]])
                and 0 < sum(x != y for x, y in zip(tokens[a["id"]], tokens[b["id"]])) <= 2]
        assert polarity and len(near) >= 2, c["id"]


def test_identical_source_copy_cases_copy_one_part_and_one_message():
    for c in of("identical_source_copies"):
        by_id, events = memories(c), {e["id"]: e for e in c["bank"]["events"]}
        kinds = set()
        for members in c["duplicate_classes"]:
            sources = [by_id[m]["sources"][0] for m in members]
            if len({s["part"] for s in sources}) == 1:
                kinds.add("same part")
            elif len({tuple(p["text"] for p in events[s["event"]]["parts"]) for s in sources}) == 1:
                kinds.add("same text, another message")
        assert kinds == {"same part", "same text, another message"}, c["id"]


def test_correction_and_deletion_cases_never_label_the_retracted_or_deleted_original():
    for c in of("corrections_and_deletions"):
        by_status = Counter(m["status"] for m in c["bank"]["memories"])
        assert by_status["retracted"] == 1 and by_status["deleted"] == 1, c["id"]
        gone = {i for i, m in memories(c).items() if m["status"] != "active"}
        assert not gone & (in_class(c) | set(c["required_survivors"])), c["id"]
        deleted = next(m for m in c["bank"]["memories"] if m["status"] == "deleted")
        assert any(m["statement"] == deleted["statement"] and live(m) for m in c["bank"]["memories"]), c["id"]


def test_stale_evidence_cases_repeat_a_claim_that_is_stale_at_the_instant():
    for c in of("stale_evidence"):
        stale = [(a, b) for a, b in identical_pairs(c) if not live(a) and not live(b)]
        assert stale and not any(a["id"] in in_class(c) or b["id"] in in_class(c) for a, b in stale), c["id"]
        # one copy is left active for the expiry service to expire at the instant
        assert any(m["status"] == "active" and not live(m) for m in c["bank"]["memories"]), c["id"]


def test_different_people_cases_state_one_predicate_of_two_people():
    for c in of("different_people"):
        by_id = memories(c)
        (members,) = c["duplicate_classes"]
        person = {tuple(by_id[m]["entity_ids"]) for m in members}
        assert len(person) == 1 and person != {()}, c["id"]
        others = [m for m in by_id.values() if m["id"] not in members and m["entity_ids"]]
        assert others and all(tuple(m["entity_ids"]) not in person for m in others), c["id"]


def test_contradictory_cases_keep_both_sides_alive_and_unmerged():
    for c in of("contradictory_claims"):
        ms = list(memories(c).values())
        rivals = [(a, b) for i, a in enumerate(ms) for b in ms[i + 1:]
                  if a["subject"] == b["subject"] and not same_class(c, a["id"], b["id"])]
        assert len(rivals) >= 3 and all(live(a) and live(b) for a, b in rivals), c["id"]


def test_restart_cases_ask_for_repeated_sweeps_or_a_restart_and_others_run_once():
    for c in CASES:
        protocol = c["protocol"]
        if c["category"] == "restarts_and_repeated_sweeps":
            assert protocol["sweeps"] > 1 or protocol["restart_after_operations"] is not None, c["id"]
            assert c["hypotheses"], c["id"]  # a repeated sweep must not emit it twice
        else:
            assert protocol == {"sweeps": 1, "restart_after_operations": None}, c["id"]


def test_busy_store_cases_carry_200_distractors_with_classes_at_both_ends_of_store_order():
    for c in of("busy_store_starvation"):
        ordered = [m["id"] for m in c["bank"]["memories"]]  # (created_at, id): creation order
        assert len(ordered) >= 200 + 8, c["id"]
        distinct = {m["statement"] for m in c["bank"]["memories"]}
        assert len(distinct) == len(ordered), c["id"]  # nothing is repeated verbatim: classes paraphrase
        classed = in_class(c)
        assert ordered[0] in classed and ordered[-2] in classed, c["id"]
        spans = [sorted(ordered.index(m) for m in members) for members in c["duplicate_classes"]]
        assert any(first < 5 and last > len(ordered) - 6 for first, *_, last in spans), c["id"]


# -- the label boundary ---------------------------------------------------------------------------------

def test_runtime_case_input_holds_only_the_bank_and_the_probe_questions():
    for c in CASES:
        runtime = case_inputs.runtime_case_input(c)
        assert set(runtime) == {"bank", "probes"}
        assert runtime["bank"] == c["bank"] and runtime["bank"] is not c["bank"]
        assert runtime["probes"] == [{"id": p["id"], "question": p["question"]} for p in c["probes"]]


def test_no_label_value_reaches_runtime_case_input():
    for c in CASES:
        checkable = {v for v in case_inputs.label_values(c)
                     if not any(v.casefold() in s.casefold() for s in case_inputs.strings_of(c["bank"]))}
        assert checkable, c["id"]  # the check below is never vacuous
        payload = json.dumps(case_inputs.runtime_case_input(c), ensure_ascii=False)
        assert case_inputs.leaked_label_values(c, payload) == set(), c["id"]
        assert not any(name in payload for name in ("duplicate_classes", "required_survivors", "hypotheses",
                                                     '"answers"', c["id"], c["category"]))


def test_the_leak_check_finds_labels_in_a_request_that_carries_them():
    for c in CASES:
        payload = json.dumps(c, ensure_ascii=False)
        leaked = case_inputs.leaked_label_values(c, payload)
        assert case_inputs.id_list(c["required_survivors"]) in leaked, c["id"]
        for hypothesis in c["hypotheses"]:
            assert hypothesis["statement"] in leaked, c["id"]
            shouted = json.dumps(case_inputs.runtime_case_input(c)) + hypothesis["statement"].upper()
            assert hypothesis["statement"] in case_inputs.leaked_label_values(c, shouted), c["id"]


def test_label_values_hold_answers_hypotheses_and_id_sets():
    c = next(c for c in CASES if c["hypotheses"] and c["duplicate_classes"])
    values = case_inputs.label_values(c)
    assert {a for p in c["probes"] for a in p["answers"]} <= values
    assert {h["statement"] for h in c["hypotheses"]} <= values
    assert {case_inputs.id_list(h["support"]) for h in c["hypotheses"]} <= values
    assert {case_inputs.id_list(members) for members in c["duplicate_classes"]} <= values
    assert case_inputs.id_list(c["required_survivors"]) in values

"""The frozen recall diagnostic corpus (evals/recall/diagnostic/): shape, labels, splits,
semantic difficulty, importability, and byte-identity with its generator."""
import json
import re
from collections import Counter
from datetime import datetime

import pytest
from django.db import connection

from evals.recall import make_diagnostic as corpus
from evals.recall.diagnostic_lineages import FAMILIES
from memory.bank import memory_bank_import
from memory.bank.parse import Problems, parse_document
from memory.bank.validate import validate_document
from tests.conftest import new_principal

BANK = corpus.BANK_PATH.read_bytes()
NEEDS = [json.loads(line) for line in corpus.NEEDS_PATH.read_text().splitlines() if line.strip()]
DOCUMENT = json.loads(BANK)
MEMORIES = {m["id"]: m for m in DOCUMENT["memories"]}


def evidence_text(need) -> str:
    return " ".join(f"{MEMORIES[i]['subject']} {MEMORIES[i]['statement']}" for i in need["required_evidence"])


def test_generator_output_is_byte_identical_to_the_committed_files():
    bank, needs = corpus.render()
    assert bank == BANK, "bank.json differs from make_diagnostic: regenerate deliberately"
    assert needs == corpus.NEEDS_PATH.read_bytes(), "needs.jsonl differs from make_diagnostic"


def test_exactly_400_needs_50_per_family_with_unique_ids():
    assert len(NEEDS) == 400
    assert Counter(n["family"] for n in NEEDS) == {family: 50 for family in FAMILIES}
    assert len({n["id"] for n in NEEDS}) == 400
    assert len(BANK) < 3_000_000


def test_both_splits_cover_every_family_and_lineages_never_cross_splits():
    for split in ("development", "holdout"):
        assert {n["family"] for n in NEEDS if n["split"] == split} == set(FAMILIES)
        answerable = {n["family"] for n in NEEDS if n["split"] == split and n["required_evidence"]}
        assert answerable == set(FAMILIES), split
    splits_of = {}
    for n in NEEDS:
        splits_of.setdefault(n["lineage"], set()).add(n["split"])
    assert all(len(s) == 1 for s in splits_of.values())
    development = {lin for lin, s in splits_of.items() if s == {"development"}}
    holdout = {lin for lin, s in splits_of.items() if s == {"holdout"}}
    assert development and holdout and not development & holdout
    # a lineage is one query template: no query text is shared across splits either
    queries = {}
    for n in NEEDS:
        queries.setdefault(n["query"], set()).add(n["split"])
    assert all(len(s) == 1 for s in queries.values())


def test_every_labelled_id_is_a_memory_of_the_bank_and_labels_are_disjoint():
    for n in NEEDS:
        labelled = n["required_evidence"] + n["distractors"] + n["invalid"]
        assert all(i in MEMORIES for i in labelled), n["id"]
        assert len(set(labelled)) == len(labelled), n["id"]


def test_labels_agree_with_lifecycle_at_the_corpus_clock():
    for n in NEEDS:
        at = datetime.fromisoformat(n["as_of"]) if "as_of" in n else corpus.RECALL_NOW
        for i in n["required_evidence"]:
            m = MEMORIES[i]
            assert datetime.fromisoformat(m["valid_from"]) <= at, n["id"]
            if "as_of" not in n:
                assert m["status"] == "active" and m["expires_at"] is None, n["id"]
            else:
                assert datetime.fromisoformat(m["expires_at"]) > at, n["id"]
        for i in n["invalid"]:
            assert MEMORIES[i]["status"] in ("retracted", "expired") or "as_of" in n, n["id"]


def test_the_corpus_exercises_every_required_condition():
    kinds = Counter(n["kind"] for n in NEEDS)
    for kind in ("paraphrase", "negation", "update-current", "update-historical", "correction", "conflict",
                 "multi-fact", "ambiguity", "unknown", "unknown-retracted", "unknown-expired", "implicit-update"):
        assert kinds[kind] > 0, kind
    statuses = Counter(m["status"] for m in DOCUMENT["memories"])
    assert statuses["retracted"] and statuses["expired"]
    assert any(m["polarity"] == "negated" for m in DOCUMENT["memories"])
    assert any(m["attribution"] != "owner" for m in DOCUMENT["memories"])  # another person's facts
    unknown = [n for n in NEEDS if not n["required_evidence"]]
    assert unknown and all(n["distractors"] or n["invalid"] for n in unknown)
    # old relevant facts, newer distractors
    evidence_times = [MEMORIES[i]["created_at"] for n in NEEDS if n["kind"] == "paraphrase"
                      for i in n["required_evidence"]]
    distractor_times = [MEMORIES[i]["created_at"] for n in NEEDS if n["kind"] == "paraphrase"
                        for i in n["distractors"]]
    assert max(evidence_times) < min(distractor_times)


def _share_no_content_word(n) -> bool:
    return not corpus.content_words(n["query"]) & corpus.content_words(evidence_text(n))


def test_at_least_35_percent_of_needs_share_no_content_word_with_their_evidence():
    # Counted over all 400 needs; a need without evidence never counts as sharing none.
    none_shared = sum(1 for n in NEEDS if n["required_evidence"] and _share_no_content_word(n))
    assert none_shared / len(NEEDS) >= 0.35, none_shared


def test_content_words_drop_stopwords_and_merge_inflections():
    assert corpus.content_words("Where do I keep my passports?") == {"keep", "passport"}
    assert corpus.content_words("The owner's sister lives in Porto.") == corpus.content_words("sister living porto")


def test_the_bank_passes_the_document_validator():
    problems = Problems()
    bank = validate_document(parse_document(BANK, problems), problems)
    assert problems.lines() == []
    assert len(bank.memories) == len(DOCUMENT["memories"])


def test_noise_documents_are_valid_and_sized():
    noise = corpus.noise_document(60)
    assert len(noise["memories"]) == 60
    problems = Problems()
    validate_document(parse_document(json.dumps(noise).encode(), problems), problems)
    assert problems.lines() == []


@pytest.mark.slow
def test_the_bank_imports_through_the_import_service(db):
    counts = memory_bank_import(principal=new_principal(), data=BANK, now=corpus.RECALL_NOW)
    assert counts.memories == len(DOCUMENT["memories"])
    assert counts.events == len(DOCUMENT["events"])
    assert counts.people == len(DOCUMENT["people"])


def test_at_least_35_percent_share_no_lexeme_as_postgresql_sees_it(db):
    """The lexical arm's own view (to_tsvector 'english'): no query lexeme in the evidence."""
    none_shared = 0
    with connection.cursor() as cursor:
        for n in NEEDS:
            if not n["required_evidence"]:
                continue
            cursor.execute("SELECT tsvector_to_array(to_tsvector('english', %s))"
                           " && tsvector_to_array(to_tsvector('english', %s))", [n["query"], evidence_text(n)])
            none_shared += not cursor.fetchone()[0]
    assert none_shared / len(NEEDS) >= 0.35, none_shared


def test_every_need_has_a_task_context_form_that_names_no_answer():
    """recall-diagnostic@2: the query as the current message, the lineage's task, and as
    active entities only people the query itself names. A task may name the topic (an
    address form, a work history) but no value of an answer: no name, number or date of the
    evidence that the query does not already hold."""
    people = {p["id"]: p["name"] for p in DOCUMENT["people"]}

    def values(text: str) -> set[str]:
        words = re.findall(r"[\w'’-]+", text)
        return {w for i, w in enumerate(words) if any(ch.isdigit() for ch in w) or (i and w[0].isupper())}

    for need in NEEDS:
        context = need["context"]
        assert set(context) == {"current_message", "task", "active_entities"}
        assert context["current_message"] == need["query"] and context["task"]
        for entity in context["active_entities"]:
            assert people[entity.removeprefix("person:")] in need["query"]
        answer = values(evidence_text(need)) - set(re.findall(r"[\w'’-]+", need["query"]))
        assert not answer & set(re.findall(r"[\w'’-]+", context["task"])), need["id"]

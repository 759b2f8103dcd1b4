"""The sparse arms' scan evaluates only the tests a request can satisfy, and keeps only the
rows that match an arm; what they return is unchanged."""
from __future__ import annotations

import pytest

from recall.arms import sparse, structured
from tests.recall.helpers import bank  # noqa: F401


@pytest.mark.parametrize("historical", [False, True])
def test_tests_a_request_cannot_satisfy_are_left_out_of_the_statement(historical):
    bare = sparse.sparse_arms(historical, lexical=True, entities=False, anchors=False)
    assert "%(entity_ids)s" not in bare and "%(anchor_types)s" not in bare
    full = sparse.sparse_arms(historical, lexical=True, entities=True, anchors=True)
    assert "%(entity_ids)s" in full and "%(anchor_types)s" in full
    assert "%(tsquery)s" not in sparse.sparse_arms(historical, lexical=False, entities=False, anchors=True)


def test_a_current_recall_finds_matches_through_the_indexed_lookups():
    current = sparse.sparse_arms(False, lexical=True, entities=True, anchors=True)
    assert "recall_document_matches(" in current and "recall_entity_matches(" in current
    assert "strpos(" not in current  # subjects are matched by equality with the query's phrases
    historical = sparse.sparse_arms(True, lexical=True, entities=True, anchors=True)
    assert "recall_document_matches(" not in historical  # revised beliefs have no stored document then


def test_subject_phrases_are_every_run_of_consecutive_words():
    assert structured.subject_phrases(" where does ana live ") == [
        "where", "where does", "where does ana", "where does ana live", "does", "does ana", "does ana live",
        "ana", "ana live", "live",
    ]
    assert structured.subject_phrases(" ") == []


def test_subject_phrases_stop_at_the_longest_possible_subject():
    word = "x" * 99
    phrases = structured.subject_phrases(" " + " ".join([word] * 6) + " ")
    assert max(len(p) for p in phrases) == 4 * 99 + 3 <= structured.SUBJECT_KEY_MAX_CHARS
    assert len(" ".join([word] * 5)) > structured.SUBJECT_KEY_MAX_CHARS


def test_the_scan_keeps_only_rows_that_match_an_arm(bank):
    """Neither a lexical nor a structured match: never a candidate, though permitted."""
    hit = bank.add("Renew the passport in May.", subject="passport", belief_type="fact")
    typed = bank.add("Run every morning.", subject="exercise", belief_type="routine")
    bank.add("Nothing relevant here.", subject="other", belief_type="fact")
    result = bank.recall("passport renewal routine", channel="sparse")
    assert set(result.stages.candidate_ids) == {hit, typed}
    assert result.stages.lexical_ids == (hit,) and set(result.stages.structured_ids) == {hit, typed}


def test_entity_ids_and_anchor_types_still_rank_in_the_structured_arm(bank):
    entity = bank.add("Owns a red bike.", subject="bike", belief_type="fact", entity_ids=["person:ana"])
    anchored = bank.add("Prefers tea.", subject="drinks", belief_type="preference")
    result = bank.recall("what do I prefer", channel="sparse", entity_ids=("person:ana",))
    assert result.stages.structured_ids == (entity, anchored)  # tier 0 (entity) before tier 1 (anchor)


def _lookup(principal, statement: str, params) -> set:
    from django.db import connection

    from veetbot.rls import owner_context

    with owner_context(principal), connection.cursor() as cursor:
        cursor.execute(statement, params)
        return {row[0] for row in cursor.fetchall()}


def test_the_indexed_lookups_return_only_the_calling_owners_ids(bank):
    from tests.recall.helpers import Bank

    other = Bank.new("another owner")
    mine = bank.add("Ana keeps bees on the roof.", subject="bees", entity_ids=["person:ana"])
    theirs = other.add("Ana keeps bees in the garden.", subject="bees", entity_ids=["person:ana"])
    text = "SELECT memory_id FROM recall_document_matches(%s::tsquery, %s::text[])"
    entity = "SELECT memory_id FROM recall_entity_matches(%s::varchar[])"
    assert _lookup(bank.principal, text, ["'bee'", ["bee"]]) == {mine}
    assert _lookup(other.principal, text, ["'bee'", ["bee"]]) == {theirs}
    assert _lookup(bank.principal, entity, [["person:ana"]]) == {mine}
    assert _lookup(other.principal, entity, [["person:ana"]]) == {theirs}


def test_the_indexed_lookups_return_nothing_outside_an_owner_context(bank):
    from django.db import connection

    bank.add("Ana keeps bees on the roof.", subject="bees", entity_ids=["person:ana"])
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM recall_document_matches(%s::tsquery, %s::text[])", ["'bee'", ["bee"]])
        assert cursor.fetchone() == (0,)
        cursor.execute("SELECT count(*) FROM recall_entity_matches(%s::varchar[])", [["person:ana"]])
        assert cursor.fetchone() == (0,)

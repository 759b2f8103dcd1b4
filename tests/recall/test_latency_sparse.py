"""The sparse arms' scan evaluates only the tests a request can satisfy, and keeps only the
rows that match an arm; what they return is unchanged."""
from __future__ import annotations

from recall import sql
from tests.recall.helpers import bank  # noqa: F401


def test_tests_a_request_cannot_satisfy_are_left_out_of_the_statement():
    bare = sql.sparse_arms(False, lexical=True, entities=False, anchors=False)
    assert "%(entity_ids)s" not in bare and "%(anchor_types)s" not in bare
    full = sql.sparse_arms(False, lexical=True, entities=True, anchors=True)
    assert "p.entity_ids && %(entity_ids)s::text[]" in full and "ANY(%(anchor_types)s::text[])" in full
    assert "%(tsquery)s" not in sql.sparse_arms(False, lexical=False, entities=False, anchors=True)


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

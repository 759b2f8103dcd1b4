"""Extractive summaries: whole source statements under a fixed heading, bounded at
RECON_SUMMARY_MAX_CHARS rendered characters (heading and bullets included), clauses that
do not fit omitted whole and listed, conservative inherited metadata, and commit-time
validation that refuses any clause that is not a source statement. Time, conflict and
coherence (supersession, contradictions, one holder per group) are in
test_summaries_time_and_conflict.py."""
from __future__ import annotations

from datetime import timedelta

from reconsolidation import bounds
from reconsolidation.domain import ClauseDraft
from reconsolidation.providers.rules import summaries
from reconsolidation.providers.rules.summaries import (
    HEADING,
    BULLET,
    check_clauses,
    plan,
    projection,
    render,
)
from tests.factories import T0
from tests.reconsolidation.providers.rules.test_equivalence import view

OVERHEAD = len(HEADING) + 2 * (1 + len(BULLET))  # heading, two newlines, two bullets


def sized(n: int, length: int, **overrides):
    prefix = f"Fact {n} "
    return view(n, statement=prefix + "x" * (length - len(prefix)), **overrides)


def test_clauses_are_exact_source_statements_with_their_source_ids():
    a, b, c = view(1, statement="The owner  likes tea."), view(2, statement="The owner likes tea."), \
        view(3, statement="The owner likes coffee.")
    result = plan([c, b, a])
    assert [(clause.text, clause.source_ids) for clause in result.clauses] == [
        ("The owner likes tea.", (a.memory_id, b.memory_id)), ("The owner likes coffee.", (c.memory_id,))]
    assert result.omitted == () and result.text == f"{HEADING}\n- The owner likes tea.\n- The owner likes coffee."


def test_a_summary_exactly_at_the_bound_keeps_every_clause():
    first = (bounds.RECON_SUMMARY_MAX_CHARS - OVERHEAD) // 2
    a, b = sized(1, first), sized(2, bounds.RECON_SUMMARY_MAX_CHARS - OVERHEAD - first)
    result = plan([a, b])
    assert len(result.text) == bounds.RECON_SUMMARY_MAX_CHARS and result.omitted == ()


def test_one_character_past_the_bound_omits_the_clause_whole_and_lists_it():
    first = (bounds.RECON_SUMMARY_MAX_CHARS - OVERHEAD) // 2
    a, b = sized(1, first), sized(2, bounds.RECON_SUMMARY_MAX_CHARS - OVERHEAD - first + 1)
    c = sized(3, 20)
    result = plan([a, b, c])
    assert [clause.source_ids for clause in result.clauses] == [(a.memory_id,), (c.memory_id,)]
    assert result.omitted == (b.memory_id,) and set(result.inputs) == {a.memory_id, b.memory_id, c.memory_id}
    assert len(result.text) <= bounds.RECON_SUMMARY_MAX_CHARS
    assert all(clause.text in {a.statement, c.statement} for clause in result.clauses)  # never cut


def test_exactly_four_related_statements_give_four_clauses_and_omit_nothing():
    views = [view(n, statement=f"The owner visited city {n}.") for n in range(1, bounds.RECON_SUMMARY_MAX_CLAUSES + 1)]
    result = plan(views)
    assert len(result.clauses) == bounds.RECON_SUMMARY_MAX_CLAUSES and result.omitted == ()


def test_at_most_four_clauses_and_the_rest_are_omitted():
    views = [view(n, statement=f"The owner visited city {n}.") for n in range(1, 7)]
    result = plan(views)
    assert len(result.clauses) == bounds.RECON_SUMMARY_MAX_CLAUSES
    assert result.omitted == tuple(v.memory_id for v in views[4:])


def test_a_summary_needs_two_related_non_equivalent_sources_in_one_scope():
    assert plan([view(1), view(2)]) is None  # equivalent: a merge, not a summary
    assert plan([view(1), view(2, statement="Other.", scope="project:x")]) is None  # scopes differ: abstain
    assert plan([view(1, statement="A."), view(2, statement="B.", subject="other")]) is None  # unrelated
    unrelated = summaries.components([view(1, statement="A."), view(2, statement="B.", subject="other")])
    assert len(unrelated) == 2
    shared = summaries.components([view(1, statement="A.", entity_ids=("e1",)),
                                   view(2, statement="B.", subject="other", entity_ids=("e1",))])
    assert len(shared) == 1  # a shared entity relates them
    assert plan([sized(1, 2000), view(2, statement="Short.")]) is None  # only one clause fits


def test_inherited_metadata_is_the_strictest_and_weakest_with_original_clocks():
    a = view(1, sensitivity="public", portable=True, authority="USER", confidence=0.9, evidence_at=T0,
             valid_from=T0, expires_at=T0 + timedelta(days=9))
    b = view(2, statement="Other.", sensitivity="internal", portable=False, authority="EXTRACTED", confidence=0.4,
             evidence_at=T0 + timedelta(days=2), valid_from=T0 + timedelta(days=1), expires_at=None,
             belief_type="preference")
    meta = projection([a, b])
    assert (meta.sensitivity, meta.portable, meta.authority, meta.confidence) == ("internal", False, "EXTRACTED", 0.4)
    assert (meta.evidence_at, meta.valid_from, meta.expires_at) == (T0 + timedelta(days=2), T0 + timedelta(days=1),
                                                                   T0 + timedelta(days=9))
    assert meta.belief_type == summaries.MIXED_BELIEF_TYPES and meta.subject == "rent"


def test_commit_validation_refuses_non_extractive_foreign_repeated_or_oversized_clauses():
    a, b = view(1, statement="The owner likes tea."), view(2, statement="The owner likes coffee.")
    views = {a.memory_id: a, b.memory_id: b}
    good = [ClauseDraft(text=a.statement, source_ids=(a.memory_id,)), ClauseDraft(text=b.statement, source_ids=(b.memory_id,))]
    assert check_clauses(good, views) is None
    assert check_clauses([good[0], ClauseDraft(text="The owner likes drinks.", source_ids=(b.memory_id,))],
                         views) == "summary_not_extractive"
    assert check_clauses([good[0], ClauseDraft(text=b.statement, source_ids=(view(9).memory_id,))],
                         views) == "summary_foreign_source"
    assert check_clauses([good[0], good[0]], views) == "summary_not_distinct"
    assert check_clauses(good[:1], views) == "summary_clause_count"
    assert check_clauses(good, views, max_chars=len(render([a.statement, b.statement])) - 1) == "summary_too_long"

"""Summaries that respect time and conflict (issue 16, item 4): groups are coherent (one
subject, person or entity); clause selection prefers the newest of statements that
supersede each other and never keeps a statement while dropping its update; an unresolved
contradiction yields no summary (``contradictions`` names it for a conflict flag); omitted
inputs stay listed; an unrelated older statement is never treated as superseded."""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from uuid import UUID

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from reconsolidation.domain import ClauseDraft
from reconsolidation.sources import SourceView
from reconsolidation.providers.rules import provider as rules
from reconsolidation.providers.rules import summaries
from reconsolidation.providers.rules.summaries import (
    check_clauses,
    claim,
    contradictions,
    plan,
    supersedes,
)
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.providers.rules.test_equivalence import view
from tests.reconsolidation.work_builders import approve, by_kind, derived_rows, process

DEMO_BANK = Path(__file__).resolve().parents[4] / "evals" / "fixtures" / "demo-bank.json"
THEO, DANA = "person:theo", "person:dana"
DAY = timedelta(days=1)


def at(n: int, statement: str, day: int = 0, **overrides) -> SourceView:
    """View ``n`` stating ``statement``, valid and evidenced ``day`` days after T0."""
    return view(n, statement=statement, valid_from=T0 + day * DAY, evidence_at=T0 + day * DAY, **overrides)


def theo(n: int, statement: str, day: int = 0, **overrides) -> SourceView:
    return at(n, statement, day, **{"subject": "Theo", "entity_ids": (THEO,), **overrides})


def why(new: SourceView, old: SourceView):
    return supersedes(claim([new]), claim([old]))


def texts(result) -> list[str]:
    return [clause.text for clause in result.clauses]


def kept_without_update(result, views) -> list[str]:
    """Clauses superseded by an input the summary omitted (must always be empty); each
    wording is timed by its latest restatement."""
    kept = set(texts(result))
    claims = [claim(members) for members in summaries.statement_classes(views)]
    return [old.views[0].statement for old in claims if old.views[0].statement in kept
            for new in claims if new.views[0].statement not in kept and supersedes(new, old)]


def commit_check(result, views) -> str | None:
    by_id = {v.memory_id: v for v in views}
    return check_clauses(result.clauses, {i: by_id[i] for i in result.inputs})


def _instant(value):
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def demo_views(keep) -> list[SourceView]:
    bank = json.loads(DEMO_BANK.read_text())
    session_of = {event["id"]: event["session"] for event in bank["events"]}
    found = []
    for n, row in enumerate(bank["memories"]):
        if row["status"] != "active" or not keep(row):
            continue
        found.append(SourceView(
            memory_id=UUID(row["id"]), content_revision=1, creation_sequence=n, statement=row["statement"],
            subject=row["subject"], belief_type=row["belief_type"], claim_kind=row["claim_kind"],
            polarity=row["polarity"], derivation=row["derivation"], attribution=row["attribution"], scope=row["scope"],
            portable=row["portable"], authority=row["authority"], sensitivity=row["sensitivity"],
            confidence=row["confidence"], evidence_at=_instant(row["evidence_at"]), valid_from=_instant(row["valid_from"]),
            expires_at=_instant(row["expires_at"]), entity_ids=tuple(row["entity_ids"] or ()),
            session_ids=tuple(sorted({UUID(session_of[source["event"]]) for source in row["sources"]}, key=str))))
    return found


def person_entity(name: str) -> str:
    bank = json.loads(DEMO_BANK.read_text())
    return next(f"person:{p['id']}" for p in bank["people"] if p["name"] == name)


CHEF = "Theo works as a chef in Rotterdam."
MOVING = "Theo is moving to Porto in April 2026."
BOTH = "Theo and Dana both live in Porto."


# --- The Theo case (evals/fixtures/demo-bank.json) --------------------------------------

def test_the_theo_case_keeps_the_move_and_never_the_chef_in_rotterdam_without_it():
    """The owner's statements about Theo: the old planner kept the chef in Rotterdam and
    omitted the move to Porto and 'both live in Porto'."""
    theo_id = person_entity("Theo Castellan")
    views = demo_views(lambda row: theo_id in (row["entity_ids"] or ()) and row["attribution"] == "owner")
    assert {CHEF, MOVING, BOTH} <= {v.statement for v in views}
    result = plan(views)
    assert MOVING in texts(result) and BOTH in texts(result) and CHEF not in texts(result)
    assert kept_without_update(result, views) == []
    chef = next(v for v in views if v.statement == CHEF)
    assert chef.memory_id in result.omitted and chef.memory_id in result.inputs  # omitted, still listed
    assert commit_check(result, views) is None


def test_the_theo_case_through_the_rules_provider_over_the_family_group():
    """Theo and Dana together (one group of the owner's family statements): every summary
    is coherent, none keeps a statement while omitting its update, and every omitted
    input is still an input of the proposal."""
    people = {person_entity("Theo Castellan"), person_entity("Dana Castellan")}
    views = demo_views(lambda row: people & set(row["entity_ids"] or ()) and row["attribution"] == "owner")
    by_id = {v.memory_id: v for v in views}
    found = [p for p in rules.propose(views) if p.kind == "summarize_related"]
    assert found
    for proposal in found:
        inputs = [by_id[ref.memory_id] for ref in proposal.inputs]
        assert summaries.coherent(inputs)
        assert kept_without_update(proposal, inputs) == []
        assert check_clauses(proposal.clauses, {v.memory_id: v for v in inputs}) is None
    theo_summary = next(p for p in found if any("Theo" in c.text for c in p.clauses))
    clause_texts = {clause.text for clause in theo_summary.clauses}
    assert CHEF not in clause_texts or MOVING in clause_texts


# --- Supersession: the newest wins, never an old statement without its update -----------

def test_a_superseded_statement_is_never_kept_without_its_update():
    old, new = theo(1, "Theo lives in Rotterdam.", 0), theo(2, "Theo lives in Porto. " + "x" * 1100, 5)
    cat, dog = theo(3, "Theo has a cat."), theo(4, "Theo has a dog.")
    result = plan([old, new, cat, dog])  # the update is too long to fit beside the others
    assert texts(result) == ["Theo has a cat.", "Theo has a dog."]  # so the old one is dropped too, though it fits
    assert set(result.omitted) == {old.memory_id, new.memory_id}


def test_the_newest_wins_when_only_one_of_a_chain_fits():
    old, new, cat = theo(1, "Theo lives in Rotterdam.", 0), theo(2, "Theo lives in Porto.", 5), theo(3, "Theo has a cat.")
    result = plan([old, new, cat], max_clauses=2)
    assert texts(result) == ["Theo lives in Porto.", "Theo has a cat."]
    assert result.omitted == (old.memory_id,)
    both = plan([old, new, cat])  # room for all: history kept beside its update, in creation order
    assert texts(both) == ["Theo lives in Rotterdam.", "Theo lives in Porto.", "Theo has a cat."]


@pytest.mark.parametrize("old, new, reason", [
    ("Theo works as a chef in Rotterdam.", "Theo is moving to Porto in April 2026.", "move"),
    ("Theo is considering moving away from Rotterdam.", "Theo moved to Porto.", "move"),
    ("Theo is moving to Porto in April 2026.", "Theo lives in Porto.", "settled"),
    ("Theo lives in Rotterdam.", "Theo lives in Porto.", "residence_change"),
    ("Theo wants a gas hob in the new kitchen.", "Theo does not want a gas hob in the new kitchen.", "polarity_change"),
    ("Theo drinks two coffees a day.", "Theo is up to three coffees a day now.", "stated_change"),
    ("Theo eats meat.", "Theo no longer eats meat.", "polarity_change"),
    ("Theo prefers window seats.", "Theo now prefers aisle seats.", "stated_change"),
])
def test_later_updates_of_the_same_attribute_supersede(old, new, reason):
    assert why(theo(2, new, 3), theo(1, old, 0)) == reason
    assert why(theo(1, old, 0), theo(2, new, 3)) is None  # never backwards in time


def test_a_class_restated_after_its_update_is_current_again():
    """Equivalent restatements form one class, timed by its latest member."""
    first, update, again = theo(1, "Theo lives in Rotterdam.", 0), theo(2, "Theo lives in Porto.", 3), \
        theo(3, "Theo lives in Rotterdam.", 6)
    result = plan([first, update, again, theo(4, "Theo has a cat.")], max_clauses=2)
    assert texts(result) == ["Theo lives in Rotterdam.", "Theo has a cat."]
    assert result.clauses[0].source_ids == (first.memory_id, again.memory_id)


# --- Positive twins: what is not superseded ----------------------------------------------

@pytest.mark.parametrize("old, new, overrides", [
    ("Theo is allergic to peanuts.", "Theo moved to Porto.", {}),  # unrelated attribute
    ("Theo is an architect.", "Theo now lives in Lisbon.", {}),  # a change marker on another attribute
    ("Theo lives in Porto.", "Theo and Dana both live in Porto.", {}),  # same place: corroboration
    ("Theo works in Amsterdam.", "Theo lives in Haarlem.", {}),  # work and residence may differ
    ("Theo lives in Rotterdam.", "Theo is considering moving to Porto.", {}),  # a hedge is no move
    ("Theo lives in Rotterdam.", "Theo is not moving to Porto.", {}),  # a negated move
    ("Theo lives in Rotterdam.", "Dana moved to Porto.", {"entity_ids": (DANA,), "subject": "Dana"}),  # someone else
])
def test_an_unrelated_or_other_holders_older_statement_is_not_superseded(old, new, overrides):
    assert why(theo(2, new, 3, **overrides), theo(1, old, 0)) is None


def test_an_unrelated_older_statement_stays_a_clause():
    allergy, move, cat = theo(1, "Theo is allergic to peanuts.", 0), theo(2, "Theo moved to Porto.", 3), \
        theo(3, "Theo has a cat.", 4)
    result = plan([allergy, move, cat], max_clauses=2)
    assert texts(result) == ["Theo is allergic to peanuts.", "Theo moved to Porto."]  # creation order, no eviction


def test_a_calendar_word_is_not_a_destination():
    assert claim([theo(1, "Theo is moving to Porto in April 2026.")]).move_to == frozenset({"porto"})
    assert why(theo(2, "Theo is moving to Porto in April 2026.", 3), theo(1, "Theo lives in Porto in May.")) is None


# --- Contradictions: a conflict to flag, not a summary -----------------------------------

def test_an_unresolved_contradiction_yields_no_summary_and_is_named():
    paris, berlin, cat = theo(1, "Theo lives in Paris."), theo(2, "Theo lives in Berlin."), theo(3, "Theo has a cat.")
    assert contradictions([paris, berlin, cat]) == [((paris, berlin), "place_difference")]
    assert plan([paris, berlin, cat]) is None
    clauses = plan([paris, cat]).clauses  # what a provider might propose over all three
    assert check_clauses(clauses, {v.memory_id: v for v in (paris, berlin, cat)}) == "summary_contradiction"


def test_a_negation_at_the_same_time_is_a_contradiction():
    meat, no_meat = theo(1, "Theo eats meat."), theo(2, "Theo does not eat meat.")
    assert contradictions([meat, no_meat, theo(3, "Theo has a cat.")]) == [((meat, no_meat), "polarity_difference")]
    same_words = [theo(1, "Theo likes jazz."), theo(2, "Theo likes jazz.", polarity="negated"), theo(3, "Theo has a cat.")]
    assert contradictions(same_words) == [(tuple(same_words[:2]), "polarity_difference")]
    assert plan(same_words) is None


def test_a_contradiction_settled_by_a_later_update_is_resolved():
    paris, berlin = theo(1, "Theo lives in Paris."), theo(2, "Theo lives in Berlin.")
    lisbon, cat = theo(3, "Theo now lives in Lisbon.", 4), theo(4, "Theo has a cat.")
    views = [paris, berlin, lisbon, cat]
    assert contradictions(views) == []
    result = plan(views, max_clauses=2)
    assert texts(result) == ["Theo now lives in Lisbon.", "Theo has a cat."]
    assert kept_without_update(plan(views), views) == [] and commit_check(result, views) is None


def test_different_people_in_different_places_are_no_contradiction():
    sister = at(1, "The owner's sister lives in Porto.", subject="family", entity_ids=(DANA,))
    brother = at(2, "The owner's brother lives in Rotterdam.", subject="family", entity_ids=(THEO,))
    assert contradictions([sister, brother]) == []


def test_the_rules_provider_can_flag_what_contradictions_finds():
    """The provider leaves these out of its own ``conflicts`` (the wordings differ); the
    detection is here for its flag_conflict proposal."""
    paris, berlin = theo(1, "Theo lives in Paris."), theo(2, "Theo lives in Berlin.")
    assert not [p for p in rules.propose([paris, berlin, theo(3, "Theo has a cat.")]) if p.kind == "summarize_related"]


# --- Coherence: one subject, person or entity --------------------------------------------

def test_a_mixed_component_is_split_by_person_and_refused_whole():
    named = theo(1, "The owner's brother is named Theo.", subject="brother")
    chef = theo(2, CHEF)
    both = at(3, BOTH, subject="family in Porto", entity_ids=(THEO, DANA))
    architect = at(4, "Dana is an architect.", subject="Dana", entity_ids=(DANA,))
    vegetarian = at(5, "Dana is vegetarian.", subject="Dana", entity_ids=(DANA,))
    views = [named, chef, both, architect, vegetarian]
    groups = summaries.components(views)
    assert groups == [(named, chef, both), (architect, vegetarian)]
    assert all(summaries.coherent(group) for group in groups)
    assert plan(views) is None  # never one summary over two people
    mixed = [ClauseDraft(text=v.statement, source_ids=(v.memory_id,)) for v in (chef, architect)]
    assert check_clauses(mixed, {v.memory_id: v for v in views}) == "summary_unrelated"


def test_a_chain_of_subjects_is_not_one_group():
    a = at(1, "A.", subject="s1", entity_ids=("e1",))
    b = at(2, "B.", subject="s1")
    c = at(3, "C.", subject="s2", entity_ids=("e1",))
    assert summaries.coherent([a, b]) and summaries.coherent([a, c]) and not summaries.coherent([a, b, c])
    assert all(summaries.coherent(group) for group in summaries.components([a, b, c]))


# --- Omitted inputs stay listed; plan and commit check agree ------------------------------

def test_superseded_and_unfitting_inputs_stay_listed_as_proposal_inputs():
    old, new = theo(1, "Theo lives in Rotterdam.", 0), theo(2, "Theo lives in Porto.", 5)
    cat, dog = theo(3, "Theo has a cat."), theo(4, "Theo has a dog.")
    result = plan([old, new, cat, dog], max_clauses=2)
    assert result.inputs == (old.memory_id, new.memory_id, cat.memory_id, dog.memory_id)
    assert result.omitted == (old.memory_id, dog.memory_id)
    proposal = next(p for p in rules.propose([old, new, cat, dog]) if p.kind == "summarize_related")
    assert {ref.memory_id for ref in proposal.inputs} == {old.memory_id, new.memory_id, cat.memory_id, dog.memory_id}


def test_commit_check_refuses_a_statement_kept_without_its_update():
    old, new, cat = theo(1, "Theo lives in Rotterdam.", 0), theo(2, "Theo lives in Porto.", 5), theo(3, "Theo has a cat.")
    stale = [ClauseDraft(text=v.statement, source_ids=(v.memory_id,)) for v in (old, cat)]
    views = {v.memory_id: v for v in (old, new, cat)}
    assert check_clauses(stale, views) == "summary_superseded_kept"
    assert commit_check(plan([old, new, cat], max_clauses=2), [old, new, cat]) is None


POOL = (
    "Theo lives in Rotterdam.", "Theo lives in Porto.", "Theo lives in Lisbon.", "Theo is moving to Porto in April 2026.",
    "Theo moved to Lisbon.", "Theo is considering moving away from Rotterdam.", CHEF, "Theo has a cat.",
    "Theo eats meat.", "Theo does not eat meat.", "Theo no longer eats meat.", "Theo now prefers aisle seats.",
    "Theo prefers window seats.", "Theo is allergic to peanuts.",
)


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(POOL), st.integers(0, 3)), min_size=2, max_size=8),
       st.integers(2, 4))
def test_every_plan_passes_the_commit_check_and_keeps_no_statement_without_its_update(drawn, max_clauses):
    views = [theo(n, statement, day) for n, (statement, day) in enumerate(drawn, start=1)]
    result = plan(views, max_clauses=max_clauses)
    if result is None:
        return
    assert commit_check(result, views) is None
    assert kept_without_update(result, views) == []
    assert set(result.inputs) == {v.memory_id for v in views}
    assert set(result.omitted) == set(result.inputs) - {i for c in result.clauses for i in c.source_ids}


# --- Through the database: the rules provider, the commit check and the projection --------

def test_through_the_database_the_theo_summary_commits_with_its_updates_and_lists_the_old_job(db, enabled, store):
    owner = make_owner()[0]
    said = [("The owner's brother is named Theo.", 0), (CHEF, 0), ("Theo is considering moving away from Rotterdam.", 0),
            (MOVING, 64), ("The owner's brother lives in Porto.", 99), (BOTH, 99)]
    memories = [original(owner, text, subject="Theo", at=T0 + day * DAY) for text, day in said]
    now = T0 + 120 * DAY
    (op,) = by_kind(process(store, owner, memories, now), "summarize_related")
    assert {ref.memory_id for ref in op.inputs} == {m.id for m in memories}  # omitted ones stay inputs
    approve(store, owner, op, now)  # the commit re-runs check_clauses over the locked rows
    (row,) = derived_rows(owner)
    assert [clause["text"] for clause in row.clauses] == [
        "The owner's brother is named Theo.", MOVING, "The owner's brother lives in Porto.", BOTH]


def test_through_the_database_a_contradiction_is_not_summarised(db, enabled, store):
    owner = make_owner()[0]
    memories = [original(owner, text, subject="Theo") for text in
                ("Theo lives in Paris.", "Theo lives in Berlin.", "Theo has a cat.")]
    assert by_kind(process(store, owner, memories, T0 + DAY), "summarize_related") == []

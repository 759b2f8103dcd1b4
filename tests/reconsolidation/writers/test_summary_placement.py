"""One live summary per holder, and only summaries worth the owner's review.

A summary is proposed only where it tells recall more than one search renders (three clauses
or more, from three conversations or more); a holder never has two live summaries: a new fact
revises the pending one, and a fact after a committed one is proposed as its update."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory import services
from reconsolidation.models import DerivedMemory, ReconsolidationOperation
from tests.factories import T0, draft, make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import approve, by_kind, operation_row, process
from veetbot.rls import owner_context

pytestmark = pytest.mark.usefixtures("enabled")


@pytest.fixture
def owner(db):
    return make_owner()[0]


def bram_facts(owner, *statements):
    return [original(owner, statement, subject="Bram") for statement in statements]


def live_summaries(owner):
    with owner_context(owner):
        return list(ReconsolidationOperation.objects.filter(kind="summarize_related",
                                                            state__in=("proposed", "committed")))


def test_two_summaries_are_never_proposed_for_one_holder(owner, store, day_one, production_summary_rules):
    a, b, c, d = bram_facts(owner, "Bram is a four-year-old mixed-breed dog.", "Bram sleeps in the hallway.",
                            "Bram eats twice a day.", "Bram is afraid of thunderstorms.")
    (first,) = by_kind(process(store, owner, [a, b, c], day_one), "summarize_related")
    # Another group over the same holder, sharing one fact: no second live summary appears.
    process(store, owner, [a, c, d], day_one + timedelta(hours=1))
    (live,) = live_summaries(owner)
    assert live.id != first.id and set(live.input_ids) == {a.id, b.id, c.id, d.id}
    assert operation_row(owner, first.id).state == "stale" and operation_row(owner, first.id).reason == "summary_revised"


def test_a_new_related_fact_revises_the_pending_summary_instead_of_adding_a_proposal(
        owner, store, day_one, production_summary_rules):
    a, b, c = bram_facts(owner, "Bram is a four-year-old mixed-breed dog.", "Bram sleeps in the hallway.",
                         "Bram eats twice a day.")
    (pending,) = by_kind(process(store, owner, [a, b, c], day_one), "summarize_related")
    (d,) = bram_facts(owner, "Bram is afraid of thunderstorms.")
    (revised,) = by_kind(process(store, owner, [a, b, d], day_one + timedelta(hours=1)), "summarize_related")
    assert revised.reason == "summary_revision"
    assert {ref.memory_id for ref in revised.inputs} == {a.id, b.id, c.id, d.id}
    assert operation_row(owner, pending.id).state == "stale"
    assert [op.id for op in live_summaries(owner)] == [revised.id]


def test_new_facts_about_the_same_person_under_other_subjects_revise_that_persons_summary(
        owner, store, day_one, production_summary_rules):
    sister = ["person:6f1c2d9e-0b7a-4c35-9f2e-7d8a1b3c4e5f"]
    a, b, c = (original(owner, statement, subject=subject, entity_ids=sister) for statement, subject in (
        ("My sister lives in Porto.", "sister's home"), ("My sister works as a nurse.", "sister's work"),
        ("My sister plays the cello.", "sister's hobbies")))
    (pending,) = by_kind(process(store, owner, [a, b, c], day_one), "summarize_related")
    # Three new facts, none of them an input of the pending summary: only the person is shared.
    d, e, f = (original(owner, statement, subject=subject, entity_ids=sister) for statement, subject in (
        ("My sister is learning Japanese.", "sister's studies"), ("My sister runs on Sundays.", "sister's routine"),
        ("My sister drives a blue van.", "sister's car")))
    (revised,) = by_kind(process(store, owner, [d, e, f], day_one + timedelta(hours=1)), "summarize_related")
    assert revised.reason == "summary_revision"
    assert {ref.memory_id for ref in revised.inputs} == {x.id for x in (a, b, c, d, e, f)}
    assert [op.id for op in live_summaries(owner)] == [revised.id]


def test_a_group_whose_facts_a_live_summary_already_covers_proposes_nothing(owner, store, day_one,
                                                                             production_summary_rules):
    a, b, c = bram_facts(owner, "Bram is a four-year-old mixed-breed dog.", "Bram sleeps in the hallway.",
                         "Bram eats twice a day.")
    (pending,) = by_kind(process(store, owner, [a, b, c], day_one), "summarize_related")
    elsewhere = original(owner, "The owner waters the fern on Sundays.", subject="fern")  # another group, same facts
    assert by_kind(process(store, owner, [b, c, a, elsewhere], day_one + timedelta(hours=1)),
                   "summarize_related") == []
    assert [op.id for op in live_summaries(owner)] == [pending.id]


def test_a_fact_after_a_committed_summary_is_proposed_as_its_update_and_approval_replaces_it(
        owner, store, day_one, production_summary_rules):
    a, b, c = bram_facts(owner, "Bram is a four-year-old mixed-breed dog.", "Bram sleeps in the hallway.",
                         "Bram eats twice a day.")
    (summary,) = by_kind(process(store, owner, [a, b, c], day_one), "summarize_related")
    committed = approve(store, owner, summary, day_one)
    (d,) = bram_facts(owner, "Bram is afraid of thunderstorms.")
    (update,) = by_kind(process(store, owner, [a, b, d], day_one + timedelta(days=1)), "summarize_related")
    assert update.reason == "summary_update" and operation_row(owner, update.id).supersedes == committed.id
    assert operation_row(owner, committed.id).state == "committed"  # in use until the owner approves the update
    approve(store, owner, update, day_one + timedelta(days=1))
    assert operation_row(owner, committed.id).state == "invalidated"
    assert operation_row(owner, committed.id).reason == "superseded_by_update"
    with owner_context(owner):
        active = list(DerivedMemory.objects.filter(status="active"))
    assert [row.operation_id for row in active] == [update.id] and len(active[0].clauses) >= 3


@pytest.mark.parametrize("statements, why", [
    (("Bram is a four-year-old mixed-breed dog.", "Bram sleeps in the hallway."), "two clauses"),
])
def test_a_summary_that_repeats_what_one_search_renders_is_not_proposed(owner, store, day_one,
                                                                         production_summary_rules, statements, why):
    facts = bram_facts(owner, *statements)
    assert by_kind(process(store, owner, facts, day_one), "summarize_related") == [], why


def in_session(owner, session_id, statement: str, subject: str):
    event = services.event_append(principal=owner, session_id=session_id, kind="user.message.created",
                                  speaker="owner", parts=[statement], created_at=T0)
    return services.memory_create(principal=owner, draft=draft(event, statement=statement, subject=subject, at=T0),
                                  now=T0)


def test_a_summary_is_proposed_from_three_conversations_and_not_from_two(owner, store, day_one,
                                                                          production_summary_rules):
    """RECON_SUMMARY_MIN_SESSIONS at its bound: facts of two conversations are what one recall
    already ties together (a hit and its expansion sibling); from three, a summary gathers more."""
    from reconsolidation import bounds

    assert bounds.RECON_SUMMARY_MIN_SESSIONS == 3
    session = services.session_create(principal=owner, started_at=T0)
    one_conversation = [in_session(owner, session.id, statement, "Kofi") for statement in (
        "Kofi climbs on Tuesdays.", "Kofi climbs at the harbour gym.", "Kofi owns red climbing shoes.")]
    assert by_kind(process(store, owner, one_conversation, day_one), "summarize_related") == []
    (second,) = [original(owner, "Kofi met the owner at the harbour gym.", subject="Kofi")]
    two_conversations = [*one_conversation[:2], second]
    assert by_kind(process(store, owner, two_conversations, day_one + timedelta(hours=1)), "summarize_related") == []
    (third,) = [original(owner, "Kofi taught the owner to tie a figure-eight knot.", subject="Kofi")]
    (summary,) = by_kind(process(store, owner, [*two_conversations, third], day_one + timedelta(hours=2)),
                         "summarize_related")
    assert {ref.memory_id for ref in summary.inputs} >= {one_conversation[0].id, second.id, third.id}


def test_two_supports_are_one_summarys_at_the_shared_support_bound_and_not_just_below():
    """RECON_SUMMARY_MAX_SHARED_SUPPORT is a Jaccard index: at it, the second summary would
    ask about much the same facts and is folded into the first; just below, both may live."""
    from uuid import uuid4

    from reconsolidation import bounds
    from reconsolidation.writers.summary_placement import shares_support

    assert bounds.RECON_SUMMARY_MAX_SHARED_SUPPORT == 0.5
    ids = [uuid4() for _ in range(7)]
    at_bound = (frozenset(ids[0:3]), frozenset(ids[1:4]))  # 2 shared of 4: 0.5
    just_below = (frozenset(ids[0:4]), frozenset(ids[2:7]))  # 2 shared of 7: 0.29
    assert shares_support(*at_bound)
    assert not shares_support(*just_below)
    assert not shares_support(frozenset(ids[0:3]), frozenset(ids[3:6]))

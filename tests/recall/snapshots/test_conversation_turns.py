"""Conversation snapshots through the real service against PostgreSQL: the first turn freezes
its assembly as the prefix; later turns repeat the same bytes and add a turn context of new
items and corrections; erasure withholds a prefix that copied erased words and a conversation's
erasure takes its snapshot, turns, reports and traces with it."""
from __future__ import annotations

import pytest

from memory import services as memory_services
from memory.domain import MemoryChanges
from memory.errors import NotFound, StateConflict
from recall.models import CitationReport, ContextSnapshot, ContextTurn, RecallTrace
from recall.render import citation
from recall.snapshots.selectors import snapshot_get
from recall.snapshots.services import TurnLimitReached, citation_report
from tests.recall.helpers import Bank
from tests.recall.snapshots.builders import at, conversation, ids, turn
from veetbot.rls import owner_context

FEE = "The passport renewal fee is 80 euros."


@pytest.fixture
def bank(db) -> Bank:
    return Bank.new("Snapshot owner")


@pytest.fixture
def passport(bank):
    return {
        "fee": bank.add(FEE, subject="passport renewal"),
        "photo": bank.add("The passport renewal needs two photos.", subject="passport renewal"),
        "office": bank.add("The passport renewal office opens at nine.", subject="passport renewal"),
    }


def test_the_first_turn_freezes_its_assembly_and_later_turns_repeat_its_bytes(bank, passport):
    session = conversation(bank)
    first = turn(bank, session, day=2)
    assert first.turn == 1 and first.items == () and first.corrections == ()
    assert set(i.id for i in first.snapshot.items) == set(passport.values())
    assert first.snapshot.prefix == first.assembly.rendered and first.snapshot.prefix.count("[m:") == 3
    added = bank.add("The passport renewal can be booked online.", subject="passport renewal", at=at(3))
    second = turn(bank, session, day=4)
    assert second.turn == 2 and second.snapshot.prefix.encode() == first.snapshot.prefix.encode()
    assert second.snapshot.prefix_sha256 == first.snapshot.prefix_sha256
    assert ids(second) == [added]  # the prefix's items are not repeated in the turn context
    assert second.context.startswith("Memory records") and citation(added) in second.context
    assert snapshot_get(principal=bank.principal, session_id=session).turns == 2


def test_a_later_turn_reports_correction_retraction_and_expiry_in_prefix_order(bank, passport):
    expiring = bank.add("The passport renewal slot is held this week.", subject="passport renewal",
                        expires_at=at(5))
    session = conversation(bank)
    first = turn(bank, session, day=2)
    memory_services.memory_revise(principal=bank.principal, memory_id=passport["fee"],
                                  changes=MemoryChanges(statement="The passport renewal fee is 95 euros."), now=at(3))
    memory_services.memory_reject(principal=bank.principal, memory_id=passport["photo"], now=at(3))
    second = turn(bank, session, day=6)  # the expiry passes without any write
    found = {c.id: c.reason for c in second.corrections}
    assert found == {passport["fee"]: "corrected", passport["photo"]: "retracted", expiring: "expired"}
    order = [i.id for i in first.snapshot.items]
    assert [c.id for c in second.corrections] == [i for i in order if i in found]
    assert all(c.delivered_turn == 1 for c in second.corrections)
    assert "95 euros" in second.context and second.snapshot.prefix == first.snapshot.prefix
    assert FEE in second.snapshot.prefix  # frozen bytes keep what the first turn said


def test_an_item_a_turn_delivered_and_then_erased_is_named_only_by_its_citation(bank, passport):
    session = conversation(bank)
    first = turn(bank, session, day=2)
    secret = bank.add("The passport renewal courier code is 4417.", subject="passport renewal", at=at(3))
    assert ids(turn(bank, session, day=4)) == [secret]
    memory_services.memory_erase(principal=bank.principal, memory_id=secret, now=at(5))
    third = turn(bank, session, day=6)
    assert [(c.id, c.reason, c.delivered_turn) for c in third.corrections] == [(secret, "erased", 2)]
    # The code's words, not its digits alone: "4417" may be four hex digits of a citation's UUID.
    assert "code is 4417" not in third.context and citation(secret) in third.context
    assert third.snapshot.prefix == first.snapshot.prefix  # it was never in the prefix


def test_erasing_an_original_the_prefix_copied_withholds_the_prefix_everywhere(bank, passport):
    session = conversation(bank)
    first = turn(bank, session, day=2)
    assert FEE in first.snapshot.prefix
    memory_services.memory_erase(principal=bank.principal, memory_id=passport["fee"], now=at(3))
    with owner_context(bank.principal):
        row = ContextSnapshot.objects.get(session_id=session)
    assert row.prefix == "" and row.withheld_at is not None  # the copy is gone from the database
    second = turn(bank, session, day=4)
    assert second.snapshot.prefix == "" and second.snapshot.prefix_withheld
    assert second.snapshot.prefix_sha256 == first.snapshot.prefix_sha256  # what was frozen, for audit
    assert [c.reason for c in second.corrections if c.id == passport["fee"]] == ["erased"]
    assert "80 euros" not in second.context


def test_one_snapshot_per_conversation_and_a_new_conversation_snapshots_the_current_state(bank, passport):
    old = conversation(bank)
    turn(bank, old, day=2)
    memory_services.memory_revise(principal=bank.principal, memory_id=passport["fee"],
                                  changes=MemoryChanges(statement="The passport renewal fee is 95 euros."), now=at(3))
    turn(bank, old, day=4)
    with owner_context(bank.principal):
        assert ContextSnapshot.objects.filter(session_id=old).count() == 1
    fresh = turn(bank, conversation(bank, day=4), day=4)
    assert "95 euros" in fresh.snapshot.prefix and FEE not in fresh.snapshot.prefix


def test_erasing_the_conversation_erases_its_snapshot_turns_reports_and_traces(bank, passport):
    session = conversation(bank)
    first = turn(bank, session, day=2)
    citation_report(principal=bank.principal, session_id=session, turn=1, citations=[str(passport["fee"])],
                    idempotency_key="cite-1", now=at(2))
    trace_ids = [s.trace_id for s in first.assembly.searches]
    memory_services.session_erase(principal=bank.principal, session_id=session, now=at(3))
    with owner_context(bank.principal):
        assert not ContextSnapshot.objects.exists() and not ContextTurn.objects.exists()
        assert not CitationReport.objects.exists()
        assert not RecallTrace.objects.filter(id__in=trace_ids).exists()
    with pytest.raises(NotFound):
        turn(bank, session, day=4)


def test_later_turns_keep_the_first_turns_filters(bank, passport):
    session = conversation(bank)
    turn(bank, session, day=2)
    with pytest.raises(StateConflict) as raised:
        turn(bank, session, day=3, filters={"ceiling": "restricted", "belief_types": ("fact",)})
    assert raised.value.problems == ["ceiling: differs_from_snapshot", "belief_types: differs_from_snapshot"]
    turn(bank, session, day=3, filters={"exclude_ids": (passport["fee"],)})  # exclusions may differ


def test_turns_are_bounded_at_the_setting(bank, passport, settings):
    settings.RECALL_SNAPSHOT_MAX_TURNS = 3
    session = conversation(bank)
    for day in (2, 3, 4):
        turn(bank, session, day=day)  # the third turn is at the bound
    with pytest.raises(TurnLimitReached):
        turn(bank, session, day=5)
    with owner_context(bank.principal):
        assert ContextTurn.objects.count() == 3


def test_a_foreign_or_erased_conversation_has_no_turns(bank, passport):
    other = Bank.new("Other owner")
    session = conversation(other)
    with pytest.raises(NotFound):
        turn(bank, session, day=2)
    mine = conversation(bank)
    memory_services.session_erase(principal=bank.principal, session_id=mine, now=at(2))
    with pytest.raises(NotFound):
        turn(bank, mine, day=3)


def test_erasing_the_account_erases_every_snapshot(bank, passport):
    for day in (1, 2):
        turn(bank, conversation(bank, day=day), day=day + 1)
    memory_services.principal_erase(principal=bank.principal, now=at(4))
    with owner_context(bank.principal):
        assert not ContextSnapshot.objects.exists() and not ContextTurn.objects.exists()


def test_the_prefix_stays_within_the_turns_allowance(bank):
    bank.add_many([dict(statement=f"The passport renewal needs form number {n}.", subject="passport renewal")
                   for n in range(30)])
    first = turn(bank, conversation(bank), day=2)
    assert len(first.snapshot.items) == 20 and first.snapshot.prefix_tokens <= 2000
    tight = turn(bank, conversation(bank), day=2, max_items=5, max_tokens=120)
    assert len(tight.snapshot.items) <= 5 and tight.snapshot.prefix_tokens <= 120
    assert first.snapshot.prefix.count("\n[m:") == len(first.snapshot.items)  # one line per frozen item

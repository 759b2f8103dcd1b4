"""Citation reports through the real service against PostgreSQL: a faithful, unambiguous
citation of a still-valid item the turn gave the model raises that item's bounded utility and
last use only; an ambiguous short ID, an unavailable item or a repeat changes nothing; IDs the
turn did not give (another owner's included) are not_found and nothing is written; a report is
idempotent per key and bounded by RECALL_CITATIONS_MAX_PER_REPORT."""
from __future__ import annotations

from uuid import UUID

import pytest

from memory import services as memory_services
from memory.errors import Invalid, MissingReference, NotFound
from memory.models import IdempotencyReceipt, Memory
from memory.services.receipts import KeyReused
from recall.models import CitationReport
from recall.snapshots.services import citation_report
from tests.recall.helpers import Bank
from tests.recall.snapshots.builders import at, conversation, turn
from veetbot.rls import owner_context

# Two originals whose IDs share their first eight characters: a short ID of those is ambiguous.
TWIN_A = UUID("5eed0000-0000-4000-8000-00000000000a")
TWIN_B = UUID("5eed0000-0000-4000-8000-00000000000b")
USAGE = ("utility", "last_used_at", "evidence_at", "expires_at", "content_revision", "store_position", "updated_at")


@pytest.fixture
def bank(db) -> Bank:
    return Bank.new("Citing owner")


@pytest.fixture
def cited(bank):
    """A conversation whose first turn gave the model the two twins and the fee."""
    fee = bank.add("The passport renewal fee is 80 euros.", subject="passport renewal", expires_at=at(90))
    bank.add("The passport renewal needs two photos.", subject="passport renewal", id=TWIN_A)
    bank.add("The passport renewal office opens at nine.", subject="passport renewal", id=TWIN_B)
    with owner_context(bank.principal):
        Memory.objects.update(utility=0.5)  # room to rise
    session = conversation(bank)
    turn(bank, session, day=2)
    return session, fee


def usage(bank, *ids):
    with owner_context(bank.principal):
        rows = Memory.objects.filter(id__in=ids).values("id", *USAGE)
        return {row["id"]: tuple(row[f] for f in USAGE) for row in rows}


def report(bank, session, citations, *, key="k", turn_number=1, day=2):
    return citation_report(principal=bank.principal, session_id=session, turn=turn_number, citations=citations,
                           idempotency_key=key, now=at(day))


def test_a_faithful_citation_raises_only_the_cited_originals_utility_and_last_use(bank, cited, settings):
    session, fee = cited
    before = usage(bank, fee, TWIN_A, TWIN_B)
    view, replayed = report(bank, session, [str(fee)])
    assert not replayed and [(c.outcome, c.id) for c in view.citations] == [("credited", fee)]
    after = usage(bank, fee, TWIN_A, TWIN_B)
    assert after[fee][:2] == (pytest.approx(0.5 + settings.RECALL_CITATION_UTILITY_GAIN), at(2))
    assert after[fee][2:] == before[fee][2:]  # evidence time, expiry, revision, position untouched
    assert after[TWIN_A] == before[TWIN_A] and after[TWIN_B] == before[TWIN_B]


def test_utility_is_bounded_at_one(bank, cited):
    session, fee = cited
    with owner_context(bank.principal):
        Memory.objects.filter(id=fee).update(utility=0.95)
    report(bank, session, [str(fee)])
    assert usage(bank, fee)[fee][0] == 1.0


def test_an_ambiguous_short_id_changes_nothing(bank, cited):
    session, _fee = cited
    before = usage(bank, TWIN_A, TWIN_B)
    view, _ = report(bank, session, ["5eed0000"])
    assert [(c.outcome, c.id) for c in view.citations] == [("ambiguous", None)]
    assert usage(bank, TWIN_A, TWIN_B) == before
    view, _ = report(bank, session, [str(TWIN_A)], key="whole")  # the whole ID names one
    assert [(c.outcome, c.id) for c in view.citations] == [("credited", TWIN_A)]


def test_ids_the_turn_did_not_give_are_not_found_and_nothing_is_written(bank, cited):
    session, fee = cited
    other = Bank.new("Other owner")
    foreign = other.add("The passport renewal fee is 80 euros.", subject="passport renewal")
    own_unseen = bank.add("The owner likes green tea.", subject="tea")
    before = usage(bank, fee)
    with pytest.raises(MissingReference) as raised:
        report(bank, session, [str(fee), str(foreign), str(own_unseen)])
    assert raised.value.problems == ["citations[1]: not_found", "citations[2]: not_found"]
    assert usage(bank, fee) == before
    with owner_context(bank.principal):
        assert not CitationReport.objects.exists() and not IdempotencyReceipt.objects.exists()


def test_an_unknown_turn_or_a_foreign_conversation_is_not_found(bank, cited):
    session, fee = cited
    with pytest.raises(NotFound):
        report(bank, session, [str(fee)], turn_number=2)
    other = Bank.new("Other owner")
    with pytest.raises(NotFound):
        citation_report(principal=other.principal, session_id=session, turn=1, citations=[str(fee)],
                        idempotency_key="k", now=at(2))


def test_a_report_is_idempotent_per_key_and_a_repeat_credits_nothing_more(bank, cited):
    session, fee = cited
    first, _ = report(bank, session, [str(fee)])
    credited = usage(bank, fee)
    again, replayed = report(bank, session, [str(fee).upper()], day=3)  # the same request, normalized
    assert replayed and again == first and usage(bank, fee) == credited
    with pytest.raises(KeyReused):
        report(bank, session, [str(TWIN_A)])
    repeat, _ = report(bank, session, [str(fee), str(fee)], key="second", day=3)
    assert [c.outcome for c in repeat.citations] == ["repeated", "repeated"] and usage(bank, fee) == credited


def test_a_citation_of_an_item_that_no_longer_holds_is_unavailable(bank, cited):
    session, fee = cited
    memory_services.memory_reject(principal=bank.principal, memory_id=fee, now=at(3))
    before = usage(bank, fee)
    view, _ = report(bank, session, [str(fee)], day=3)
    assert [c.outcome for c in view.citations] == ["unavailable"] and usage(bank, fee) == before


def test_citations_per_report_are_bounded_at_the_setting(bank, cited, settings):
    session, fee = cited
    settings.RECALL_CITATIONS_MAX_PER_REPORT = 3
    view, _ = report(bank, session, [str(fee), str(TWIN_A), str(TWIN_B)])  # at the bound
    assert len(view.citations) == 3
    with pytest.raises(Invalid) as raised:
        report(bank, session, [str(fee)] * 4, key="past")
    assert raised.value.problems == ["citations: must hold 1-3 citations"]
    with pytest.raises(Invalid):
        report(bank, session, [], key="none")
    with pytest.raises(Invalid) as raised:
        report(bank, session, ["5eed000", "not-hex!"], key="short")  # under the short-ID minimum, not hex
    assert raised.value.problems == ["citations[0]: invalid", "citations[1]: invalid"]

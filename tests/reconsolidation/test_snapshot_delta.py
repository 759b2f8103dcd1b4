"""Gate 18 (gate.memory.recon_snapshot_delta): frozen sessions see correct invalidation, against
real PostgreSQL with real reconsolidation rows.

A conversation's prefix stays byte-identical while the bank changes under it; the next turns'
corrections report the owner's undo of a merge (through ``operation_undo``), the invalidation
of a summary whose support was corrected, the correction of an original and the erasure of an
item an earlier turn delivered; an erased copy never enters a later turn; citations change the
cited derived item's usage only (its supports' evidence time, expiry and utility, its operation
revision untouched); an ambiguous citation changes nothing.
"""
from __future__ import annotations

from datetime import timedelta
from uuid import UUID

import pytest

from memory import services as memory_services
from memory.domain import MemoryChanges
from memory.models import Memory
from reconsolidation.models import DerivedMemory, ReconsolidationOperation
from reconsolidation.services.derived import derived_delete
from reconsolidation.services.operations import operation_undo
from recall.models import ContextSnapshot
from recall.render import citation
from recall.snapshots.services import citation_report
from tests.factories import T0
from tests.recall.helpers import Bank
from tests.recall.snapshots.builders import conversation, ids, turn
from tests.reconsolidation.helpers import original
from tests.reconsolidation.recall_builders import summary
from tests.reconsolidation.work_builders import merged
from veetbot.rls import owner_context

DAY = timedelta(days=1)
QUESTION = "When is the passport renewal?"
SUPPORT_FIELDS = ("utility", "last_used_at", "evidence_at", "expires_at", "content_revision", "store_position")


@pytest.fixture
def frozen(db, enabled, store):
    """Day 1: a committed merge of two equal originals and a summary over two embassy facts
    anchored on the appointment; day 3: the conversation's first turn freezes them."""
    bank = Bank.new("Frozen owner")
    principal = bank.principal
    twins = [original(principal, "The passport renewal is due in March.", subject="passport renewal",
                      at=T0 + n * timedelta(seconds=1)) for n in range(2)]
    merge = merged(store, principal, twins, T0 + DAY)
    anchor = bank.add("The passport renewal appointment is on Friday.", subject="passport renewal")
    fee = bank.add("The passport renewal fee is 80 euros.", subject="passport renewal")
    embassy = [bank.add("The embassy is closed on Mondays.", subject="embassy"),
               bank.add("The embassy asks for printed photos.", subject="embassy", expires_at=T0 + 90 * DAY)]
    made = summary(principal, [[embassy[0]], [embassy[1]]], omitted=[anchor], now=T0 + DAY)
    # An original whose ID shares the summary's first eight characters: that short ID is ambiguous.
    lookalike = bank.add("The passport renewal form is blue.", subject="passport renewal",
                         id=UUID(str(made.id)[:9] + "0000-4000-8000-000000000001"))
    session = conversation(bank)
    first = turn(bank, session, day=3, message=QUESTION)
    canonical = next(i for i in first.snapshot.items if i.operation_id == merge.id)
    return dict(bank=bank, session=session, first=first, merge=merge, twins=[t.id for t in twins], anchor=anchor,
                fee=fee, embassy=embassy, summary=made.id, canonical=canonical.id, lookalike=lookalike)


def _corrections(view) -> dict:
    return {c.id: c.reason for c in view.corrections}


def test_the_prefix_holds_the_merge_set_once_and_the_summary(frozen):
    prefix = frozen["first"].snapshot
    kinds = {i.id: (i.record_kind, i.operation_id) for i in prefix.items}
    assert kinds[frozen["summary"]] == ("summary", frozen["summary"])
    assert frozen["canonical"] in frozen["twins"] and len(set(frozen["twins"]) & set(kinds)) == 1
    assert {frozen["anchor"], frozen["fee"]} <= set(kinds)


def test_prefix_bytes_stay_while_the_delta_reports_undo_invalidation_correction_and_erasure(frozen, store):
    bank, session, first = frozen["bank"], frozen["session"], frozen["first"]
    principal = bank.principal
    # Between turns 1 and 2: the owner undoes the merge, corrects a summary support and the fee.
    op = frozen["merge"]
    operation_undo(principal=principal, operation_id=op.id, expected_revision=op.revision, idempotency_key="undo",
                   now=T0 + 4 * DAY)
    memory_services.memory_revise(principal=principal, memory_id=frozen["embassy"][0],
                                  changes=MemoryChanges(statement="The embassy is closed on Tuesdays."),
                                  now=T0 + 4 * DAY)
    memory_services.memory_revise(principal=principal, memory_id=frozen["fee"],
                                  changes=MemoryChanges(statement="The passport renewal fee is 95 euros."),
                                  now=T0 + 4 * DAY)
    courier = bank.add("The passport renewal courier code is 4417.", subject="passport renewal", at=T0 + 4 * DAY)
    second = turn(bank, session, day=5, message=QUESTION)
    assert second.snapshot.prefix.encode() == first.snapshot.prefix.encode()
    assert _corrections(second) == {frozen["canonical"]: "undone", frozen["summary"]: "invalidated",
                                    frozen["fee"]: "corrected"}
    # Prefix order: the corrections follow the order of the frozen items.
    order = [i.id for i in first.snapshot.items]
    assert [c.id for c in second.corrections] == sorted(_corrections(second), key=order.index)
    undone = next(n for n in second.notices if citation(frozen["canonical"]) in n and "undid" in n)
    assert "itself still holds" in undone  # a changed grouping, not a false claim about the original
    former = next(t for t in frozen["twins"] if t != frozen["canonical"])
    assert {courier, former} <= set(ids(second))  # the undone duplicate is a separate memory again
    # Between turns 2 and 3: the owner erases what turn 2 delivered.
    memory_services.memory_erase(principal=principal, memory_id=courier, now=T0 + 6 * DAY)
    third = turn(bank, session, day=7, message=QUESTION)
    assert third.snapshot.prefix.encode() == first.snapshot.prefix.encode()
    assert _corrections(third)[courier] == "erased"
    # The code's words, not its digits alone: "4417" may be four hex digits of a citation's UUID.
    assert "code is 4417" not in third.context and courier not in ids(third)
    fourth = turn(bank, session, day=8, message=QUESTION)
    assert "code is 4417" not in fourth.context and "code is 4417" not in fourth.snapshot.prefix


def test_an_erased_derived_copy_leaves_the_prefix_and_never_enters_a_later_turn(frozen):
    bank, session = frozen["bank"], frozen["session"]
    derived_delete(principal=bank.principal, derived_id=frozen["summary"], ceiling="restricted",
                   idempotency_key="delete", request_sha256="0" * 64, now=T0 + 4 * DAY)
    with owner_context(bank.principal):
        assert ContextSnapshot.objects.get(session_id=session).prefix == ""
    later = turn(bank, session, day=5, message=QUESTION)
    assert later.snapshot.prefix_withheld and _corrections(later)[frozen["summary"]] == "erased"
    assert "printed photos" not in later.context and "closed on Mondays" not in later.context


def _support_usage(principal, ids):
    with owner_context(principal):
        return {r["id"]: tuple(r[f] for f in SUPPORT_FIELDS)
                for r in Memory.objects.filter(id__in=ids).values("id", *SUPPORT_FIELDS)}


def _derived(principal, derived_id):
    with owner_context(principal):
        row = DerivedMemory.objects.get(id=derived_id)
        op = ReconsolidationOperation.objects.get(id=row.operation_id)
        return row.utility, row.last_used_at, row.revision, op.revision, row.evidence_at, row.expires_at


def test_a_faithful_summary_citation_changes_derived_usage_only(frozen, settings):
    principal = frozen["bank"].principal
    supports = [frozen["anchor"], *frozen["embassy"]]
    before, derived = _support_usage(principal, supports), _derived(principal, frozen["summary"])
    view, _ = citation_report(principal=principal, session_id=frozen["session"], turn=1,
                              citations=[str(frozen["summary"])], idempotency_key="cite", now=T0 + 3 * DAY)
    assert [(c.outcome, c.record_kind) for c in view.citations] == [("credited", "summary")]
    after = _derived(principal, frozen["summary"])
    assert after[:2] == (pytest.approx(derived[0] + settings.RECALL_CITATION_UTILITY_GAIN), T0 + 3 * DAY)
    assert after[2:] == derived[2:]  # no new revision, operation revision, evidence time or expiry
    assert _support_usage(principal, supports) == before  # the supporting originals are not reinforced


def test_an_ambiguous_citation_changes_nothing(frozen):
    principal = frozen["bank"].principal
    assert {frozen["summary"], frozen["lookalike"]} <= {i.id for i in frozen["first"].snapshot.items}
    originals = [frozen["lookalike"], frozen["anchor"], *frozen["embassy"]]
    before = (_support_usage(principal, originals), _derived(principal, frozen["summary"]))
    view, _ = citation_report(principal=principal, session_id=frozen["session"], turn=1,
                              citations=[str(frozen["summary"])[:8]], idempotency_key="ambiguous", now=T0 + 3 * DAY)
    assert [(c.outcome, c.id) for c in view.citations] == [("ambiguous", None)]
    assert (_support_usage(principal, originals), _derived(principal, frozen["summary"])) == before


def test_erasing_an_original_a_prefix_summary_was_built_from_withholds_the_prefix(frozen):
    bank, session = frozen["bank"], frozen["session"]
    memory_services.memory_erase(principal=bank.principal, memory_id=frozen["embassy"][1], now=T0 + 4 * DAY)
    later = turn(bank, session, day=5, message=QUESTION)
    assert later.snapshot.prefix == "" and later.snapshot.prefix_withheld
    assert _corrections(later)[frozen["summary"]] == "erased"  # the copy went with its source
    assert "printed photos" not in later.context


def test_a_summary_that_expires_without_a_write_or_whose_recall_is_switched_off_is_corrected(frozen, settings):
    bank, session = frozen["bank"], frozen["session"]
    expired = turn(bank, session, day=91, message=QUESTION)  # the summary inherits its support's expiry
    assert _corrections(expired)[frozen["summary"]] == "expired"
    assert expired.snapshot.prefix == frozen["first"].snapshot.prefix
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    switched_off = turn(bank, session, day=4, message=QUESTION)
    assert _corrections(switched_off)[frozen["summary"]] == "withdrawn"
    assert frozen["canonical"] not in _corrections(switched_off)  # the original itself still holds

"""A hypothesis in recall: excluded while pending review (reviewed mode), then — once the owner
approves it — offered only after the originals, labelled as a tentative inferred hypothesis
with its supporting citations, and withheld again when a support changes."""
from __future__ import annotations

from datetime import timedelta

import pytest

from memory.domain import MemoryChanges
from memory.services import memory_revise
from tests.factories import T0, make_owner
from tests.recall.helpers import Bank
from tests.reconsolidation.helpers import original
from tests.reconsolidation.writers.test_hypotheses import Connecting
from tests.reconsolidation.work_builders import claimed_group
from reconsolidation.work.process import process_group
from reconsolidation.services.operations import operation_approve

QUERY = "passport renewal"
AT = T0 + timedelta(days=20)
NOW = AT + timedelta(days=2)
TEXT = "The owner may plan passport errands well ahead."


def connected(store, text):
    """A fresh owner with two passport originals and one pending hypothesis ``text`` over them."""
    bank = Bank(make_owner()[0])
    a = original(bank.principal, "The owner booked the passport renewal appointment early.",
                 subject="passport renewal", at=AT - timedelta(days=1))
    b = original(bank.principal, "The owner gathered the passport renewal documents in advance.",
                 subject="passport renewal", at=AT)
    lease, group = claimed_group(store, bank.principal, [a, b], NOW)
    (op,) = process_group(store, bank.principal, group, now=NOW, provider=Connecting(text))
    store.release(bank.principal, lease.lease_token, now=NOW)
    return bank, a, b, op


@pytest.fixture
def pending(db, enabled, store):
    enabled.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    return connected(store, TEXT)


def kinds(result):
    return [item.record_kind for item in result.items]


def test_a_pending_hypothesis_is_excluded_from_recall_until_the_owner_approves_it(pending, store):
    bank, a, b, op = pending
    before = bank.recall(QUERY, now=NOW)
    assert "hypothesis" not in kinds(before) and op.id not in [i.id for i in before.items]
    assert "Hypothesis" not in before.rendered
    operation_approve(principal=bank.principal, operation_id=op.id, expected_revision=op.revision, idempotency_key="ok-h", now=NOW)
    after = bank.recall(QUERY, now=NOW)
    assert kinds(after) == ["belief", "belief", "hypothesis"]  # remaining slots only
    item = after.items[-1]
    assert (item.id, item.derivation, item.authority, item.confidence) == (op.id, "inferred", "INFERRED", 0.35)
    assert set(item.support_ids) == {a.id, b.id}
    line = after.rendered.splitlines()[-1]
    assert line.startswith(f"[m:{op.id}] Hypothesis (tentative, inferred; not stated by the owner): {TEXT}")
    assert f"[m:{a.id}]" in line and f"[m:{b.id}]" in line


def test_a_hypothesis_never_takes_a_slot_an_original_needed(pending, store):
    bank, a, b, op = pending
    operation_approve(principal=bank.principal, operation_id=op.id, expected_revision=op.revision, idempotency_key="ok-h", now=NOW)
    assert kinds(bank.recall(QUERY, now=NOW, max_items=2)) == ["belief", "belief"]


def test_a_changed_support_withholds_the_hypothesis_at_once(pending, store):
    bank, a, b, op = pending
    operation_approve(principal=bank.principal, operation_id=op.id, expected_revision=op.revision, idempotency_key="ok-h", now=NOW)
    memory_revise(principal=bank.principal, memory_id=a.id, expected_revision=a.content_revision,
                  changes=MemoryChanges(statement="The owner booked the passport renewal appointment late."), now=NOW)
    assert "hypothesis" not in kinds(bank.recall(QUERY, now=NOW))


def test_a_plainly_worded_connection_is_stored_verbatim_and_recalled_as_tentative(db, enabled, store):
    """No hedge word is required: the record (inferred, capped confidence) and the fixed
    rendering heading carry the tentativeness, and the verified wording is kept as is."""
    enabled.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    plain = "The owner plans passport errands well ahead."
    bank, _, _, op = connected(store, plain)
    operation_approve(principal=bank.principal, operation_id=op.id, expected_revision=op.revision, idempotency_key="ok-p", now=NOW)
    item = bank.recall(QUERY, now=NOW).items[-1]
    assert (item.record_kind, item.derivation, item.confidence) == ("hypothesis", "inferred", 0.35)
    assert [c.text for c in item.clauses] == [plain]
    assert f"Hypothesis (tentative, inferred; not stated by the owner): {plain}" in bank.recall(QUERY, now=NOW).rendered

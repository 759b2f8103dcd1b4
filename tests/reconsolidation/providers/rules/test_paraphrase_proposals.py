"""Local paraphrase merges through the real pipeline: the rules provider proposes them with
finite reason codes; reviewed mode keeps them out of recall until the owner approves; the
approval re-checks the guards over the current rows; unattended mode never commits a
similarity-only merge (it stays proposed until the owner approves it)."""
from __future__ import annotations

import pytest

from reconsolidation.work.process import process_group
from reconsolidation.models import ReconsolidationAudit
from reconsolidation.sources import current_sources
from reconsolidation.providers.rules import provider as rules
from reconsolidation.providers.rules import paraphrase
from reconsolidation.writers import apply
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, refs
from tests.reconsolidation.evidence.test_unattended_mode import report
from tests.reconsolidation.work_builders import active_members, approve, by_kind, claimed_group, process
from tests.recall.helpers import Bank
from veetbot.rls import owner_context


@pytest.fixture
def owner(db):
    return make_owner()[0]


def cats(owner):
    return (original(owner, "The owner is allergic to cats.", subject="allergies"),
            original(owner, "The owner has a cat allergy.", subject="allergies"))


def views_of(owner, memories, now):
    with owner_context(owner):
        views, _ = current_sources(owner, refs(*memories), now)
    return list(views.values())


def test_the_rules_provider_proposes_a_paraphrase_merge_with_its_match_code(owner, day_one):
    a, b = cats(owner)
    dog = original(owner, "The owner has a dog allergy.", subject="allergies")
    (merge,) = by_kind(rules.propose(views_of(owner, [a, b, dog], day_one)), "merge_equivalent")
    assert merge.reason == paraphrase.MATCH_WORD_FORMS
    assert {ref.memory_id for ref in merge.inputs} == {a.id, b.id}


def test_reviewed_mode_keeps_a_paraphrase_proposal_out_of_recall_until_the_owner_approves(db, enabled, store,
                                                                                          day_one):
    bank = Bank.new()
    ids = bank.add_many([dict(statement="The owner is allergic to cats.", subject="allergies"),
                         dict(statement="The owner has a cat allergy.", subject="allergies")])
    with owner_context(bank.principal):
        from memory.models import Memory
        memories = list(Memory.objects.filter(id__in=ids).order_by("creation_sequence"))
    (op,) = by_kind(process(store, bank.principal, memories, day_one), "merge_equivalent")
    assert (op.state, op.reason) == ("proposed", paraphrase.MATCH_WORD_FORMS)
    assert active_members(bank.principal) == set()
    shown = {item.id for item in bank.recall("cat allergy").items}
    assert set(ids) <= shown  # both originals, no suppression while pending
    committed = approve(store, bank.principal, op, day_one)
    assert committed.state == "committed"
    assert {m[2] for m in active_members(bank.principal)} == set(ids)
    after = {item.id for item in bank.recall("cat allergy").items}
    assert len(after & set(ids)) == 1  # the member is suppressed behind its canonical


def test_the_commit_rechecks_the_guards_over_the_current_rows(owner, day_one):
    a, b = cats(owner)
    dog = original(owner, "The owner has a dog allergy.", subject="allergies")
    views = {v.memory_id: v for v in views_of(owner, [a, b], day_one)}
    apply.validate(owner, "merge_equivalent", views, (), now=day_one)  # passes
    lookalike = {v.memory_id: v for v in views_of(owner, [a, dog], day_one)}
    with owner_context(owner), pytest.raises(apply.ProposalRefused, match="not_equivalent"):
        apply.validate(owner, "merge_equivalent", lookalike, (), now=day_one)


def test_unattended_mode_never_commits_a_similarity_only_proposal(db, enabled, store, day_one, settings, tmp_path):
    settings.AGENT_MEMORY_RECONSOLIDATION_MODE = "unattended"
    settings.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = report(tmp_path / "r.json")
    owner = make_owner()[0]
    a, b = cats(owner)
    copy = original(owner, "The owner is allergic to cats.", subject="allergies")
    lease, group = claimed_group(store, owner, [a, b, copy], day_one)
    ops = process_group(store, owner, group, now=day_one)
    store.release(owner, lease.lease_token, now=day_one)
    states = {op.reason: op.state for op in by_kind(ops, "merge_equivalent")}
    # The exact copy commits unattended (equivalence key); the paraphrase stays proposed.
    assert states == {"equivalence_key": "committed", paraphrase.MATCH_WORD_FORMS: "proposed"}
    (similar,) = [op for op in ops if op.reason == paraphrase.MATCH_WORD_FORMS]
    assert {m[2] for m in active_members(owner)} == {a.id, copy.id}
    with owner_context(owner):
        assert ReconsolidationAudit.objects.filter(operation_id=similar.id, event="operation_proposed").exists()
    # The owner's approval commits it, superseding the exact set it contains.
    assert approve(store, owner, similar, day_one).state == "committed"
    assert {m[2] for m in active_members(owner)} == {a.id, b.id, copy.id}

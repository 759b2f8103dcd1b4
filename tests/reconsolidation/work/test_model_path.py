"""process_group through a model provider: admission reserves the exact digest, the executor
calls proposal then verification outside any transaction and settles each, apply_review
records verified candidates (pending review) — a refused candidate alone, siblings kept."""
from __future__ import annotations

import pytest

from evals.reconsolidation.responder import HeuristicResponder, propose, verify
from reconsolidation.models import ReconsolidationGroup, ReconsolidationOperation, ReconsolidationSpend
from reconsolidation.work.process import process_group
from tests.factories import make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import active_members, by_kind, claimed_group, derived_rows
from reconsolidation.services.operations import operation_approve
from veetbot.rls import owner_context


@pytest.fixture
def owner(db):
    return make_owner()[0]


@pytest.fixture
def scripted(settings):
    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    return settings


def run(store, owner, memories, now, provider):
    lease, group = claimed_group(store, owner, memories, now)
    ops = process_group(store, owner, group, now=now, provider=provider)
    store.release(owner, lease.lease_token, now=now)
    return ops


def test_a_scripted_provider_yields_pending_merge_summary_and_connection_with_two_settled_calls(owner, enabled, scripted, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers  Celsius.", subject="units")
    c = original(owner, "The owner reads temperatures in the morning.", subject="units")
    responder = HeuristicResponder()
    ops = run(store, owner, [a, b, c], day_one, responder)
    assert responder.requests == 2  # one proposal, one verification
    assert [{r.memory_id for r in op.inputs} for op in by_kind(ops, "merge_equivalent")] == [{a.id, b.id}]
    assert [{r.memory_id for r in op.inputs} for op in by_kind(ops, "summarize_related")] == [{a.id, b.id, c.id}]
    assert [{r.memory_id for r in op.inputs} for op in by_kind(ops, "infer_connection")] == [{a.id, b.id, c.id}]
    assert {op.state for op in ops} == {"proposed"}
    # reviewed mode: no membership and no summary; only the pending hypothesis's projection
    # (its verified wording), which no reader offers before approval
    assert active_members(owner) == set()
    assert [(row.kind, row.id) for row in derived_rows(owner)] == [
        ("hypothesis", by_kind(ops, "infer_connection")[0].id)]
    with owner_context(owner):
        spends = list(ReconsolidationSpend.objects.order_by("reserved_at"))
        # both reserved at the same fixed instant (the scripted calls take 0 ms): order by stage
        assert sorted(s.call_audit["stage"] for s in spends) == ["proposal", "verification"]
        assert {s.state for s in spends} == {"settled"}
        assert "Celsius" not in repr([s.call_audit for s in spends])
        assert ReconsolidationGroup.objects.get().state == "completed"


class OverReaching(HeuristicResponder):
    """Adds a merge over every input of each group (not equivalent) and verifies everything:
    only the local writers can refuse that merge."""

    def answer(self, prepared):
        import json
        from uuid import uuid4

        document = json.loads(prepared.body)
        if prepared.stage == "proposal":
            reply = propose(document)
            for payload in document["untrusted_data"]["groups"]:
                sources = payload["sources"]
                reply["operations"].append({
                    "id": str(uuid4()), "group_id": payload["group_id"], "kind": "merge_equivalent",
                    "inputs": [{"belief_id": s["belief_id"], "content_revision": s["content_revision"]} for s in sources],
                    "clauses": [{"text": sources[0]["statement"], "support": [
                        {"belief_id": s["belief_id"], "excerpt_id": s["excerpt_ids"][0]} for s in sources]}]})
        else:
            reply = verify(document)
            reply["verdicts"] = [{**v, "status": "supported", "reason": "entailed"} for v in reply["verdicts"]]
        return json.dumps(reply).encode()


def test_a_candidate_refused_by_local_rules_leaves_its_verified_siblings_recorded(owner, enabled, scripted, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner reads temperatures in the morning.", subject="units")
    ops = run(store, owner, [a, b], day_one, OverReaching())
    # the non-equivalent merge alone was refused; its verified siblings were recorded
    assert sorted(op.kind for op in ops) == ["infer_connection", "summarize_related"]
    with owner_context(owner):
        assert ReconsolidationGroup.objects.get().state == "completed"


def test_replaying_a_reviewed_batch_cannot_recommit_the_group(owner, enabled, scripted, store, day_one, monkeypatch):
    from reconsolidation.work import apply_review as module, model_path as model_work
    from reconsolidation.errors import LeaseLost

    seen = []

    def recording(*args, **kwargs):
        seen.append((args, kwargs))
        return module.apply_review(*args, **kwargs)

    monkeypatch.setattr(model_work, "apply_review", recording)
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    lease, group = claimed_group(store, owner, [a, b], day_one)
    assert [op.kind for op in process_group(store, owner, group, now=day_one, provider=HeuristicResponder())] == [
        "merge_equivalent"]
    (args, kwargs), = seen
    with pytest.raises(LeaseLost):  # the group is completed: no longer leased to anyone
        module.apply_review(*args, **kwargs)
    with owner_context(owner):
        assert ReconsolidationOperation.objects.count() == 1
        assert ReconsolidationGroup.objects.get().state == "completed"


def test_a_provider_conflict_keeps_versioned_dependencies_and_changes_no_recall(owner, enabled, scripted, store, day_one):
    from reconsolidation.models import DerivedMemory, ReconsolidationDependency, ReconsolidationMember
    from tests.recall.helpers import Bank

    a = original(owner, "The owner drinks coffee in the evening.", subject="coffee")
    b = original(owner, "The owner drinks coffee in the evening.", subject="coffee", polarity="negated")
    bank = Bank(owner)
    plain = bank.recall("coffee evening", now=day_one)
    (op,) = run(store, owner, [a, b], day_one, HeuristicResponder())
    assert op.kind == "flag_conflict" and op.reason == "provider_conflict"
    approved = operation_approve(principal=owner, operation_id=op.id, expected_revision=op.revision, idempotency_key="ok-c", now=day_one)
    assert approved.state == "committed"
    with owner_context(owner):
        deps = set(ReconsolidationDependency.objects.filter(operation_id=op.id)
                   .values_list("memory_id", "content_revision"))
        assert deps == {(a.id, a.content_revision), (b.id, b.content_revision)}
        assert not DerivedMemory.objects.exists() and not ReconsolidationMember.objects.exists()
    after = bank.recall("coffee evening", now=day_one)
    assert after.items == plain.items and after.rendered == plain.rendered  # no winner, no suppression, no item


def no_call_and_no_spend(owner, responder) -> tuple[str, str]:
    """The provider was never asked and nothing was reserved; the group's (state, reason)."""
    assert responder.requests == 0
    with owner_context(owner):
        assert not ReconsolidationSpend.objects.exists()
        row = ReconsolidationGroup.objects.get()
        return row.state, row.reason


def test_admission_rechecks_sources_so_a_change_after_the_claim_stales_the_group_before_any_spend(
        owner, enabled, scripted, store, day_one):
    from memory.domain import MemoryChanges
    from memory.services import memory_revise

    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    c = original(owner, "The owner reads temperatures in the morning.", subject="units")
    responder = HeuristicResponder()
    lease, group = claimed_group(store, owner, [a, b, c], day_one)
    memory_revise(principal=owner, memory_id=c.id, expected_revision=c.content_revision,
                  changes=MemoryChanges(statement="The owner reads temperatures at noon."), now=day_one)
    assert process_group(store, owner, group, now=day_one, provider=responder) == ()
    assert no_call_and_no_spend(owner, responder) == ("stale", "source_changed")


def test_a_request_above_the_slice_budget_is_deferred_without_a_reservation(owner, enabled, scripted, store, day_one):
    from decimal import Decimal

    from reconsolidation.providers.scripted import scripted_config

    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    responder = HeuristicResponder()
    responder.config = scripted_config(model="heuristic-responder@2", input_usd_per_mtok=Decimal("100000"),
                                       output_usd_per_mtok=Decimal("100000"))
    assert run(store, owner, [a, b], day_one, responder) == ()
    assert no_call_and_no_spend(owner, responder) == ("pending", "above_slice_ceiling")


def test_the_kill_switch_turned_off_after_the_claim_defers_the_group_at_admission_without_a_reservation(
        owner, enabled, scripted, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    responder = HeuristicResponder()
    lease, group = claimed_group(store, owner, [a, b], day_one)
    enabled.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False  # withdrawn between the claim and the admission
    assert process_group(store, owner, group, now=day_one, provider=responder) == ()
    assert no_call_and_no_spend(owner, responder) == ("pending", "disabled")


def test_the_same_prepared_request_is_never_reserved_twice_in_a_slice(owner, enabled, scripted, store, day_one):
    from uuid import uuid4

    from reconsolidation.work.admission import (
        Admission,
        NotAdmitted,
        ReconsolidationRequestAdmission,
    )

    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    lease, group = claimed_group(store, owner, [a, b], day_one)
    # a still clock: the second preparation is byte for byte the first (same batch, same instant)
    admission = ReconsolidationRequestAdmission(store, owner, HeuristicResponder().config, monotonic=lambda: 0.0)
    batch_id = uuid4()
    first = admission.admit_proposal([group], batch_id=batch_id, now=day_one)
    second = admission.admit_proposal([group], batch_id=batch_id, now=day_one)
    assert isinstance(first, Admission)
    assert second == NotAdmitted("duplicate_reservation") and second.transient
    with owner_context(owner):
        assert ReconsolidationSpend.objects.count() == 1

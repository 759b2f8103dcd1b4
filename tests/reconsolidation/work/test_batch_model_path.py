"""The model path as one batch per slice (``model_path.process_batch``), with the scripted
heuristic responder: a group refused before serialization drops out while its siblings go
on; a candidate-local failure rejects only that candidate; a structure error refuses the
batch; a crash anywhere between admission and completion never pays twice, commits twice
or misreports the outcome; an overlapping merge is replanned as the union."""
from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from uuid import UUID, uuid4, uuid5

import pytest

from evals.reconsolidation.responder import MODEL, HeuristicResponder, _inputs, _support
from memory import services
from memory.domain import MemoryChanges, SourceRef
from memory.models import SpendDay
from memory.services import memory_revise
from reconsolidation import bounds, driver
from reconsolidation.domain import input_digest
from reconsolidation.inventory.coverage import coverage
from reconsolidation.models import (
    ReconsolidationAudit,
    ReconsolidationGroup,
    ReconsolidationJob,
    ReconsolidationOperation,
    ReconsolidationSpend,
)
from reconsolidation.providers.envelopes import PROPOSAL_SCHEMA
from reconsolidation.providers.scripted import scripted_config
from reconsolidation.store import ReconsolidationStore
from reconsolidation.work.model_path import process_batch
from tests.factories import T0, draft, make_owner
from tests.reconsolidation.helpers import original, refs
from tests.reconsolidation.evidence.test_unattended_mode import report
from tests.reconsolidation.work_builders import approve, by_kind, merged
from veetbot.rls import owner_context

LEASE = timedelta(seconds=bounds.RECON_LEASE_SECONDS)


@pytest.fixture
def owner(db, settings):
    """A fresh owner, with the scripted responder allowed (tests only)."""
    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    return make_owner()[0]


class Seen(HeuristicResponder):
    """The heuristic responder, keeping every request document it answered."""

    def __init__(self) -> None:
        self.documents: list[dict] = []
        super().__init__(observe=lambda text: self.documents.append(json.loads(text)))

    def groups_offered(self, stage: str = "proposal") -> list[set[UUID]]:
        key = "groups" if stage == "proposal" else "evidence"
        return [{UUID(g["group_id"]) for g in d["untrusted_data"][key]} for d in self.documents if d["stage"] == stage]


class Edited(Seen):
    """Answers like the heuristic responder, then lets ``edit(stage, reply)`` change the reply."""

    def __init__(self, edit) -> None:
        super().__init__()
        self.edit = edit

    def answer(self, prepared) -> bytes:
        reply = json.loads(super().answer(prepared))
        return json.dumps(self.edit(prepared.stage, reply)).encode()


def priced() -> HeuristicResponder:
    """The heuristic responder at explicit prices, so every settlement moves real money."""
    responder = HeuristicResponder()
    responder.config = scripted_config(model=MODEL, input_usd_per_mtok=Decimal("2.5"),
                                       output_usd_per_mtok=Decimal("10"))
    return responder


def claimed_batch(store, principal, groups, now):
    """Queue one group over each list of originals and claim them all under one slice lease;
    the claims in the order of ``groups``."""
    lease = store.claim_due(principal, lease_owner="batch", now=now)
    for memories in groups:
        store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(*memories),
                          input_digest=input_digest(refs(*memories)), now=now)
    claimed = {frozenset(ref.memory_id for ref in group_lease.inputs): group_lease
               for group_lease in (store.claim_group(principal, lease_token=lease.lease_token, now=now) for _ in groups)}
    return lease, [claimed[frozenset(m.id for m in memories)] for memories in groups]


def outcome(principal, group_lease):
    with owner_context(principal):
        row = ReconsolidationGroup.objects.get(id=group_lease.group_id)
        return row.state, row.reason


def spends(principal):
    with owner_context(principal):
        return list(ReconsolidationSpend.objects.order_by("reserved_at", "id"))


def equal_pair(principal, statement, subject):
    return [original(principal, statement, subject=subject), original(principal, statement, subject=subject)]


def test_one_batch_sends_one_proposal_for_every_group_and_one_verification(owner, enabled, store, day_one):
    groups = [equal_pair(owner, "The owner prefers Celsius.", "units"),
              equal_pair(owner, "Cycling starts before eight.", "commute"),
              equal_pair(owner, "Lentil soup is the usual lunch.", "lunch")]
    lease, claimed = claimed_batch(store, owner, groups, day_one)
    responder = Seen()
    ops = process_batch(store, owner, claimed, responder, now=day_one)
    assert responder.requests == 2
    assert responder.groups_offered() == [{g.group_id for g in claimed}]
    assert len(by_kind(ops, "merge_equivalent")) == 3
    assert {outcome(owner, g) for g in claimed} == {("completed", "")}
    (proposal, verification) = spends(owner)
    assert proposal.call_audit["batch_id"] == verification.call_audit["batch_id"]
    assert {UUID(i) for i in proposal.call_audit["group_ids"]} == {g.group_id for g in claimed}


def oversized_evidence(principal):
    message = "The owner prefers Celsius. " + "x" * 2100  # one excerpt over RECON_EXCERPT_MAX_BYTES
    return [original(principal, "The owner prefers Celsius.", subject="units", message=message),
            original(principal, "The owner prefers Celsius.", subject="units", message=message + "y")]


def revised_after_the_claim(principal, memories):
    memory_revise(principal=principal, memory_id=memories[0].id, expected_revision=memories[0].content_revision,
                  changes=MemoryChanges(statement="The owner prefers Fahrenheit."), now=memories[0].created_at)


@pytest.mark.parametrize("refusal, expected", [
    ("oversized_evidence", ("no_change", "excerpt_too_large")),  # refused by the request builder
    ("revised_after_the_claim", ("stale", "sources_changed")),  # refused before admission
])
def test_a_group_refused_before_serialization_drops_out_while_its_siblings_go_on(
        owner, enabled, store, day_one, refusal, expected):
    refused = oversized_evidence(owner) if refusal == "oversized_evidence" else equal_pair(owner, "Tea at four.", "tea")
    sibling = equal_pair(owner, "Cycling starts before eight.", "commute")
    lease, (dropped, kept) = claimed_batch(store, owner, [refused, sibling], day_one)
    if refusal == "revised_after_the_claim":
        revised_after_the_claim(owner, refused)
    responder = Seen()
    ops = process_batch(store, owner, [dropped, kept], responder, now=day_one)
    assert outcome(owner, dropped) == expected
    assert outcome(owner, kept) == ("completed", "")
    assert [{r.memory_id for r in op.inputs} for op in ops] == [{m.id for m in sibling}]
    assert responder.requests == 2 and responder.groups_offered() == [{kept.group_id}]
    with owner_context(owner):
        prepared = ReconsolidationAudit.objects.get(event="batch_proposal_prepared")
    assert prepared.counts == {"groups": 1, "groups_dropped": 1 if refusal == "oversized_evidence" else 0}
    assert all([UUID(i) for i in s.call_audit["group_ids"]] == [kept.group_id] for s in spends(owner))


def test_a_group_whose_own_source_changed_is_stale_at_admission_before_any_reservation(
        owner, enabled, store, day_one):
    """Two of its three sources are still valid, so only the fence catches it: admission
    drops it (source_changed) before the request is built or reserved; the sibling goes on."""
    touched = [*equal_pair(owner, "Tea at four.", "tea"), original(owner, "Tea at four.", subject="tea")]
    sibling = equal_pair(owner, "Cycling starts before eight.", "commute")
    lease, (dropped, kept) = claimed_batch(store, owner, [touched, sibling], day_one)
    revised_after_the_claim(owner, touched[2:])
    responder = Seen()
    process_batch(store, owner, [dropped, kept], responder, now=day_one)
    assert outcome(owner, dropped) == ("stale", "source_changed")
    assert outcome(owner, kept) == ("completed", "")
    assert responder.groups_offered() == [{kept.group_id}]
    assert all([UUID(i) for i in s.call_audit["group_ids"]] == [kept.group_id] for s in spends(owner))


def test_a_candidate_local_failure_rejects_only_that_candidate(owner, enabled, store, day_one):
    first = equal_pair(owner, "The owner prefers Celsius.", "units")
    second = equal_pair(owner, "Cycling starts before eight.", "commute")
    lease, claimed = claimed_batch(store, owner, [first, second], day_one)
    bogus = uuid4()

    def unknown_excerpt(stage, reply):  # a second merge over the first group citing an invented excerpt
        if stage == "proposal":
            merge = next(op for op in reply["operations"] if op["group_id"] == str(claimed[0].group_id))
            forged = json.loads(json.dumps(merge))
            forged["id"], forged["kind"] = str(bogus), "summarize_related"
            forged["clauses"][0]["support"][0]["excerpt_id"] = str(uuid4())
            reply["operations"].append(forged)
        return reply

    responder = Edited(unknown_excerpt)
    ops = process_batch(store, owner, claimed, responder, now=day_one)
    assert responder.requests == 2
    verified = {claim["operation_id"] for claim in responder.documents[1]["untrusted_data"]["claims"]}
    assert str(bogus) not in verified and len(verified) == 2  # never sent for verification
    assert sorted(op.kind for op in ops) == ["merge_equivalent", "merge_equivalent"]
    assert {outcome(owner, g) for g in claimed} == {("completed", "")}


def test_a_structure_error_refuses_the_whole_batch(owner, enabled, store, day_one):
    groups = [equal_pair(owner, "The owner prefers Celsius.", "units"),
              equal_pair(owner, "Cycling starts before eight.", "commute")]
    lease, claimed = claimed_batch(store, owner, groups, day_one)

    def duplicate_operation(stage, reply):
        if stage == "proposal":
            reply["operations"].append(dict(reply["operations"][0]))
        return reply

    responder = Edited(duplicate_operation)
    assert process_batch(store, owner, claimed, responder, now=day_one) == ()
    assert responder.requests == 1  # no verification of a refused proposal
    with owner_context(owner):
        assert not ReconsolidationOperation.objects.exists()
        rows = list(ReconsolidationGroup.objects.all())
    assert {(row.state, row.reason, row.retry_count) for row in rows} == {("pending", "duplicate_operation", 1)}
    (spend,) = spends(owner)
    assert spend.state == "settled"  # the transport completed; the reply is what was refused


class Crash(Exception):
    """The worker dies here: nothing after this point runs."""


class CrashingStore(ReconsolidationStore):
    """A real store whose worker dies once at ``point``: before the proposal's or the
    verification's settlement, or between a group's writes and its completion."""

    def __init__(self, point: str, clock) -> None:
        super().__init__(clock=clock)
        self.point, self.settled, self.crashed = point, 0, False

    def _maybe(self, point: str) -> None:
        if point == self.point and not self.crashed:
            self.crashed = True
            raise Crash(point)

    def settle(self, *args, **kwargs):
        self.settled += 1
        self._maybe(("proposal_settlement", "verification_settlement")[min(self.settled, 2) - 1])
        return super().settle(*args, **kwargs)

    def finish_group(self, principal, group_lease, *, outcome, reason="", now=None):
        if outcome == "completed":
            self._maybe("completion")
        return super().finish_group(principal, group_lease, outcome=outcome, reason=reason, now=now)


@pytest.mark.parametrize("point", ["proposal_settlement", "verification_settlement", "completion"])
def test_a_crash_between_admission_and_completion_never_pays_twice_commits_twice_or_misreports(
        owner, enabled, day_one, point):
    # related, not equal: model work (a summary and a connection each), not the equivalence pass
    memories = [original(owner, "The owner prefers Celsius.", subject="units"),
                original(owner, "Thermometers get read every morning.", subject="units"),
                original(owner, "Cycling starts before eight.", subject="commute"),
                original(owner, "The bike route follows the river.", subject="commute")]
    crashing = CrashingStore(point, clock=lambda: day_one)
    with pytest.raises(Crash):
        driver.run_slice(owner, lease_owner="dies", store=crashing, now=day_one, provider=priced())
    with owner_context(owner):
        assert not ReconsolidationOperation.objects.exists()  # nothing of the crashed attempt committed
        assert set(ReconsolidationGroup.objects.values_list("state", flat=True)) == {"leased"}
        assert not ReconsolidationAudit.objects.filter(event="group_completed").exists()
        crashed_spend = {s.id: (s.state, s.charged_usd) for s in ReconsolidationSpend.objects.all()}

    later = day_one + LEASE + timedelta(seconds=1)  # the dead slice's lease has expired
    run = driver.run_slice(owner, lease_owner="next", store=ReconsolidationStore(clock=lambda: later), now=later,
                           provider=priced())
    assert run.groups_processed == 2
    with owner_context(owner):
        ops = list(ReconsolidationOperation.objects.all())
        groups = list(ReconsolidationGroup.objects.all())
        completed = ReconsolidationAudit.objects.filter(event="group_completed").count()
        rows = list(ReconsolidationSpend.objects.all())
        ledger = SpendDay.objects.get(purpose="dreaming")
    # each operation committed exactly once; each group completed once, after one recorded failure
    assert sorted((op.kind, sorted(map(str, op.input_ids))) for op in ops) == sorted(
        (kind, sorted(str(m.id) for m in memories[i:i + 2])) for i in (0, 2)
        for kind in ("infer_connection", "summarize_related"))
    assert {(g.state, g.retry_count) for g in groups} == {("completed", 1)} and completed == 2
    # the crashed attempt's reservations: a settled one kept its bill; an unsettled one was
    # recovered as unknown at its full charge, never released for the retry
    for row in rows:
        if row.id in crashed_spend:
            expected = crashed_spend[row.id] if crashed_spend[row.id][0] == "settled" else ("unknown", row.maximum_usd)
            assert (row.state, row.charged_usd) == expected and row.charged_usd > 0
        else:
            assert row.state == "settled" and 0 < row.charged_usd < row.maximum_usd
    assert len(rows) == len(crashed_spend) + 2  # the retry paid through its own two reservations
    assert ledger.charged_usd == sum((row.charged_usd for row in rows), Decimal(0))


def test_an_overlapping_merge_on_the_model_path_is_replanned_as_the_union(owner, enabled, store, day_one):
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    c = original(owner, "The owner prefers Celsius.", subject="units")
    merged(store, owner, [a, b], day_one)  # {a, b} is an active merge set
    later = day_one + timedelta(minutes=1)
    lease, claimed = claimed_batch(store, owner, [[b, c]], later)
    assert process_batch(store, owner, claimed, HeuristicResponder(), now=later) == ()  # {b, c} overlaps {a, b}
    assert outcome(owner, claimed[0]) == ("no_change", "proposals_refused")
    with owner_context(owner):
        union = ReconsolidationGroup.objects.get(state="pending")
    assert set(union.input_ids) == {a.id, b.id, c.id}

    replanned = store.claim_group(owner, lease_token=lease.lease_token, now=later)
    (op,) = process_batch(store, owner, [replanned], HeuristicResponder(), now=later)
    assert op.kind == "merge_equivalent" and {r.memory_id for r in op.inputs} == {a.id, b.id, c.id}
    assert approve(store, owner, op, later).state == "committed"  # supersedes {a, b}


def test_a_stage_decision_is_closed_bounded_and_needs_the_live_lease(owner, enabled, store, day_one):
    from reconsolidation.errors import Invalid, LeaseLost

    original(owner, "The owner prefers Celsius.", subject="units")  # an owner with no original has no job
    lease = store.claim_due(owner, lease_owner="batch", now=day_one)
    decide = dict(lease_token=lease.lease_token, stage="proposal", decision="prepared", now=day_one)
    store.stage_decision(owner, **decide, counts={"groups": bounds.RECON_SLICE_MAX_GROUPS})
    for wrong in ({"stage": "answer"}, {"decision": "approved"}, {"reason": "Not a code"},
                  {"counts": {"groups": bounds.RECON_SLICE_MAX_GROUPS + 1}}, {"counts": {"text": 1}}):
        with pytest.raises(Invalid):
            store.stage_decision(owner, **{**decide, **wrong})
    store.release(owner, lease.lease_token, now=day_one)
    with pytest.raises(LeaseLost):
        store.stage_decision(owner, **decide)
    with owner_context(owner):
        (row,) = ReconsolidationAudit.objects.filter(event__startswith="batch_")
    assert (row.event, row.job_id, row.counts) == ("batch_proposal_prepared", lease.job_id,
                                                   {"groups": bounds.RECON_SLICE_MAX_GROUPS})


def test_the_kill_switch_before_a_group_commits_rolls_back_its_earlier_writes(owner, enabled, day_one):
    switched = []

    class SwitchingOff(ReconsolidationStore):
        """Processing is switched off right after the group's first write."""

        def record(self, *args, **kwargs):
            view = super().record(*args, **kwargs)
            enabled.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
            switched.append(view.id)
            return view

    store = SwitchingOff(clock=lambda: day_one)
    lease, claimed = claimed_batch(store, owner, [[
        original(owner, "The owner prefers Celsius.", subject="units"),
        original(owner, "Thermometers get read every morning.", subject="units")]], day_one)
    assert process_batch(store, owner, claimed, HeuristicResponder(), now=day_one) == ()
    assert switched  # a write happened inside the group's transaction, then admission was withdrawn
    with owner_context(owner):
        assert not ReconsolidationOperation.objects.exists()  # rolled back with the group's other writes
        assert not ReconsolidationAudit.objects.filter(event="group_completed").exists()
    assert outcome(owner, claimed[0]) == ("pending", "disabled")
    assert {s.state for s in spends(owner)} == {"settled"}  # settlement is not withdrawn by the switch


class ParaphraseModel(HeuristicResponder):
    """A model that proposes merging each group's originals as one statement (the first's
    words), and a verifier that says ``entailed`` or not."""

    def __init__(self, entailed: bool) -> None:
        super().__init__()
        self.entailed = entailed

    def answer(self, prepared) -> bytes:
        document = json.loads(prepared.body.decode("utf-8"))
        if prepared.stage == "proposal":
            batch, groups = document["batch_id"], document["untrusted_data"]["groups"]
            operations = [{"id": str(uuid5(UUID(batch), g["group_id"])), "group_id": g["group_id"],
                           "kind": "merge_equivalent", "inputs": _inputs(g["sources"]),
                           "clauses": [{"text": g["sources"][0]["statement"],
                                        "support": [_support(s) for s in g["sources"]]}]} for g in groups]
            return json.dumps({"schema_version": PROPOSAL_SCHEMA, "batch_id": batch,
                               "group_ids": [g["group_id"] for g in groups], "operations": operations}).encode()
        reply = json.loads(super().answer(prepared))
        for verdict in reply["verdicts"]:
            verdict.update(status="supported", reason="entailed") if self.entailed else verdict.update(
                status="uncertain", reason="insufficient_evidence")
        return json.dumps(reply).encode()


@pytest.mark.parametrize("entailed", [True, False])
def test_unattended_commits_a_paraphrase_merge_only_when_the_model_verifier_says_entailed(
        owner, enabled, store, day_one, settings, tmp_path, entailed):
    """The positive twin of the rules path's similarity-only merge (which never commits
    unattended): the same paraphrase pair, passing the local guards, commits unattended only
    with a model verifier's ``entailed``; a look-alike pair never does, whatever it says."""
    settings.AGENT_MEMORY_RECONSOLIDATION_MODE = "unattended"
    settings.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = report(tmp_path / "r.json")
    a = original(owner, "The owner is allergic to cats.", subject="allergies")
    b = original(owner, "The owner has a cat allergy.", subject="allergies")
    lease, claimed = claimed_batch(store, owner, [[a, b]], day_one)
    ops = process_batch(store, owner, claimed, ParaphraseModel(entailed), now=day_one)
    committed = [op for op in ops if op.kind == "merge_equivalent" and op.state == "committed"]
    if entailed:
        (op,) = committed
        assert {r.memory_id for r in op.inputs} == {a.id, b.id}
    else:
        assert committed == []
    dog = original(owner, "The owner has a dog allergy.", subject="allergies")
    later = day_one + timedelta(minutes=1)
    store.release(owner, lease.lease_token, now=day_one)
    _, look_alike = claimed_batch(store, owner, [[a, dog]], later)
    assert [op for op in process_batch(store, owner, look_alike, ParaphraseModel(True), now=later)
            if op.kind == "merge_equivalent"] == []


def also_citing_the_assistant(principal, statement, subject, at):
    """An original citing the owner's message and the assistant's reply: the owner's evidence
    makes it eligible, the assistant's part may never be sent."""
    session = services.session_create(principal=principal, started_at=T0)
    said = [services.event_append(principal=principal, session_id=session.id, kind=kind, speaker=speaker,
                                  parts=[text], created_at=T0)
            for kind, speaker, text in (("user.message.created", "owner", "I prefer Celsius."),
                                        ("assistant.message.created", "assistant", "Noted: Celsius."))]
    return services.memory_create(principal=principal, now=T0, draft=draft(
        said[0], statement=statement, subject=subject,
        sources=tuple(SourceRef(event=e.id, part=e.parts[0].id) for e in said)))


def test_a_group_with_one_inadmissible_member_reaches_the_model_without_that_member(owner, enabled, store, day_one):
    """One member's evidence is the assistant's message: that member is left out (recorded,
    content free) and the two owner members still reach the model, merged; the job's model
    reach counts the group as sent."""
    pair = equal_pair(owner, "The owner prefers Celsius.", "units")
    said_by_assistant = also_citing_the_assistant(owner, "The owner prefers Celsius.", "units", day_one)
    lease, (claimed,) = claimed_batch(store, owner, [[*pair, said_by_assistant]], day_one)
    responder = Seen()
    ops = process_batch(store, owner, [claimed], responder, now=day_one)
    assert responder.groups_offered() == [{claimed.group_id}]
    sent = {source["belief_id"] for group in responder.documents[0]["untrusted_data"]["groups"]
            for source in group["sources"]}
    assert sent == {str(m.id) for m in pair}
    assert [{r.memory_id for r in op.inputs} for op in by_kind(ops, "merge_equivalent")] == [{m.id for m in pair}]
    with owner_context(owner):
        (left,) = ReconsolidationAudit.objects.filter(event="member_left_out")
        prepared = ReconsolidationAudit.objects.get(event="batch_proposal_prepared")
    assert (left.group_id, left.reason, left.counts) == (claimed.group_id, "evidence_not_admissible", {"members": 1})
    assert prepared.counts["members_left_out"] == 1
    store.release(owner, lease.lease_token, now=day_one)
    with owner_context(owner):
        cover = coverage(owner, ReconsolidationJob.objects.get(id=lease.job_id))
    assert (cover.groups_formed, cover.groups_sent, cover.model_reach) == (1, 1, 1.0)

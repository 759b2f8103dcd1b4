"""Two calls a slice, counted on the wire: four groups queued by the inventory, one slice of
the real driver with the ``openai`` provider against a real OpenAI-compatible server on
127.0.0.1. Whatever the server replies, the slice sends at most two chat requests — one
proposal carrying all four groups and one verification for the surviving candidates — with
one reservation per request naming every offered group, and every group ends the slice
with a durable outcome."""
from __future__ import annotations

import json
import uuid

import pytest

from reconsolidation import bounds
from reconsolidation.models import (
    ReconsolidationAudit, ReconsolidationGroup, ReconsolidationOperation, ReconsolidationSpend,
)
from reconsolidation import driver
from reconsolidation.providers.openai import forget_models_checks
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.providers.sse_server import Answering, openai_server
from veetbot.rls import owner_context

CHAT = ("POST", "/v1/chat/completions")
# Four subjects, two related originals each from separate messages, no two lexemes shared
# across subjects: the inventory queues exactly four disjoint groups.
RELATED = {
    "units": ("The owner prefers Celsius.", "Thermometers get read every morning."),
    "commute": ("Cycling starts before eight.", "The bike route follows the river."),
    "lunch": ("Lentil soup is the usual lunch.", "Bread comes from the corner bakery."),
    "piano": ("Piano practice happens on Sundays.", "Scales are practised slowly."),
}


def four_related_pairs(owner) -> list:
    return [original(owner, statement, subject=subject, at=T0)
            for subject, statements in RELATED.items() for statement in statements]


def only_no_change(stage, reply):
    if stage == "proposal":
        reply["operations"] = [{"id": str(uuid.uuid4()), "group_id": group_id, "kind": "no_change",
                                "inputs": next(op["inputs"] for op in reply["operations"] if op["group_id"] == group_id),
                                "clauses": []} for group_id in reply["group_ids"]]
    return reply


def all_uncertain(stage, reply):
    if stage == "verification":
        reply["verdicts"] = [{**v, "status": "uncertain", "reason": "insufficient_evidence"} for v in reply["verdicts"]]
    return reply


def unknown_field(stage, reply):
    return {**reply, "note": "not in the schema"} if stage == "proposal" else reply


def verdict_missing(stage, reply):
    if stage == "verification":
        reply["verdicts"] = reply["verdicts"][1:]
    return reply


def one_unknown_excerpt(stage, reply):
    if stage == "proposal":
        first = reply["operations"][0]
        first["clauses"][0]["support"][0]["excerpt_id"] = str(uuid.uuid4())
    return reply


REVIEWED = ["batch_proposal_prepared", "batch_verification_prepared", "batch_review_reviewed"]
# mode -> (Answering options, chat requests, {group outcome (state, reason)}, operations
# recorded, the batch's stage decisions). Answered, each group gets a summary and a
# connection: eight operations, the slice's bound.
MODES = {
    "answered": ({}, 2, {("completed", "")}, 8, REVIEWED),
    "no_change": ({"edit": only_no_change}, 2, {("no_change", "provider_no_change")}, 0, REVIEWED),
    "verifier_uncertain": ({"edit": all_uncertain}, 2, {("no_change", "proposals_refused")}, 0, REVIEWED),
    # the candidate citing an unknown excerpt alone is rejected; its group keeps its sibling
    "candidate_local_failure": ({"edit": one_unknown_excerpt}, 2, {("completed", "")}, 7, REVIEWED),
    "proposal_structure_error": ({"edit": unknown_field}, 1, {("pending", "unknown_field")}, 0,
                                 ["batch_proposal_prepared", "batch_proposal_invalid_response"]),
    "verification_structure_error": ({"edit": verdict_missing}, 2, {("pending", "verdict_missing")}, 0,
                                     REVIEWED[:2] + ["batch_verification_invalid_response"]),
    "proposal_5xx": ({"fail_stage": "proposal"}, 1, {("pending", "http_server_error")}, 0,
                     ["batch_proposal_prepared", "batch_proposal_invalid_response"]),
    "verification_5xx": ({"fail_stage": "verification"}, 2, {("pending", "http_server_error")}, 0,
                         REVIEWED[:2] + ["batch_verification_invalid_response"]),
}


@pytest.fixture
def openai(settings, monkeypatch):
    forget_models_checks()  # the read-only model check runs once per process and server
    with openai_server(settings, monkeypatch) as server:
        yield server
    forget_models_checks()


@pytest.mark.parametrize("mode", list(MODES))
def test_a_slice_with_four_queued_groups_sends_at_most_one_proposal_and_one_verification(
        db, enabled, store, day_one, openai, mode):
    options, requests, outcomes, recorded, decisions = MODES[mode]
    owner = make_owner()[0]
    memories = four_related_pairs(owner)
    openai.answer(Answering(openai, **options))
    run = driver.run_slice(owner, lease_owner="test", store=store, now=day_one)

    assert len(run.report.groups_queued) == bounds.RECON_SLICE_MAX_GROUPS == run.groups_processed
    with owner_context(owner):
        inputs = sorted(sorted(map(str, row.input_ids)) for row in ReconsolidationGroup.objects.all())
    assert inputs == sorted(sorted(str(m.id) for m in memories[i:i + 2]) for i in range(0, len(memories), 2))
    chats = [raw for method, path, _, raw in openai.requests if (method, path) == CHAT]
    assert len(chats) == requests <= 2
    documents = [json.loads(json.loads(raw)["messages"][1]["content"]) for raw in chats]
    assert [d["stage"] for d in documents] == ["proposal", "verification"][:requests]
    with owner_context(owner):
        groups = {row.id: (row.state, row.reason) for row in ReconsolidationGroup.objects.all()}
        spends = list(ReconsolidationSpend.objects.order_by("reserved_at", "id"))
        operations = ReconsolidationOperation.objects.count()
        stages = list(ReconsolidationAudit.objects.filter(event__startswith="batch_").order_by("recorded_at", "id"))
    assert {uuid.UUID(p["group_id"]) for p in documents[0]["untrusted_data"]["groups"]} == set(groups)
    assert len(groups) == bounds.RECON_SLICE_MAX_GROUPS and set(groups.values()) == outcomes
    # one reservation per request, each naming the whole batch; one batch identity
    assert len(spends) == requests
    assert all(set(map(uuid.UUID, s.call_audit["group_ids"])) == set(groups) for s in spends)
    assert len({s.call_audit["batch_id"] for s in spends}) == 1
    assert {s.state for s in spends} <= {"settled", "unknown"}
    assert operations == recorded
    # one content-free decision per stage reached, for the whole batch
    assert sorted(a.event for a in stages) == sorted(decisions)
    assert all(a.group_id is None and a.counts["groups"] == len(groups) for a in stages)
    assert all(op.kind != "no_change" for op in run.operations) and len(run.operations) == operations
    # the slice reports its calls and the tokens their settlements recorded
    completions = [s.call_audit.get("completion") or {} for s in spends]
    assert run.usage.calls == requests
    assert run.usage.input_tokens == sum(c.get("input_tokens") or 0 for c in completions)
    assert run.usage.output_tokens == sum(c.get("output_tokens") or 0 for c in completions)
    assert mode != "answered" or run.usage.input_tokens > 0


def test_the_rules_provider_takes_a_slices_four_groups_as_one_batch_under_one_reservation(
        db, enabled, store, day_one):
    owner = make_owner()[0]
    four_related_pairs(owner)
    run = driver.run_slice(owner, lease_owner="test", store=store, now=day_one)

    assert run.groups_processed == bounds.RECON_SLICE_MAX_GROUPS
    with owner_context(owner):
        groups = {row.id: (row.state, row.reason) for row in ReconsolidationGroup.objects.all()}
        spends = list(ReconsolidationSpend.objects.all())
        stages = list(ReconsolidationAudit.objects.filter(event__startswith="batch_"))
    assert len(groups) == bounds.RECON_SLICE_MAX_GROUPS
    assert all(state in {"completed", "no_change"} for state, _ in groups.values())
    # one reservation, its call audit naming every group of the batch, settled once
    assert len(spends) == 1 and spends[0].state == "settled"
    assert spends[0].call_audit["provider"] == "rules"
    assert set(map(uuid.UUID, spends[0].call_audit["group_ids"])) == set(groups)
    assert [a.event for a in stages] == ["batch_proposal_prepared"]
    assert stages[0].counts == {"groups": len(groups)}
    assert run.usage.calls == 1 and run.usage.input_tokens == run.usage.output_tokens == 0

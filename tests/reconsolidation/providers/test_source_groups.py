"""Reading claimed groups from real rows into the builder: owner message parts become whole
excerpts; a source revised, retracted or above the sensitivity ceiling since the claim
defers its group with the matching finite reason."""
from __future__ import annotations

import json

import pytest

from memory import services
from memory.domain import MemoryChanges
from memory.models import MemorySource
from reconsolidation.domain import input_digest
from reconsolidation.providers.egress import egress_policy
from reconsolidation.providers.request import build_proposal_request
from reconsolidation.providers.source_groups import read_source_groups
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, refs
from tests.reconsolidation.providers.builders import config, sid
from veetbot.rls import owner_context

CFG = config()


@pytest.fixture
def claimed(db, enabled, store, day_one):
    principal, _ = make_owner()
    a = original(principal, "The owner prefers Celsius.", subject="units", message="I like Celsius, honestly.")
    b = original(principal, "The owner prefers Celsius readings.", subject="units",
                 message="Please show temperatures in Celsius.")
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(a, b),
                      input_digest=input_digest(refs(a, b)), now=day_one)
    return principal, a, b, store.claim_group(principal, lease_token=lease.lease_token, now=day_one)


def build(principal, group_lease, now):
    with owner_context(principal):
        groups = read_source_groups(principal, [group_lease], now)
    policy = egress_policy(CFG, tenant_id=principal.tenant_id, principal_id=principal.principal_id, prepared_at=now,
                           residency_pin="")
    return build_proposal_request(groups=groups, config=CFG, policy=policy, batch_id=sid("real"))


def test_owner_message_parts_become_whole_excerpts_bound_to_the_claimed_revisions(claimed, day_one):
    principal, a, b, group_lease = claimed
    batch = build(principal, group_lease, day_one)
    assert batch.deferred == ()
    payload = json.loads(batch.request.body)["untrusted_data"]["groups"][0]
    assert sorted(e["text"] for e in payload["excerpts"]) == ["I like Celsius, honestly.",
                                                             "Please show temperatures in Celsius."]
    assert {(i.belief_id, i.content_revision) for i in batch.context.groups[0].inputs} == {
        (a.id, a.content_revision), (b.id, b.content_revision)}
    with owner_context(principal):
        cited = {str(part) for part in MemorySource.objects.filter(memory_id__in=[a.id, b.id])
                 .values_list("part_id", flat=True)}
    assert {e["excerpt_id"] for e in payload["excerpts"]} == cited


def test_a_source_revised_after_the_claim_defers_the_group(claimed, day_one):
    principal, a, _, group_lease = claimed
    services.memory_revise(principal=principal, memory_id=a.id, changes=MemoryChanges(statement="Fahrenheit now."),
                           now=day_one)
    assert [d.reason for d in build(principal, group_lease, day_one).deferred] == ["source_changed"]


def test_a_source_above_the_sensitivity_ceiling_defers_the_group(claimed, day_one):
    principal, a, _, group_lease = claimed
    services.memory_revise(principal=principal, memory_id=a.id, changes=MemoryChanges(sensitivity="restricted"),
                           expected_revision=a.content_revision, now=day_one)
    batch = build(principal, group_lease.model_copy(update={"inputs": tuple(
        ref.model_copy(update={"content_revision": ref.content_revision + 1}) if ref.memory_id == a.id else ref
        for ref in group_lease.inputs)}), day_one)
    assert [d.reason for d in batch.deferred] == ["source_not_eligible"]

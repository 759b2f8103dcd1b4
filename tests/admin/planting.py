"""Plant one owner's bank with a distinctive marker in every prose-bearing column, and
real content-free rows in every table the staff admin shows.

Prose goes in through the services wherever a service writes it (display name, token
label, person name, session and memory scope, event parts, subject, statement, entity
IDs, revision snapshots, a recall query); derived clauses, members and blocks, which no
service writes yet, through the ORM inside the owner's context. The reconsolidation rows
come from a real leased slice: inventory, a claimed group, a reserved and settled call
with its closed audit, and a committed proposal with its dependencies and audit.
"""
from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from memory import services
from memory.domain import MemoryChanges
from reconsolidation.domain import CallAudit, CallCompletion, Proposal
from reconsolidation.models import DerivedMemory, ReconsolidationBlock, ReconsolidationMember
from reconsolidation.driver import inventory_slice
from reconsolidation.store import ReconsolidationStore
from recall.domain import RecallRequest
from recall.retriever import recall
from tests.factories import T0, draft, owner_message
from veetbot.identity import Principal
from veetbot.rls import owner_context

# Letters only, so it fits every validated prose column (scope names, entity IDs) and
# survives HTML escaping unchanged; compared case-insensitively.
MARKER = "Qzxvwk"
DAY_ONE = T0 + timedelta(days=1)


def prose(label: str) -> str:
    return f"{MARKER} {label} secret {MARKER}"


@dataclass
class PlantedOwner:
    principal: Principal
    memory_ids: list = field(default_factory=list)
    event_ids: list = field(default_factory=list)
    person_id: uuid.UUID | None = None
    operation_id: uuid.UUID | None = None
    derived_id: uuid.UUID | None = None


def _digest(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()


def _original(principal: Principal, n: int, *, scope: str = "user", session_scope: str = "user"):
    session = services.session_create(principal=principal, scope=session_scope, started_at=T0)
    event = owner_message(principal, prose(f"message {n}"), session_id=session.id)
    memory = services.memory_create(principal=principal, now=T0, draft=draft(
        event, statement=prose(f"statement {n}"), subject=prose("subject"), scope=scope,
        entity_ids=[f"{MARKER}{n}"],
    ))
    return memory, event


def plant_owner(label: str) -> PlantedOwner:
    created = services.owner_create(display_name=prose(f"{label} display name"), now=T0)
    principal = Principal(tenant_id=created.tenant_id, principal_id=created.principal_id)
    planted = PlantedOwner(principal=principal)
    services.token_create(principal=principal, label=prose("token label"), now=T0)
    planted.person_id = services.person_create(principal=principal, name=prose("person name"), now=T0).id

    # Four equivalent originals in user scope (they group), one in a named project scope.
    for n in range(4):
        memory, event = _original(principal, n)
        planted.memory_ids.append(memory.id)
        planted.event_ids.append(event.id)
    project = f"project:{MARKER}project"
    memory, event = _original(principal, 4, scope=project, session_scope=project)
    planted.memory_ids.append(memory.id)
    planted.event_ids.append(event.id)

    # Revision snapshots and journal entries, a rejection, an erasure (fence bump).
    services.memory_revise(principal=principal, memory_id=memory.id, now=T0 + timedelta(minutes=1),
                           changes=MemoryChanges(statement=prose("revised statement")))
    services.memory_reject(principal=principal, memory_id=memory.id, now=T0 + timedelta(minutes=2))
    spare, _ = _original(principal, 5)
    services.memory_erase(principal=principal, memory_id=spare.id, now=T0 + timedelta(minutes=3))

    # A recall trace from a query full of prose.
    recall(principal=principal, surface="api", now=T0 + timedelta(minutes=4),
           request=RecallRequest(query=prose("recall query"), ceiling="internal", channel="sparse"))

    _reconsolidate(planted)
    return planted


def _reconsolidate(planted: PlantedOwner) -> None:
    principal, store = planted.principal, ReconsolidationStore()
    lease = store.claim_due(principal, lease_owner="admin-test", now=DAY_ONE)
    inventory_slice(store, principal, lease, now=DAY_ONE)
    group = store.claim_group(principal, lease_token=lease.lease_token, now=DAY_ONE)
    assert group is not None, "the equivalent originals were not grouped"
    audit = CallAudit(batch_id=uuid.uuid4(), stage="proposal", group_ids=(group.group_id,), provider="rules",
                      model="rules@1", pricing_digest=_digest("pricing"), egress_digest=_digest("egress"),
                      admitted_at=DAY_ONE)
    reservation = store.reserve(principal, group, request_digest=_digest("request"), maximum_usd="0.01",
                                call_audit=audit, now=DAY_ONE)
    store.settle(principal, reservation.id, outcome="verified", actual_usd="0.002", lease_token=lease.lease_token,
                 completion=CallCompletion(completed_at=DAY_ONE, elapsed_ms=12, transport_outcome="completed",
                                           input_tokens=100, output_tokens=20), now=DAY_ONE)
    # A conflict flag: the kind with the fewest local rules (two sources), so this
    # planting does not depend on merge or summary validation.
    proposal = Proposal(kind="flag_conflict", inputs=group.inputs[:2], model_identity=_digest("rules@1"),
                        reason="value_differs")
    operation = store.commit(principal, group, expected_inputs=group.inputs, expected_fence=group.fence_generation,
                             proposal=proposal, now=DAY_ONE)
    store.finish_group(principal, group, outcome="completed", now=DAY_ONE)
    store.release(principal, lease.lease_token, now=DAY_ONE)
    planted.operation_id = operation.id
    ids = [ref.memory_id for ref in group.inputs]
    with owner_context(principal):
        owner = {"tenant_id": principal.tenant_id, "principal_id": principal.principal_id}
        derived = DerivedMemory.objects.create(
            **owner, operation_id=operation.id, kind="summary", subject=prose("derived subject"),
            clauses=[{"text": prose("summary clause"), "source_ids": [str(i) for i in ids]}],
            belief_type="preference", sensitivity="internal", scope="user", portable=True, confidence=0.8,
            evidence_at=T0, valid_from=T0, status="active", created_at=DAY_ONE, updated_at=DAY_ONE,
        )
        planted.derived_id = derived.id
        ReconsolidationMember.objects.create(**owner, operation_id=operation.id, canonical_id=ids[0],
                                             member_id=ids[1], created_at=DAY_ONE)
        ReconsolidationBlock.objects.create(**owner, signature=_digest(prose("blocked claim")),
                                            reason="owner_rejection", operation_id=operation.id, created_at=DAY_ONE)

"""Builders of provider-seam values for the tests: source groups, configs, policies and
valid envelopes that a test then mutates. Pure values: no database, no network."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal
from uuid import UUID, uuid4, uuid5

from reconsolidation.domain import InputRef
from reconsolidation.providers.contract import ProviderConfig
from reconsolidation.providers.egress import egress_policy
from reconsolidation.providers.envelopes import PROPOSAL_SCHEMA, VERIFICATION_SCHEMA
from reconsolidation.providers.request import EvidencePart, SourceGroup, SourceMemory, build_proposal_request

T = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)
TENANT = UUID("00000000-0000-4000-8000-000000000001")
PRINCIPAL = UUID("00000000-0000-4000-8000-000000000002")
NS = UUID("6f0d7d5e-0000-4000-8000-000000000000")


def sid(*parts) -> UUID:
    """A stable UUID per name, so digests can be compared across builds."""
    return uuid5(NS, "/".join(str(p) for p in parts))


def config(provider="scripted", *, residency="local", model="test-model", prices=("1", "2")) -> ProviderConfig:
    return ProviderConfig(
        provider=provider, model=model, residency=residency,
        base_url="" if residency == "local" else f"https://{residency.removeprefix('remote:')}/v1",
        input_usd_per_mtok=None if prices[0] is None else Decimal(prices[0]),
        output_usd_per_mtok=None if prices[1] is None else Decimal(prices[1]),
    )


def policy(cfg: ProviderConfig, *, pin="", at=T):
    return egress_policy(cfg, tenant_id=TENANT, principal_id=PRINCIPAL, prepared_at=at, residency_pin=pin)


def part(name, text, *, event=None, position=0, kind="user.message.created", speaker="owner", **extra) -> EvidencePart:
    return EvidencePart(event_id=sid("event", event or name), part_id=sid("part", name), position=position,
                        created_at=T, event_kind=kind, speaker=speaker, text=text, **extra)


def memory(name, statement, *, evidence=None, revision=1, sensitivity="internal", **extra) -> SourceMemory:
    fields = dict(
        memory_id=sid("memory", name), content_revision=revision, subject="desk", statement=statement,
        belief_type="fact", polarity="affirmed", attribution="owner", scope="user", portable=True,
        sensitivity=sensitivity, status="active", evidence_at=T,
        evidence=tuple(evidence) if evidence is not None else (part(name, statement),),
    )
    fields.update(extra)
    return SourceMemory(**fields)


def group(name, memories, *, claimed=None) -> SourceGroup:
    refs = claimed if claimed is not None else [
        InputRef(memory_id=m.memory_id, content_revision=m.content_revision) for m in memories]
    return SourceGroup(group_id=sid("group", name), claimed=tuple(refs), sources=tuple(memories))


def simple_group(name="g1", count=2) -> SourceGroup:
    return group(name, [memory(f"{name}-m{i}", f"My desk is made of oak, note {i}.") for i in range(count)])


def prepared(groups=None, *, cfg=None, batch=None):
    cfg = cfg or config()
    return build_proposal_request(groups=groups or [simple_group()], config=cfg, policy=policy(cfg),
                                  batch_id=batch or sid("batch"))


def merge_proposal(batch) -> dict:
    """A valid reconsolidation-proposal@1 document for a prepared batch: one merge per group."""
    operations = []
    for g in batch.context.groups:
        inputs = [{"belief_id": str(i.belief_id), "content_revision": i.content_revision} for i in g.inputs]
        support = [{"belief_id": str(i.belief_id), "excerpt_id": str(i.excerpt_ids[0])} for i in g.inputs]
        operations.append({"id": str(sid("op", g.group_id)), "group_id": str(g.group_id), "kind": "merge_equivalent",
                           "inputs": inputs, "clauses": [{"text": "My desk is made of oak.", "support": support}]})
    return {"schema_version": PROPOSAL_SCHEMA, "batch_id": str(batch.context.batch_id),
            "group_ids": [str(g.group_id) for g in batch.context.groups], "operations": operations}


def verification(batch_id, digest, requested, status="supported", reason="entailed") -> dict:
    return {"schema_version": VERIFICATION_SCHEMA, "batch_id": str(batch_id), "proposal_digest": digest,
            "verdicts": [{"operation_id": str(op), "clause_index": index, "status": status, "reason": reason}
                         for op, index in sorted(requested, key=lambda p: (str(p[0]), p[1]))]}


def dumps(document) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


def fresh_id() -> str:
    return str(uuid4())

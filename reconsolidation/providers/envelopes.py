"""The transient response envelopes reconsolidation-proposal@1 and
reconsolidation-verification@1, the locally created ``ProposalContext`` they are checked
against, and the JSON schemas offered to a provider as its strict output format.

The context holds identity bindings only (batch, owner, groups, beliefs at content
revisions, the excerpts each belief may cite). It is built locally by the request builder
after source admission and egress; a provider response can neither supply nor override it.
Parsed envelopes are ephemeral content, never audit payloads.
"""
from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import Field

from reconsolidation.providers.contract import Value, canonical_json, sha256_hex

PROPOSAL_SCHEMA = "reconsolidation-proposal@1"
VERIFICATION_SCHEMA = "reconsolidation-verification@1"

EnvelopeKind = Literal["merge_equivalent", "summarize_related", "infer_connection", "flag_conflict", "no_change"]
# (minimum, maximum) clauses per kind: merge and connection one, summary 1-4, none otherwise.
KIND_CLAUSES: dict[str, tuple[int, int]] = {
    "merge_equivalent": (1, 1),
    "infer_connection": (1, 1),
    "summarize_related": (1, 4),
    "flag_conflict": (0, 0),
    "no_change": (0, 0),
}
# Kinds whose single clause must cite every operation input.
KINDS_SUPPORTING_EVERY_INPUT = frozenset({"merge_equivalent", "infer_connection"})
INPUTS_MIN = 2

VerdictStatus = Literal["supported", "unsupported", "uncertain"]
VERDICT_REASONS: dict[str, frozenset[str]] = {
    "supported": frozenset({"entailed"}),
    "unsupported": frozenset({"contradicted", "policy_excluded"}),
    "uncertain": frozenset({"insufficient_evidence", "ambiguous"}),
}


# --- Context (local identity bindings) -----------------------------------------------------

class ContextInput(Value):
    belief_id: UUID
    content_revision: int = Field(ge=1)
    excerpt_ids: tuple[UUID, ...]  # the admitted excerpts this belief may cite


class ContextGroup(Value):
    group_id: UUID
    inputs: tuple[ContextInput, ...]


class ProposalContext(Value):
    batch_id: UUID
    tenant_id: UUID
    principal_id: UUID
    groups: tuple[ContextGroup, ...]

    def group(self, group_id: UUID) -> ContextGroup | None:
        return next((g for g in self.groups if g.group_id == group_id), None)


# --- Proposal ------------------------------------------------------------------------------

class InputPair(Value):
    belief_id: UUID
    content_revision: int


class SupportPair(Value):
    belief_id: UUID
    excerpt_id: UUID


class Clause(Value):
    text: str
    support: tuple[SupportPair, ...]


class Operation(Value):
    id: UUID
    group_id: UUID
    kind: EnvelopeKind
    inputs: tuple[InputPair, ...]
    clauses: tuple[Clause, ...]


class ProposalEnvelope(Value):
    schema_version: Literal["reconsolidation-proposal@1"]
    batch_id: UUID
    group_ids: tuple[UUID, ...]
    operations: tuple[Operation, ...]

    def as_json(self) -> dict:
        return self.model_dump(mode="json")


def proposal_digest(envelope: ProposalEnvelope) -> str:
    """SHA-256 of the parsed proposal's sorted-key compact UTF-8 JSON without ASCII escaping."""
    return sha256_hex(canonical_json(envelope.as_json()))


# --- Verification --------------------------------------------------------------------------

class Verdict(Value):
    operation_id: UUID
    clause_index: int = Field(ge=0)
    status: VerdictStatus
    reason: str


class VerificationEnvelope(Value):
    schema_version: Literal["reconsolidation-verification@1"]
    batch_id: UUID
    proposal_digest: str
    verdicts: tuple[Verdict, ...]


# --- Strict output schemas offered to the provider -----------------------------------------

def _object(properties: dict) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


_UUID = {"type": "string"}
PROPOSAL_JSON_SCHEMA = _object({
    "schema_version": {"type": "string", "enum": [PROPOSAL_SCHEMA]},
    "batch_id": _UUID,
    "group_ids": {"type": "array", "items": _UUID},
    "operations": {"type": "array", "items": _object({
        "id": _UUID,
        "group_id": _UUID,
        "kind": {"type": "string", "enum": list(KIND_CLAUSES)},
        "inputs": {"type": "array", "items": _object({"belief_id": _UUID, "content_revision": {"type": "integer"}})},
        "clauses": {"type": "array", "items": _object({
            "text": {"type": "string"},
            "support": {"type": "array", "items": _object({"belief_id": _UUID, "excerpt_id": _UUID})},
        })},
    })},
})
VERIFICATION_JSON_SCHEMA = _object({
    "schema_version": {"type": "string", "enum": [VERIFICATION_SCHEMA]},
    "batch_id": _UUID,
    "proposal_digest": {"type": "string"},
    "verdicts": {"type": "array", "items": _object({
        "operation_id": _UUID,
        "clause_index": {"type": "integer"},
        "status": {"type": "string", "enum": list(VERDICT_REASONS)},
        "reason": {"type": "string", "enum": sorted({r for rs in VERDICT_REASONS.values() for r in rs})},
    })},
})

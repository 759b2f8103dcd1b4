"""The strict parser of provider responses: bytes in, a parsed envelope or a finite reason out.

Two kinds of failure, exactly as reconsolidation-proposal@1 / -verification@1 say:

* **Structure errors refuse the whole batch** (``Refusal``): responses over
  ``RECON_RESPONSE_MAX_BYTES``, malformed UTF-8 or lone surrogates, malformed JSON,
  duplicate keys, non-finite numbers, unknown or missing fields at any level, coerced
  types (a revision given as "3", 3.0 or true; a UUID in a non-canonical spelling),
  unknown kinds, duplicate operation IDs, wrong clause/input counts, a group without an
  outcome, no_change beside another outcome, a reply for another batch or proposal, and
  missing, extra or status/reason-mismatched verdicts.
* **Candidate-local errors reject only that candidate** (``Rejection`` inside a valid
  parse): unknown beliefs or excerpts, stale revisions, support that does not name the
  operation's inputs, clause text out of bounds or carrying control/bidi characters, and
  unsupported/uncertain verdicts. Safe siblings stay available for local validation.

It performs no model call, source read or write, never raises (any unexpected error maps to
``malformed_envelope``) and never echoes provider text in a reason.
"""
from __future__ import annotations

import re
from typing import Literal, Optional, Union
from uuid import UUID

from reconsolidation.providers.contract import StrictJSONError, Value, limit, strict_json_loads
from reconsolidation.providers.envelopes import (
    INPUTS_MIN, KIND_CLAUSES, KINDS_SUPPORTING_EVERY_INPUT, PROPOSAL_SCHEMA, VERDICT_REASONS, VERIFICATION_SCHEMA,
    Clause, InputPair, Operation, ProposalContext, ProposalEnvelope, SupportPair, Verdict, VerificationEnvelope,
    proposal_digest,
)

RefusalReason = Literal[
    "response_too_large", "malformed_unicode", "malformed_json", "duplicate_key", "non_finite_number",
    "unknown_field", "missing_field", "wrong_type", "schema_version", "batch_mismatch", "group_mismatch",
    "unknown_group", "duplicate_operation", "unknown_kind", "too_many_operations", "clause_count", "input_count",
    "duplicate_input", "missing_outcome", "no_change_not_alone", "proposal_mismatch", "verdict_missing",
    "verdict_extra", "verdict_duplicate", "verdict_reason_mismatch", "malformed_envelope",
    "provider_failure", "request_mismatch",  # no terminal reply, or a reply to another request
]
RejectionReason = Literal[
    "unknown_belief", "stale_revision", "unknown_excerpt", "support_not_input", "incomplete_support",
    "duplicate_support", "clause_unsupported", "clause_text_bounds", "unsafe_output",
    "verdict_unsupported", "verdict_uncertain",
]
REFUSAL_REASONS: frozenset[str] = frozenset(RefusalReason.__args__)  # type: ignore[attr-defined]
REJECTION_REASONS: frozenset[str] = frozenset(RejectionReason.__args__)  # type: ignore[attr-defined]

# C0/C1 controls other than tab and newline, bidi overrides/isolates and zero-width
# characters: text a reader cannot see is not a clause we can show or verify.
_UNSAFE_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")


class Refusal(Value):
    ok: Literal[False] = False
    reason: RefusalReason


class Rejection(Value):
    operation_id: UUID
    reason: RejectionReason


class ProposalParse(Value):
    ok: Literal[True] = True
    envelope: ProposalEnvelope
    digest: str
    rejected: tuple[Rejection, ...]

    @property
    def candidate_ids(self) -> tuple[UUID, ...]:
        """Operations that survived candidate-local checks, in envelope order."""
        out = {r.operation_id for r in self.rejected}
        return tuple(op.id for op in self.envelope.operations if op.id not in out)

    def requested_clauses(self) -> frozenset[tuple[UUID, int]]:
        """The (operation, clause index) pairs a verifier must answer for the survivors."""
        keep = set(self.candidate_ids)
        return frozenset(
            (op.id, index) for op in self.envelope.operations if op.id in keep for index in range(len(op.clauses))
        )


class VerificationParse(Value):
    ok: Literal[True] = True
    envelope: VerificationEnvelope
    rejected: tuple[Rejection, ...]  # candidates with any clause not supported


class _Refuse(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Float:
    """A JSON number with a fraction or exponent: no envelope field accepts one."""


def _check_text(value) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")  # a lone surrogate from a \\ud800 escape fails here
        except UnicodeEncodeError:
            raise _Refuse("malformed_unicode")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key)
            _check_text(item)
    elif isinstance(value, list):
        for item in value:
            _check_text(item)


def load_strict_json(raw: bytes):
    """Decode one response document under the byte guard, or raise ``_Refuse``."""
    if not isinstance(raw, (bytes, bytearray)):
        raise _Refuse("wrong_type")
    if len(raw) > limit("RECON_RESPONSE_MAX_BYTES"):
        raise _Refuse("response_too_large")
    try:
        text = bytes(raw).decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise _Refuse("malformed_unicode")
    try:
        document = strict_json_loads(text, parse_float=lambda _: _Float())
    except StrictJSONError as error:
        raise _Refuse(error.reason)
    _check_text(document)
    return document


def _object(value, fields: tuple[str, ...]) -> dict:
    if not isinstance(value, dict):
        raise _Refuse("wrong_type")
    if set(value) - set(fields):
        raise _Refuse("unknown_field")
    if set(fields) - set(value):
        raise _Refuse("missing_field")
    return value


def _list(value) -> list:
    if not isinstance(value, list):
        raise _Refuse("wrong_type")
    return value


def _str(value) -> str:
    if not isinstance(value, str):
        raise _Refuse("wrong_type")
    return value


def _int(value) -> int:
    if type(value) is not int:  # bool, float and "3" are coercions, not integers
        raise _Refuse("wrong_type")
    return value


def _uuid(value) -> UUID:
    text = _str(value)
    try:
        parsed = UUID(text)
    except ValueError:
        raise _Refuse("wrong_type")
    if str(parsed) != text:  # only the canonical lowercase hyphenated spelling
        raise _Refuse("wrong_type")
    return parsed


# --- Proposal ------------------------------------------------------------------------------

def _operation(value) -> Operation:
    raw = _object(value, ("id", "group_id", "kind", "inputs", "clauses"))
    kind = _str(raw["kind"])
    if kind not in KIND_CLAUSES:
        raise _Refuse("unknown_kind")
    inputs = tuple(
        InputPair(belief_id=_uuid(p["belief_id"]), content_revision=_int(p["content_revision"]))
        for p in (_object(item, ("belief_id", "content_revision")) for item in _list(raw["inputs"]))
    )
    clauses = []
    for item in _list(raw["clauses"]):
        clause = _object(item, ("text", "support"))
        support = tuple(
            SupportPair(belief_id=_uuid(s["belief_id"]), excerpt_id=_uuid(s["excerpt_id"]))
            for s in (_object(pair, ("belief_id", "excerpt_id")) for pair in _list(clause["support"]))
        )
        clauses.append(Clause(text=_str(clause["text"]), support=support))
    low, high = KIND_CLAUSES[kind]
    if not low <= len(clauses) <= high:
        raise _Refuse("clause_count")
    if not INPUTS_MIN <= len(inputs) <= limit("RECON_GROUP_MAX_MEMBERS"):
        raise _Refuse("input_count")
    if len({pair.belief_id for pair in inputs}) != len(inputs):
        raise _Refuse("duplicate_input")
    return Operation(id=_uuid(raw["id"]), group_id=_uuid(raw["group_id"]), kind=kind, inputs=inputs,
                     clauses=tuple(clauses))


def _proposal_structure(document, context: ProposalContext) -> ProposalEnvelope:
    raw = _object(document, ("schema_version", "batch_id", "group_ids", "operations"))
    if _str(raw["schema_version"]) != PROPOSAL_SCHEMA:
        raise _Refuse("schema_version")
    group_ids = tuple(_uuid(item) for item in _list(raw["group_ids"]))
    operations = tuple(_operation(item) for item in _list(raw["operations"]))
    if _uuid(raw["batch_id"]) != context.batch_id:
        raise _Refuse("batch_mismatch")
    expected = [g.group_id for g in context.groups]
    if len(set(group_ids)) != len(group_ids) or set(group_ids) != set(expected):
        raise _Refuse("group_mismatch")
    if len(operations) > limit("RECON_SLICE_MAX_OPERATIONS"):
        raise _Refuse("too_many_operations")
    if len({op.id for op in operations}) != len(operations):
        raise _Refuse("duplicate_operation")
    kinds: dict[UUID, list[str]] = {group_id: [] for group_id in group_ids}
    for op in operations:
        if op.group_id not in kinds:
            raise _Refuse("unknown_group")
        kinds[op.group_id].append(op.kind)
    for group_kinds in kinds.values():
        if not group_kinds:
            raise _Refuse("missing_outcome")
        if "no_change" in group_kinds and len(group_kinds) > 1:
            raise _Refuse("no_change_not_alone")
    return ProposalEnvelope(schema_version=PROPOSAL_SCHEMA, batch_id=context.batch_id, group_ids=group_ids,
                            operations=operations)


def _candidate_reason(op: Operation, context: ProposalContext) -> Optional[str]:
    """The first candidate-local failure of one structurally valid operation, if any."""
    group = context.group(op.group_id)
    admitted = {item.belief_id: item for item in group.inputs}
    for pair in op.inputs:
        known = admitted.get(pair.belief_id)
        if known is None:
            return "unknown_belief"
        if known.content_revision != pair.content_revision:
            return "stale_revision"
    inputs = {pair.belief_id for pair in op.inputs}
    for clause in op.clauses:
        if not 1 <= len(clause.text) <= limit("RECON_CLAUSE_MAX_CHARS") or not clause.text.strip():
            return "clause_text_bounds"
        if _UNSAFE_TEXT.search(clause.text):
            return "unsafe_output"
        if not clause.support:
            return "clause_unsupported"
        if len(set(clause.support)) != len(clause.support):
            return "duplicate_support"
        for pair in clause.support:
            if pair.belief_id not in inputs:
                return "support_not_input"
            if pair.excerpt_id not in admitted[pair.belief_id].excerpt_ids:
                return "unknown_excerpt"
        if op.kind in KINDS_SUPPORTING_EVERY_INPUT and {p.belief_id for p in clause.support} != inputs:
            return "incomplete_support"
    return None


def parse_proposal(raw: bytes, context: ProposalContext) -> Union[ProposalParse, Refusal]:
    """Parse one reconsolidation-proposal@1 response against its local context."""
    try:
        envelope = _proposal_structure(load_strict_json(raw), context)
        rejected = tuple(
            Rejection(operation_id=op.id, reason=reason)
            for op in envelope.operations
            if (reason := _candidate_reason(op, context)) is not None
        )
        return ProposalParse(envelope=envelope, digest=proposal_digest(envelope), rejected=rejected)
    except _Refuse as refused:
        return Refusal(reason=refused.reason)
    except Exception:  # noqa: BLE001 - the boundary never raises; no provider text escapes
        return Refusal(reason="malformed_envelope")


# --- Verification --------------------------------------------------------------------------

def _verdict(value) -> Verdict:
    raw = _object(value, ("operation_id", "clause_index", "status", "reason"))
    status, reason = _str(raw["status"]), _str(raw["reason"])
    if reason not in VERDICT_REASONS.get(status, ()):
        raise _Refuse("verdict_reason_mismatch")
    return Verdict(operation_id=_uuid(raw["operation_id"]), clause_index=_int(raw["clause_index"]),
                   status=status, reason=reason)


def parse_verification(
    raw: bytes, *, batch_id: UUID, proposal_digest: str, requested: frozenset[tuple[UUID, int]],
) -> Union[VerificationParse, Refusal]:
    """Parse one reconsolidation-verification@1 response: exactly one verdict per requested
    (operation, clause index); anything else refuses the batch."""
    try:
        raw_doc = _object(load_strict_json(raw), ("schema_version", "batch_id", "proposal_digest", "verdicts"))
        if _str(raw_doc["schema_version"]) != VERIFICATION_SCHEMA:
            raise _Refuse("schema_version")
        verdicts = tuple(_verdict(item) for item in _list(raw_doc["verdicts"]))
        if _uuid(raw_doc["batch_id"]) != batch_id:
            raise _Refuse("batch_mismatch")
        if _str(raw_doc["proposal_digest"]) != proposal_digest:
            raise _Refuse("proposal_mismatch")
        keys = [(v.operation_id, v.clause_index) for v in verdicts]
        if len(set(keys)) != len(keys):
            raise _Refuse("verdict_duplicate")
        if set(keys) - requested:
            raise _Refuse("verdict_extra")
        if requested - set(keys):
            raise _Refuse("verdict_missing")
        worst: dict[UUID, str] = {}
        for verdict in verdicts:
            if verdict.status == "unsupported":
                worst[verdict.operation_id] = "verdict_unsupported"
            elif verdict.status == "uncertain":
                worst.setdefault(verdict.operation_id, "verdict_uncertain")
        envelope = VerificationEnvelope(schema_version=VERIFICATION_SCHEMA, batch_id=batch_id,
                                        proposal_digest=proposal_digest, verdicts=verdicts)
        rejected = tuple(Rejection(operation_id=op_id, reason=reason) for op_id, reason in worst.items())
        return VerificationParse(envelope=envelope, rejected=rejected)
    except _Refuse as refused:
        return Refusal(reason=refused.reason)
    except Exception:  # noqa: BLE001 - the boundary never raises; no provider text escapes
        return Refusal(reason="malformed_envelope")

"""The local egress policy: may this memory, excerpt or proposed clause leave for this provider?

A conservative deterministic classifier, not source admission and not a provider-side privacy
decision. Each item is assessed on its own, with:

* a **classification floor** — the memory's sensitivity (a clause takes the strictest of its
  supporting memories); patterns can only raise it, never lower it;
* **refusal patterns** — secrets, credentials, injection and sensitive categories
  (``memory.egress.pattern_reason``, the rules recall's remote encoder applies too); a
  pattern raises the classification of what it matched;
* **residency** — ``local`` (rules, scripted, or a loopback base URL: the content never
  leaves the machine) or ``remote:<host>``, allowed only when
  ``AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER`` pins exactly that host
  (``memory.egress.residency_allowed``).

Only ``public``/``internal`` content with an allowed residency passes. Every decision is bound
to the policy digest (owner, provider, model, residency, pin, ceiling, preparation instant,
version); the request builder refuses a decision minted under another policy. A refusal
reason is a finite code: the matched text is never kept, logged or returned.
"""
from __future__ import annotations

from datetime import datetime
from typing import Literal, Optional
from uuid import UUID

from django.conf import settings
from pydantic import AwareDatetime

from memory.egress import pattern_reason, residency_allowed
from memory.vocabulary import ATTRIBUTION, SENSITIVITIES, SENSITIVITY_RANK
from reconsolidation.providers.contract import ProviderConfig, Value, canonical_json, sha256_hex

EGRESS_POLICY_VERSION = "egress@1"
# What may leave at most, whatever the provider: the spec allows public and internal only.
EGRESS_CEILING = "internal"

ItemKind = Literal["memory", "excerpt", "clause"]
EgressReason = Literal[
    "allowed", "classification_missing", "above_ceiling", "secret", "credential", "injection",
    "sensitive_pattern", "residency_unknown", "attribution_unknown", "policy_mismatch",
]


class EgressPolicy(Value):
    version: Literal["egress@1"] = EGRESS_POLICY_VERSION
    tenant_id: UUID
    principal_id: UUID
    provider: str
    model: str
    residency: str
    residency_pin: str
    ceiling: str
    prepared_at: AwareDatetime

    @property
    def digest(self) -> str:
        return sha256_hex(canonical_json(self.model_dump(mode="json")))

    @property
    def residency_allowed(self) -> bool:
        return residency_allowed(self.residency, self.residency_pin)


class EgressDecision(Value):
    kind: ItemKind
    item_id: UUID
    allowed: bool
    reason: EgressReason
    classification: Optional[str]
    policy_digest: str


def egress_policy(config: ProviderConfig, *, tenant_id: UUID, principal_id: UUID, prepared_at: datetime,
                  residency_pin: Optional[str] = None) -> EgressPolicy:
    """The policy for one preparation. The pin defaults to the configured residency setting."""
    pin = settings.AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER if residency_pin is None else residency_pin
    return EgressPolicy(
        tenant_id=tenant_id, principal_id=principal_id, provider=config.provider, model=config.model,
        residency=config.residency, residency_pin=(pin or "").strip().lower(), ceiling=EGRESS_CEILING,
        prepared_at=prepared_at,
    )


_RAISED = {"secret": "restricted", "credential": "restricted", "sensitive_pattern": "sensitive"}


def assess(policy: EgressPolicy, *, kind: ItemKind, item_id: UUID, text: str, floor: Optional[str],
           attribution: str = "owner") -> EgressDecision:
    """Assess one memory, raw excerpt or proposed clause independently."""
    def decide(reason: str, classification: Optional[str]) -> EgressDecision:
        return EgressDecision(kind=kind, item_id=item_id, allowed=reason == "allowed", reason=reason,
                              classification=classification, policy_digest=policy.digest)

    if floor not in SENSITIVITIES:
        return decide("classification_missing", None)
    if not ATTRIBUTION.match(attribution or ""):
        return decide("attribution_unknown", floor)
    found = pattern_reason(text)
    classification = floor
    if found in _RAISED and SENSITIVITY_RANK[_RAISED[found]] > SENSITIVITY_RANK[floor]:
        classification = _RAISED[found]
    if found is not None:
        return decide(found, classification)
    if SENSITIVITY_RANK[classification] > SENSITIVITY_RANK[policy.ceiling]:
        return decide("above_ceiling", classification)
    if not policy.residency_allowed:
        return decide("residency_unknown", classification)
    return decide("allowed", classification)


def decisions_allow(policy: EgressPolicy, decisions) -> Optional[str]:
    """None when every decision allows under exactly this policy, else the first reason."""
    for decision in decisions:
        if decision.policy_digest != policy.digest:
            return "policy_mismatch"
        if not decision.allowed:
            return decision.reason
    return None

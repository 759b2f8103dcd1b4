"""The local egress policy: may this memory, excerpt or proposed clause leave for this provider?

A conservative deterministic classifier, not source admission and not a provider-side privacy
decision. Each item is assessed on its own, with:

* a **classification floor** — the memory's sensitivity (a clause takes the strictest of its
  supporting memories); patterns can only raise it, never lower it;
* **refusal patterns** — secrets (API keys, private keys, tokens), credentials (passwords,
  bearer tokens, URLs with user info, card numbers, national IDs), injection (instructions
  aimed at the model, chat-template tokens, our own envelope names) and sensitive categories
  (health, sexuality, religion, politics, ethnicity, criminal, immigration);
* **residency** — ``local`` (rules, scripted, or a loopback base URL: the content never
  leaves the machine) or ``remote:<host>``, allowed only when
  ``AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER`` pins exactly that host.

Only ``public``/``internal`` content with an allowed residency passes. Every decision is bound
to the policy digest (owner, provider, model, residency, pin, ceiling, preparation instant,
version); the request builder refuses a decision minted under another policy. A refusal
reason is a finite code: the matched text is never kept, logged or returned.
"""
from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Literal, Optional
from uuid import UUID

from django.conf import settings
from pydantic import AwareDatetime

from memory.vocabulary import ATTRIBUTION, SENSITIVITIES, SENSITIVITY_RANK
from reconsolidation.providers.contract import ProviderConfig, Value, canonical_json, residency_allowed, sha256_hex

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


_SECRET = re.compile(
    r"sk-(?:ant-|proj-)?[a-z0-9_-]{16,}|(?:akia|asia)[0-9a-z]{16}|gh[pousr]_[a-z0-9]{30,}|github_pat_[a-z0-9_]{20,}"
    r"|xox[abprs]-[a-z0-9-]{10,}|aiza[0-9a-z_-]{35}|glpat-[a-z0-9_-]{20}|(?:sk|rk)_live_[a-z0-9]{16,}"
    r"|-----begin [a-z ]*private key-----|eyj[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}"
)
_CREDENTIAL = re.compile(
    r"\b(?:password|passwd|passphrase|passcode|pwd|pin code|api[ _-]?key|secret key|access key|auth token"
    r"|access token|refresh token|private key|2fa code|otp|recovery code)s?\b\W{0,3}(?:is|was|:|=)\s*\S+"
    r"|\bbearer\s+[a-z0-9._~+/=-]{16,}|[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@"
    r"|\b\d{3}-\d{2}-\d{4}\b|\b[a-z]{2}\d{2}(?: ?[a-z0-9]{4}){3,7}\b"
)
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b.{0,30}\b(?:previous|prior|above|earlier|all|your|system)\b.{0,20}"
    r"\b(?:instructions?|prompts?|messages?|rules|guidelines|context)\b"
    r"|\b(?:system|developer)\s+(?:prompt|message|instructions?)\b|\byou are now\b|\bnew instructions\b"
    r"|\b(?:reveal|print|show|repeat)\b.{0,20}\b(?:system prompt|your instructions)\b"
    r"|<\|[a-z_]+\|>|\[/?inst\]|<</?sys>>|</?(?:system|assistant|tool)>|\"role\"\s*:\s*\"(?:system|assistant|tool|developer)\""
    r"|reconsolidation-(?:proposal|verification|input)@|\bschema_version\b|\btool_calls?\b|\bfunction_call\b"
)
_SENSITIVE = re.compile(
    r"\b(?:diagnos\w*|hiv|aids|cancer|tumou?r|chemo\w*|depress\w*|anxiety disorder|bipolar|schizophreni\w*|adhd"
    r"|autis\w*|medication|prescri\w*|antidepressant\w*|therap(?:y|ist)|psychiatr\w*|pregnan\w*|abortion|miscarriage"
    r"|disabilit\w*|rehab|addiction|alcoholi\w*|overdose|suicid\w*|self[- ]harm|std|sti|genetic"
    r"|gay|lesbian|bisexual|transgender|queer|sexual orientation|sex life"
    r"|religio\w*|muslim|christian|jewish|hindu|buddhist|atheist|church|mosque|synagogue"
    r"|political party|voted for|democrat|republican|trade union|union member\w*"
    r"|ethnicity|racial|caste|criminal record|convicted|arrested|parole|probation"
    r"|immigration status|undocumented|asylum|visa status|salary|debt|bankrupt\w*)\b"
)


def _luhn(digits: str) -> bool:
    total, double = 0, False
    for char in reversed(digits):
        value = int(char)
        if double:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
        double = not double
    return total % 10 == 0


def normalized(text: str) -> str:
    """NFKC, case-folded, invisible characters removed, whitespace collapsed: so an
    obfuscated pattern (full-width letters, zero-width joiners) still matches."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
    return " ".join(folded.split())


def pattern_reason(text: str) -> Optional[str]:
    """The first refusal pattern in ``text`` (secret, credential, injection, sensitive), if any."""
    flat = normalized(text)
    if _SECRET.search(flat):
        return "secret"
    if _CREDENTIAL.search(flat):
        return "credential"
    for match in _CARD.finditer(flat):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return "credential"
    if _INJECTION.search(flat):
        return "injection"
    if _SENSITIVE.search(flat):
        return "sensitive_pattern"
    return None


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

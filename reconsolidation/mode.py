"""The commit mode: what state a validated proposal is recorded in.

``reviewed`` (the default, ADR-0174): proposals are recorded ``proposed`` — pending,
excluded from recall — until the owner approves their current revision. ``unattended``
commits directly, and only with release evidence: AGENT_MEMORY_RECONSOLIDATION_EVIDENCE
names a comparison report written by ``manage.py eval_reconsolidation`` that passed every
gate and whose provider, model, prompt digest, schema digest and policy equal the running
configuration's (``provider_identity``). Startup (``check_startup``) and every slice
(``current_mode`` at each group) recheck it; a missing, unreadable, failing or mismatched
report refuses unattended processing with an error naming the setting and the first
mismatching field (never the report's content). Read at call time so a deployment change
takes effect at once.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

MODES = ("reviewed", "unattended")


class UnattendedRefused(ImproperlyConfigured):
    def __init__(self, reason: str = "evidence_missing") -> None:
        self.reason = reason
        super().__init__(
            "AGENT_MEMORY_RECONSOLIDATION_MODE=unattended is refused: AGENT_MEMORY_RECONSOLIDATION_EVIDENCE must"
            " name a passing eval_reconsolidation report for the running provider, model, prompts, schemas and"
            f" policy ({reason}); use the reviewed mode")


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                          .encode("utf-8")).hexdigest()


def provider_identity(name: str, model: str) -> dict:
    """What a comparison report certifies: provider, model, prompt and schema digests, policy."""
    from reconsolidation import bounds
    from reconsolidation.providers.egress import EGRESS_POLICY_VERSION
    from reconsolidation.providers.envelopes import PROPOSAL_JSON_SCHEMA, VERIFICATION_JSON_SCHEMA
    from reconsolidation.providers.request import PROPOSAL_INSTRUCTIONS
    from reconsolidation.providers.verification import VERIFICATION_INSTRUCTIONS

    return {
        "model": model,
        "prompt_digest": _digest([PROPOSAL_INSTRUCTIONS, VERIFICATION_INSTRUCTIONS]),
        "schema_digest": _digest([PROPOSAL_JSON_SCHEMA, VERIFICATION_JSON_SCHEMA]),
        "policy": f"{bounds.POLICY};{EGRESS_POLICY_VERSION}",
    }


def configured_identity() -> dict:
    name = (getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_PROVIDER", "rules") or "rules").strip().lower()
    model = "rules@1" if name == "rules" else getattr(settings, "VEETBOT_OPENAI_MODEL", "")
    return {"name": name, **provider_identity(name, model)}


def evidence_refusal() -> str:
    """Why the configured evidence does not permit unattended mode ('' when it does)."""
    path = (getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_EVIDENCE", "") or "").strip()
    if not path:
        return "evidence_missing"
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "evidence_unreadable"
    if not isinstance(report, dict) or not isinstance(report.get("provider"), dict):
        return "evidence_malformed"
    gates = report.get("gates")
    if (report.get("passed") is not True or not isinstance(gates, dict) or not gates
            or not all(isinstance(g, dict) and g.get("passed") is True for g in gates.values())):
        return "evidence_not_passing"
    running = configured_identity()
    for field in ("name", "model", "prompt_digest", "schema_digest", "policy"):
        if report["provider"].get(field) != running[field]:
            return f"evidence_{field}_mismatch"
    return ""


def unattended_evidence_verified() -> bool:
    return evidence_refusal() == ""


def current_mode() -> str:
    mode = getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_MODE", "reviewed") or "reviewed"
    if mode not in MODES:
        raise ImproperlyConfigured(f"AGENT_MEMORY_RECONSOLIDATION_MODE must be one of {', '.join(MODES)}")
    if mode == "unattended":
        refusal = evidence_refusal()
        if refusal:
            raise UnattendedRefused(refusal)
    return mode


def recorded_state() -> str:
    """The state a newly validated proposal is recorded in."""
    return "committed" if current_mode() == "unattended" else "proposed"


def check_startup() -> str:
    """The mode a worker may start in, or ``UnattendedRefused`` / ``ImproperlyConfigured``."""
    return current_mode()

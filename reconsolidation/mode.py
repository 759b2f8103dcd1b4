"""The commit mode: what state a validated proposal is recorded in, and whether unattended
commits are admitted right now.

``reviewed`` (the default, ADR-0174): proposals are recorded ``proposed`` — pending,
excluded from recall — until the owner approves their current revision. ``unattended``
commits directly, and only with measured evidence: AGENT_MEMORY_RECONSOLIDATION_EVIDENCE
names a complete ``eval_reconsolidation`` report that ``evals.reconsolidation.evidence
.verify`` admits for this process — every gate recomputed from the report's observations
with the pinned scorer, both splits, every case, three repeats, and bound to the running
code (input manifest), corpus, scorer, runner, provider, model, prompt, schema, policy and
recall channel. A refusal names a fixed reason code and the field that differs, never the
report's content (``UnattendedRefused``).

Admission is keyed by the evidence file itself, re-read at call time: ``current_mode`` /
``check_startup`` (startup and every group, before any spend) re-read its bytes, and reuse a
verdict only for the same SHA-256 and the same running configuration; any other bytes are
verified afresh, so an edited or replaced file withdraws admission at the next call unless
the new bytes pass on their own. ``unattended_admitted`` is the cheap form for read paths:
it reuses the verdict while the file's stat identity (device, inode, size, mtime, ctime) is
unchanged, and verifies again otherwise. Only the verdict is kept in memory, never the report.
This is the one runtime module that imports the evaluation code (lazily, to score evidence);
nothing the scorer reads reaches dreaming or a provider.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from evals.reconsolidation.evidence import Refusal

MODES = ("reviewed", "unattended")


class UnattendedRefused(ImproperlyConfigured):
    def __init__(self, reason: str = "evidence_missing", field: str = "") -> None:
        self.reason, self.field = reason, field
        where = f" at {field}" if field else ""
        super().__init__(
            "AGENT_MEMORY_RECONSOLIDATION_MODE=unattended is refused: AGENT_MEMORY_RECONSOLIDATION_EVIDENCE must"
            " name a complete passing eval_reconsolidation report (both splits, every case, three repeats) whose"
            " recomputed gates pass and whose code, corpus, scorer, runner, provider, model, prompts, schemas and"
            f" policy are the running ones ({reason}{where}); use the reviewed mode")


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                          .encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def _prompt_schema_policy() -> tuple[str, str, str]:
    """Prompt digest, schema digest and policy: constants of the running code, so once per process
    (``unattended_admitted`` runs on every recall)."""
    from reconsolidation import bounds
    from reconsolidation.providers.egress import EGRESS_POLICY_VERSION
    from reconsolidation.providers.envelopes import PROPOSAL_JSON_SCHEMA, VERIFICATION_JSON_SCHEMA
    from reconsolidation.providers.request import PROPOSAL_INSTRUCTIONS
    from reconsolidation.providers.verification import VERIFICATION_INSTRUCTIONS

    return (_digest([PROPOSAL_INSTRUCTIONS, VERIFICATION_INSTRUCTIONS]),
            _digest([PROPOSAL_JSON_SCHEMA, VERIFICATION_JSON_SCHEMA]), f"{bounds.POLICY};{EGRESS_POLICY_VERSION}")


def provider_identity(name: str, model: str) -> dict:
    """What a comparison report certifies: provider, model, prompt and schema digests, policy."""
    prompt_digest, schema_digest, policy = _prompt_schema_policy()
    return {"model": model, "prompt_digest": prompt_digest, "schema_digest": schema_digest, "policy": policy}


def configured_identity() -> dict:
    name = (getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_PROVIDER", "rules") or "rules").strip().lower()
    model = "rules@1" if name == "rules" else getattr(settings, "VEETBOT_OPENAI_MODEL", "")
    return {"name": name, **provider_identity(name, model)}


def configured_recall() -> dict:
    """The recall channel and embedding a report records (``runner.run``), as configured now."""
    semantic = bool(getattr(settings, "AGENT_MEMORY_SEMANTIC_ENABLED", False))
    return {"recall_channel": "hybrid" if semantic else "sparse",
            "embedding": getattr(settings, "RECALL_ENCODER", None) if semantic else None}


@dataclass(frozen=True)
class _Verdict:
    running: str  # path and running configuration the verdict was reached for
    stat: tuple  # the file's stat identity when it was read (taken before reading)
    sha256: str
    refusal: Optional["Refusal"]


_last_verdict: Optional[_Verdict] = None


def _stat_identity(path: str) -> tuple:
    found = os.stat(path)
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def evidence_check(*, reread: bool = True) -> Optional["Refusal"]:
    """The configured evidence's Refusal (``evidence.Refusal``), or None when it admits
    unattended processing for this process now. ``reread=False`` trusts an unchanged stat
    identity (read paths); the default re-reads the bytes (processing boundaries)."""
    global _last_verdict
    from evals.reconsolidation import evidence

    path = (getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_EVIDENCE", "") or "").strip()
    if not path:
        return evidence.Refusal("evidence_missing")
    provider, recall = configured_identity(), configured_recall()
    running = _digest([path, provider, recall])
    try:
        stat = _stat_identity(path)  # before reading: a later write changes it, so no stale reuse
        last = _last_verdict
        if not reread and last is not None and last.running == running and last.stat == stat:
            return last.refusal
        data = Path(path).read_bytes()
    except OSError:
        return evidence.Refusal("evidence_unreadable")
    sha256 = hashlib.sha256(data).hexdigest()
    if last is not None and last.running == running and last.sha256 == sha256:
        refusal = last.refusal
    else:
        refusal = evidence.verify(data, evidence.Deployment(
            provider=provider, recall=recall, code_files=evidence.running_code_manifest()))
    _last_verdict = _Verdict(running, stat, sha256, refusal)
    return refusal


def evidence_refusal() -> str:
    """Why the configured evidence does not admit unattended mode: a reason code ('' when it does)."""
    refusal = evidence_check()
    return "" if refusal is None else refusal.reason


def unattended_admitted() -> bool:
    """Whether auto-committed (never owner-approved) derived recall may be shown now: the
    configured evidence admits unattended processing. Cheap (one ``stat`` while the file is
    unchanged); independent of the mode setting, so items committed unattended stay hidden
    while their evidence is missing, changed and unverified, or refused — whatever the mode."""
    return evidence_check(reread=False) is None


def current_mode() -> str:
    mode = getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_MODE", "reviewed") or "reviewed"
    if mode not in MODES:
        raise ImproperlyConfigured(f"AGENT_MEMORY_RECONSOLIDATION_MODE must be one of {', '.join(MODES)}")
    if mode == "unattended":
        refusal = evidence_check()
        if refusal is not None:
            raise UnattendedRefused(refusal.reason, refusal.field)
    return mode


def recorded_state() -> str:
    """The state a newly validated proposal is recorded in."""
    return "committed" if current_mode() == "unattended" else "proposed"


def check_startup() -> str:
    """The mode a worker may start in, or ``UnattendedRefused`` / ``ImproperlyConfigured``."""
    return current_mode()

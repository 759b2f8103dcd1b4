"""Admission of unattended processing: does the configured evidence admit it for this process now?

``AGENT_MEMORY_RECONSOLIDATION_EVIDENCE`` names a complete comparison report that ``verify``
admits for the running deployment — every gate recomputed from the report's observations with
the pinned scorer, both splits, every case, three repeats, and bound to the running code
(input manifest), corpus, scorer, runner pins, provider, model, prompt, schema, policy and
recall channel (``provider_identity`` / ``configured_recall`` say what runs).

Admission is keyed by the evidence file itself, re-read at call time: ``evidence_check`` (at
startup and every group, before any spend) re-reads its bytes and reuses a verdict only for the
same SHA-256 and the same running configuration, so an edited or replaced file withdraws
admission at the next call unless the new bytes pass on their own. ``unattended_admitted`` is
the cheap form for read paths: it reuses the verdict while the file's stat identity is
unchanged. Only the verdict is kept in memory, never the report.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

from django.conf import settings

from reconsolidation import bounds
from reconsolidation.evidence import verify
from reconsolidation.evidence.verify import Refusal
from reconsolidation.providers.egress import EGRESS_POLICY_VERSION
from reconsolidation.providers.envelopes import PROPOSAL_JSON_SCHEMA, VERIFICATION_JSON_SCHEMA
from reconsolidation.providers.request import PROPOSAL_INSTRUCTIONS
from reconsolidation.providers.verification import VERIFICATION_INSTRUCTIONS


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                          .encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def _prompt_schema_policy() -> tuple[str, str, str]:
    """Prompt digest, schema digest and policy: constants of the running code, so once per process
    (``unattended_admitted`` runs on every recall)."""
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
    refusal: Optional[Refusal]


_last_verdict: Optional[_Verdict] = None


def _stat_identity(path: str) -> tuple:
    found = os.stat(path)
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def evidence_check(*, reread: bool = True) -> Optional[Refusal]:
    """The configured evidence's Refusal (``Refusal``), or None when it admits
    unattended processing for this process now. ``reread=False`` trusts an unchanged stat
    identity (read paths); the default re-reads the bytes (processing boundaries)."""
    global _last_verdict

    path = (getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_EVIDENCE", "") or "").strip()
    if not path:
        return Refusal("evidence_missing")
    provider, recall = configured_identity(), configured_recall()
    running = _digest([path, provider, recall])
    try:
        stat = _stat_identity(path)  # before reading: a later write changes it, so no stale reuse
        last = _last_verdict
        if not reread and last is not None and last.running == running and last.stat == stat:
            return last.refusal
        data = Path(path).read_bytes()
    except OSError:
        return Refusal("evidence_unreadable")
    sha256 = hashlib.sha256(data).hexdigest()
    if last is not None and last.running == running and last.sha256 == sha256:
        refusal = last.refusal
    else:
        refusal = verify.verify(data, verify.Deployment(
            provider=provider, recall=recall, code_files=verify.running_code_manifest()))
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

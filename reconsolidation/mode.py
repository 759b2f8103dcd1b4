"""The commit mode: what state a validated proposal is recorded in.

``reviewed`` (the default): proposals are recorded ``proposed`` — pending, excluded from
recall — until the owner approves their current revision. ``unattended`` commits directly,
and only while the configured evidence admits it (``evidence.admission``); a refused mode
fails loudly, naming a fixed reason code and the field that differs, never the report's
content (``UnattendedRefused``).
"""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from reconsolidation.evidence.admission import evidence_check

MODES = ("reviewed", "unattended")


class UnattendedRefused(ImproperlyConfigured):
    def __init__(self, reason: str = "evidence_missing", field: str = "") -> None:
        self.reason, self.field = reason, field
        where = f" at {field}" if field else ""
        super().__init__(
            "AGENT_MEMORY_RECONSOLIDATION_MODE=unattended is refused: AGENT_MEMORY_RECONSOLIDATION_EVIDENCE must"
            " name a complete passing comparison report (python -m evals.reconsolidation.compare) (both splits, every case, three repeats) whose"
            " recomputed gates pass and whose code, corpus, scorer, runner, provider, model, prompts, schemas and"
            f" policy are the running ones ({reason}{where}); use the reviewed mode")


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

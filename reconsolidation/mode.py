"""The commit mode: what state a validated proposal is recorded in.

``reviewed`` (the default, ADR-0174): proposals are recorded ``proposed`` — pending,
excluded from recall — until the owner approves their current revision. ``unattended``
would commit directly, but it is gated by release evidence
(AGENT_MEMORY_RECONSOLIDATION_EVIDENCE) whose verification arrives with issue 6; until
then it is refused with an error that names that setting. Read at call time so a
deployment change takes effect at once.
"""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

MODES = ("reviewed", "unattended")


class UnattendedRefused(ImproperlyConfigured):
    def __init__(self) -> None:
        super().__init__(
            "AGENT_MEMORY_RECONSOLIDATION_MODE=unattended is refused: it requires verified release evidence"
            " (AGENT_MEMORY_RECONSOLIDATION_EVIDENCE), which is not available yet; use the reviewed mode")


def unattended_evidence_verified() -> bool:
    """Issue 6 supplies the verification of AGENT_MEMORY_RECONSOLIDATION_EVIDENCE."""
    return False


def current_mode() -> str:
    mode = getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_MODE", "reviewed") or "reviewed"
    if mode not in MODES:
        raise ImproperlyConfigured(f"AGENT_MEMORY_RECONSOLIDATION_MODE must be one of {', '.join(MODES)}")
    if mode == "unattended" and not unattended_evidence_verified():
        raise UnattendedRefused()
    return mode


def recorded_state() -> str:
    """The state a newly validated proposal is recorded in."""
    return "committed" if current_mode() == "unattended" else "proposed"

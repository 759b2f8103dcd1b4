"""The closed value tables of memory-bank@1, shared by models, import, API and services."""
from __future__ import annotations

import re

EVENT_KINDS = ("user.message.created", "assistant.message.created", "tool.result", "scheduled.message")
BELIEF_TYPES = (
    "attribute", "resource", "preference", "constraint", "relationship", "goal",
    "project", "decision", "routine", "event", "fact",
)
CLAIM_KINDS = ("claim",)
POLARITIES = ("affirmed", "negated")
DERIVATIONS = ("explicit", "extracted", "inferred")
AUTHORITIES = ("USER", "AFFIRMED", "EXTRACTED", "INFERRED")
SENSITIVITIES = ("public", "internal", "sensitive", "restricted")  # ascending
STATUSES = ("active", "retracted", "expired", "deleted")
SESSION_SCOPE_KINDS = ("user", "project", "session")
# The shared scope: what the owner said anywhere. Every other scope (a project, a session) is
# local, and sees the shared scope's portable originals besides its own.
SHARED_SCOPE = "user"

SENSITIVITY_RANK = {name: rank for rank, name in enumerate(SENSITIVITIES)}

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
PERSON_REF = re.compile(rf"^person:({_UUID})$")
SPEAKER = re.compile(rf"^(owner|assistant|tool|person:{_UUID})$")
ATTRIBUTION = re.compile(rf"^(owner|person:{_UUID})$")
SCOPE = re.compile(rf"^(user|project:[A-Za-z0-9][A-Za-z0-9._-]{{0,99}}|session:{_UUID})$")


def sensitivity_within(value: str, ceiling: str) -> bool:
    return SENSITIVITY_RANK[value] <= SENSITIVITY_RANK[ceiling]


def choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(v, v) for v in values]

"""What counts as the owner's own evidence: the one definition every reader of provenance shares.

A belief's provenance (``MemorySource``) cites exact event parts, but only some events are
the owner's own word: an authenticated owner ``user.message.created`` event that is neither
excluded (email-style exclusion keeps the event for provenance, never as evidence) nor
erased. Assistant, tool and scheduled content, other speakers' messages and attachments
never are. Reconsolidation's eligibility, its request builder and recall's source excerpts
all ask this question; they take the answer from here so it cannot drift between them.

Pure values and SQL text only: nothing here reads or writes a row.
"""
from __future__ import annotations

OWNER_EVIDENCE_KIND = "user.message.created"
OWNER_EVIDENCE_SPEAKER = "owner"


def owner_message(kind: str, speaker: str) -> bool:
    """Whether an event of this kind and speaker is a message the owner wrote."""
    return kind == OWNER_EVIDENCE_KIND and speaker == OWNER_EVIDENCE_SPEAKER


def admitted_event(alias: str) -> str:
    """SQL: the event row ``alias`` is admitted owner evidence now (owner message, not
    excluded, not erased). Constants only: no value of the caller's is formatted in."""
    return (f"{alias}.kind = '{OWNER_EVIDENCE_KIND}' AND {alias}.speaker = '{OWNER_EVIDENCE_SPEAKER}'"
            f" AND NOT {alias}.excluded AND {alias}.erased_at IS NULL")

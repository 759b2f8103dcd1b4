"""The task-context query former (ADR-0193): queries from the current message and the
turn's working state, deterministic and model-free.

Round one: the current message plus whole working-state fragments — the task, open
questions, unresolved references, then the working-state fragments not marked completed —
each kept only if the query stays within ``RECALL_CONTEXT_QUERY_MAX_BYTES`` UTF-8 bytes (a
fragment is never cut; one that does not fit is left out and the next is tried). A current
message already over the bound keeps the baseline: the message alone. Active entities go to
the structured arm as entity IDs, not into the text.

Round two targets what round one did not find: each unresolved reference on its own, then
the subjects of round one's top results (their siblings share a subject). Every query is
text the caller or the owner's own memories supplied; none is invented, and none repeats an
earlier query.
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

from django.conf import settings
from pydantic import Field

from recall.domain import QUERY_MAX_CHARS, RecallItem, Value

FRAGMENTS_MAX = 16  # of each list in one request
FRAGMENT_MAX_CHARS = 500
ENTITY_MAX_CHARS = 200
SUBJECT_SEEDS = 3  # round one's top results whose subjects round two may search


class WorkingFragment(Value):
    text: str = Field(min_length=1, max_length=FRAGMENT_MAX_CHARS)
    completed: bool = False  # a completed task's fragment is left out


class ContextNeed(Value):
    """What the assistant knows about the turn (never gold answers or labels)."""

    current_message: str = Field(min_length=1, max_length=QUERY_MAX_CHARS)
    task: Optional[str] = Field(default=None, max_length=FRAGMENT_MAX_CHARS)
    unresolved_references: tuple[str, ...] = Field(default=(), max_length=FRAGMENTS_MAX)
    active_entities: tuple[str, ...] = Field(default=(), max_length=FRAGMENTS_MAX)
    open_questions: tuple[str, ...] = Field(default=(), max_length=FRAGMENTS_MAX)
    working_state: tuple[WorkingFragment, ...] = Field(default=(), max_length=FRAGMENTS_MAX)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def fragments(need: ContextNeed) -> list[str]:
    """The working-state fragments in the order the first query admits them."""
    found = [need.task or "", *need.open_questions, *need.unresolved_references,
             *(f.text for f in need.working_state if not f.completed)]
    return [f.strip() for f in found if f and f.strip()]


def first_query(need: ContextNeed) -> str:
    message = need.current_message.strip()
    limit = settings.RECALL_CONTEXT_QUERY_MAX_BYTES
    if _bytes(message) > limit:
        return message  # the baseline path: the message alone
    parts = [message]
    for fragment in fragments(need):
        candidate = " ".join([*parts, fragment])
        if _bytes(candidate) <= limit and _key(fragment) not in _key(" ".join(parts)):
            parts.append(fragment)
    return " ".join(parts)


def second_round(need: ContextNeed, top: Sequence[RecallItem], *, asked: Iterable[str], room: int) -> list[str]:
    """At most ``room`` new queries aimed at missing evidence."""
    seen = {_key(q) for q in asked}
    queries: list[str] = []
    subjects = [item.subject for item in top[:SUBJECT_SEEDS] if item.record_kind == "belief"]
    for text in (*need.unresolved_references, *subjects):
        text = text.strip()[:QUERY_MAX_CHARS]
        if text and _key(text) not in seen and len(queries) < room:
            seen.add(_key(text))
            queries.append(text)
    return queries

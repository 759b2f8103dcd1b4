"""The task-context query former (ADR-0193): queries from the current message and the
turn's working state, deterministic and model-free.

Round one: the baseline, the current message alone — or, with ``RECALL_CONTEXT_TASK_QUERY``
on (ADR-0193's default-off ablation), the message plus whole working-state fragments — the
task, open questions, unresolved references, then the working-state fragments not marked
completed — each kept only if the query stays within ``RECALL_CONTEXT_QUERY_MAX_BYTES``
UTF-8 bytes (a fragment is never cut; one that does not fit is left out and the next is
tried). A current message already over the bound keeps the baseline. Active entities go to
the structured arm as entity IDs, not into the text.

Round two targets what round one did not find. First, the entities of round one's top
results: round one's query again, its structured arm now also matching those entity IDs
(the people and things the best evidence is about, whose other facts the words of the
query may not reach). Then each unresolved reference on its own, then the subjects of
round one's top results (their siblings share a subject). Every query and entity ID is
something the caller or the owner's own memories supplied; none is invented, and no search
repeats an earlier one.
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
ENTITY_SEEDS = 10  # round one's top results whose entity IDs round two searches
ENTITY_MAX = 6  # entity IDs in that search (the turn's active entities first)


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
    if _bytes(message) > limit or not settings.RECALL_CONTEXT_TASK_QUERY:
        return message  # the baseline path: the message alone
    parts = [message]
    for fragment in fragments(need):
        candidate = " ".join([*parts, fragment])
        if _bytes(candidate) <= limit and _key(fragment) not in _key(" ".join(parts)):
            parts.append(fragment)
    return " ".join(parts)


class Search(Value):
    """One planned search: a query and the entity IDs its structured arm matches."""

    query: str
    entity_ids: tuple[str, ...] = ()


def entity_feedback(need: ContextNeed, top: Sequence[RecallItem], *, query: str) -> Optional[Search]:
    """Round one's query with the entity IDs of its top results, or None when they add no
    entity the turn did not already name."""
    named = list(dict.fromkeys(need.active_entities))
    found = [e for item in top[:ENTITY_SEEDS] if item.record_kind == "belief" for e in item.entity_ids]
    entities = list(dict.fromkeys([*named, *found]))[:max(ENTITY_MAX, len(named))]
    if len(entities) == len(named):
        return None
    return Search(query=query, entity_ids=tuple(entities))


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

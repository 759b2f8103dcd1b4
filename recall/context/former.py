"""The task-context query former: queries from the current message and the turn's working
state, deterministic and model-free.

Round one (``first_query``): the current message alone — or, with
``RECALL_CONTEXT_TASK_QUERY`` on (off by default), the message plus whole working-state
fragments (task, open questions, unresolved references, working state not marked completed),
each kept only if the query stays within ``RECALL_CONTEXT_QUERY_MAX_BYTES`` UTF-8 bytes; a
fragment is never cut, and a message already over the bound keeps the baseline. Active
entities go to the structured arm as entity IDs, not into the text.

Round two (``second_round``) targets what round one did not find: the turn's unresolved
references, the entities of round one's top results, and — only when round one ran without
the expansion arm — the subjects of its top results.

Every query and entity ID is something the caller, the message or the owner's own memories
supplied; none is invented, and no search repeats an earlier one.
"""
from __future__ import annotations

from typing import Literal, Optional, Sequence

from django.conf import settings
from pydantic import Field

from recall.context.references import described_roles, message_references
from recall.domain import QUERY_MAX_CHARS, RecallItem, Value

FRAGMENTS_MAX = 16  # of each list in one request
FRAGMENT_MAX_CHARS = 500
ENTITY_MAX_CHARS = 200
REFERENCE_SEARCHES = 2  # unresolved references searched per turn (the caller's first)
ENTITY_SEEDS = 10  # round one's top results whose entity IDs round two searches
ENTITY_MAX = 6  # entity IDs in that search (the turn's active entities first)
SUBJECT_SEEDS = 3  # round one's top results whose subjects round two searches without an expansion arm


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


Purpose = Literal["message", "reference", "entities", "subject"]


class Search(Value):
    """One planned search: a query, the entity IDs its structured arm matches, and what it
    is for (round one searches the ``message``)."""

    query: str
    purpose: Purpose
    entity_ids: tuple[str, ...] = ()


def entity_feedback(need: ContextNeed, top: Sequence[RecallItem], *, query: str) -> Optional[Search]:
    """Round one's query with the entity IDs of its top results, or None when they add no
    entity the turn did not already name."""
    named = list(dict.fromkeys(need.active_entities))
    found = [e for item in top[:ENTITY_SEEDS] if item.record_kind == "belief" for e in item.entity_ids]
    entities = list(dict.fromkeys([*named, *found]))[:max(ENTITY_MAX, len(named))]
    if len(entities) == len(named):
        return None
    return Search(query=query, purpose="entities", entity_ids=tuple(entities))


def second_round(need: ContextNeed, top: Sequence[RecallItem], *, query: str, room: int,
                 subjects: bool) -> list[Search]:
    """At most ``room`` searches aimed at what round one (``query``, its results ``top``)
    did not find, in this order (each adds its best new finds in place of round one's
    lowest-ranked items: ``planner``):

    1. at most REFERENCE_SEARCHES unresolved references, each searched on its own: the
       caller's first, then those the current message makes (``references.message_references``)
       — a possessive phrase ("my male sibling", "my dad's sister") or a description by
       relative clause ("the person who does my bookkeeping"). A question about someone named
       by role asks who that is and a fact about them; the whole question's vector leans on
       the fact asked ("do for a living" draws every job), the reference's on who is meant,
       and that search's expansion arm brings the referent's other facts. A reference that is
       the whole of what the message asks about ("What's my job now?") is not searched again.
       A description is followed by a search for the role nouns whose WordNet gloss it
       matches (``references.described_roles``: "the guy who repairs my car", then
       "mechanic"), within the same bound: the memory that names the role ("Joost is my
       mechanic") may share no word with the description, and searched on its own the role
       is the whole query, not one word beside the description's;
    2. the entity search (``entity_feedback``): round one's query again, its structured arm
       now also matching the entity IDs of round one's top results;
    3. only with ``subjects`` (round one ran without the expansion arm: keyword-only or
       dense): the subjects of the top results, whose siblings share a subject. In hybrid the
       expansion arm already brings those siblings; there, subject searches found no required
       evidence it had not and displaced better items (the recall diagnostic's development
       split, evals/recall/README.md).
    """
    seen = {_key(query)}
    planned: list[Search] = []

    def plan(text: str, purpose: Purpose) -> None:
        text = text.strip()[:QUERY_MAX_CHARS]
        if text and _key(text) not in seen:
            seen.add(_key(text))
            planned.append(Search(query=text, purpose=purpose))

    for reference in (*need.unresolved_references, *message_references(need.current_message)):
        for text in (reference, described_roles(reference)):
            if len(planned) < REFERENCE_SEARCHES:  # only references are planned so far
                plan(text, "reference")
    feedback = entity_feedback(need, top, query=query)
    if feedback is not None:
        planned.append(feedback)
    if subjects:
        for item in top[:SUBJECT_SEEDS]:
            if item.record_kind == "belief":
                plan(item.subject, "subject")
    return planned[:max(room, 0)]

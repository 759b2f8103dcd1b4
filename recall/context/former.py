"""The task-context query former (ADR-0193): queries from the current message and the
turn's working state, deterministic and model-free.

Round one: the baseline, the current message alone — or, with ``RECALL_CONTEXT_TASK_QUERY``
on (ADR-0193's default-off ablation), the message plus whole working-state fragments — the
task, open questions, unresolved references, then the working-state fragments not marked
completed — each kept only if the query stays within ``RECALL_CONTEXT_QUERY_MAX_BYTES``
UTF-8 bytes (a fragment is never cut; one that does not fit is left out and the next is
tried). A current message already over the bound keeps the baseline. Active entities go to
the structured arm as entity IDs, not into the text.

Round two targets what round one did not find, in this order (both kinds of search add
their best new finds in place of round one's lowest-ranked items: ``planner``):

1. the turn's unresolved references, each searched on its own: the caller's first, then
   those the former finds in the current message (``message_references``) — a possessive
   phrase ("my male sibling", "my dad's sister") or a description by relative clause ("the
   person who does my bookkeeping"). A question about someone named by role asks two things
   at once: who that is, and a fact about them; the whole question's vector leans on the
   fact asked ("do for a living" draws every job), the reference's on who is meant, and
   that search's expansion arm brings the referent's other facts. A reference that is the
   whole of what the message asks about ("What's my job now?") is not searched again;
2. the entities of round one's top results: round one's query again, its structured arm
   now also matching those entity IDs (the people and things the best evidence is about,
   whose other facts the words of the query may not reach).

The subjects of round one's top results are not searched apart: every search's expansion
arm already brings the same-subject siblings of its top results (``recall.expansion``).
Measured on the diagnostic's development split, a subject search per top result found no
required evidence the expansion had not, and cost 2.7 points of rendered recall when its
finds took round one's places (0 points, but 28 % more unrelated items, when they only
filled room the relevance floor had left).

Every query and entity ID is something the caller, the message or the owner's own memories
supplied; none is invented, and no search repeats an earlier one.
"""
from __future__ import annotations

import re
from typing import Literal, Optional, Sequence

from django.conf import settings
from pydantic import Field

from recall.domain import QUERY_MAX_CHARS, RecallItem, Value

FRAGMENTS_MAX = 16  # of each list in one request
FRAGMENT_MAX_CHARS = 500
ENTITY_MAX_CHARS = 200
REFERENCE_SEARCHES = 2  # unresolved references searched per turn (the caller's first)
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


Purpose = Literal["message", "reference", "entities"]


class Search(Value):
    """One planned search: a query, the entity IDs its structured arm matches, and what it
    is for (round one searches the ``message``)."""

    query: str
    purpose: Purpose
    entity_ids: tuple[str, ...] = ()


# Words that end a reference phrase: function words (articles, auxiliaries, prepositions,
# conjunctions, pronouns, question words) and a few adverbs of time and degree. A phrase
# runs from its opening word over the words that are none of these.
_FUNCTION_WORDS = frozenset("""
a an the this that these those and or but nor so if then than as
is are was were be been being am do does did done doing have has had having
can could will would shall should may might must
in on at for with from to of about by under over into onto through during before after since
until without within between among against toward towards around near across behind beyond
above below beside up down off out
who whom whose which what where when why how whether
i me you he him she her it we us they them my your his its our their mine yours
not no never still already now usually often always ever just also too very really
here there today tomorrow yesterday
""".split())
_RELATIVE = frozenset({"who", "whom", "that"})
_DETERMINERS = frozenset({"the", "a", "an"})
_HEAD_WORDS_MAX = 3  # "the <at most three words> who ...": the description's head
# In a question with its verb inverted ("Where does my sister live?", "Which city is my
# sibling based in?") a phrase runs on into the main verb; it ends before that verb when the
# phrase follows one of these and the verb is not itself a function word.
_AUXILIARIES = frozenset("do does did can could will would shall should may might must".split())
_COPULAS = frozenset("is are was were".split())
_VERBS = _AUXILIARIES | _COPULAS | frozenset("am be been being done doing have has had having".split())
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*|[^\w\s]")


def _is_word(token: str) -> bool:
    return token[0].isalnum()


def _function(token: str) -> bool:
    """A function word, or a contraction of one ("what's", "I'm", "don't")."""
    word = token.lower().replace("’", "'")
    return word in _FUNCTION_WORDS or word.split("'")[0] in _FUNCTION_WORDS or word.endswith("n't")


def _content(tokens: Sequence[str]) -> set[str]:
    return {t.lower() for t in tokens if _is_word(t) and not _function(t)}


def message_references(message: str) -> list[str]:
    """The references a message makes that a search can resolve, in message order:
    "my" and the words after it up to the next function word ("my male sibling", "my dad's
    sister"), and a definite or indefinite description by relative clause, up to the end
    of its clause ("the person who does my bookkeeping reside" → "the person who does my
    bookkeeping reside": trailing function words are dropped, other words kept — the
    search reads meaning, not grammar). A reference holding every content word of the
    message is left out: searching it would repeat round one. In an inverted question the
    main verb after the phrase is not part of it (``_without_inverted_verb``). Deterministic,
    English only; a message without such phrases has none."""
    tokens = _TOKEN.findall(message)
    found: list[str] = []
    i = 0
    while i < len(tokens):
        word = tokens[i].lower()
        end, core = i + 1, i + 1
        if word == "my":
            while end < len(tokens) and _is_word(tokens[end]) and not _function(tokens[end]):
                end += 1
        elif word in _DETERMINERS:
            head = end
            while head < len(tokens) and head <= i + _HEAD_WORDS_MAX and _is_word(tokens[head]) \
                    and not _function(tokens[head]):
                head += 1
            if head > i + 1 and head < len(tokens) and tokens[head].lower() in _RELATIVE:
                end = core = head + 1
                while end < len(tokens) and _is_word(tokens[end]):
                    end += 1
                while end > head + 1 and _function(tokens[end - 1]):
                    end -= 1
                if end == head + 1:
                    end = i + 1
        if end > i + 1:
            end = _without_inverted_verb(tokens, i, end, core=core)
            phrase = tokens[i:end]
            if _content(tokens) - _content(phrase):
                found.append(" ".join(phrase))
            i = end
        else:
            i += 1
    return found


def _without_inverted_verb(tokens: Sequence[str], start: int, end: int, *, core: int) -> int:
    """The end of the phrase ``tokens[start:end]`` without the main verb of an inverted
    question: its last word goes when the phrase follows an auxiliary ("does my sister
    live") — or a copula and that word ends in "-ed" ("is my sibling based") — unless a
    verb follows the phrase ("does my brother do") or nothing of its core (the words from
    ``core`` on: after "my", after the relative pronoun) would be left."""
    before = tokens[start - 1].lower() if start > 0 else ""
    after = tokens[end].lower() if end < len(tokens) else ""
    last = tokens[end - 1].lower()
    if after in _VERBS or not _content(tokens[core:end - 1]):
        return end
    if before in _AUXILIARIES or (before in _COPULAS and last.endswith("ed")):
        return end - 1
    return end


def entity_feedback(need: ContextNeed, top: Sequence[RecallItem], *, query: str) -> Optional[Search]:
    """Round one's query with the entity IDs of its top results, or None when they add no
    entity the turn did not already name."""
    named = list(dict.fromkeys(need.active_entities))
    found = [e for item in top[:ENTITY_SEEDS] if item.record_kind == "belief" for e in item.entity_ids]
    entities = list(dict.fromkeys([*named, *found]))[:max(ENTITY_MAX, len(named))]
    if len(entities) == len(named):
        return None
    return Search(query=query, purpose="entities", entity_ids=tuple(entities))


def second_round(need: ContextNeed, top: Sequence[RecallItem], *, query: str, room: int) -> list[Search]:
    """At most ``room`` searches aimed at what round one (``query``, its results ``top``)
    did not find: at most REFERENCE_SEARCHES unresolved references (the caller's, then the
    message's own), then the entity search."""
    seen = {_key(query)}
    planned: list[Search] = []
    for text in (*need.unresolved_references, *message_references(need.current_message)):
        text = text.strip()[:QUERY_MAX_CHARS]
        if text and _key(text) not in seen and len(planned) < REFERENCE_SEARCHES:
            seen.add(_key(text))
            planned.append(Search(query=text, purpose="reference"))
    feedback = entity_feedback(need, top, query=query)
    if feedback is not None:
        planned.append(feedback)
    return planned[:max(room, 0)]

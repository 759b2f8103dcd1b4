"""The context planner: the former's queries run through the retriever — at most
``RECALL_CONTEXT_MAX_SEARCHES`` searches in at most ``RECALL_CONTEXT_MAX_ROUNDS`` rounds —
under one deadline (``RECALL_CONTEXT_DEADLINE_SECONDS``) and one shared allowance of items
and tokens (the request's, at most the search defaults), rendered once.

Round one is the task-context query. Round two first searches the entities of round one's
top results (``former.entity_feedback``): the same query, so the same query vector and
round one's semantic list (``retriever.recall``'s ``semantic_from``), with more structured
evidence; its order leads the merge, round one's other finds follow it, so
it reorders what round one found and never loses it. It runs whenever the deadline allows,
even with the allowance full, since reordering is its point. The former's other
missing-evidence queries (unresolved references, top subjects) then run only while the
deadline and the allowance leave room, one search each. (Holding part
of the allowance back for round two was measured on the diagnostic's development split and
removed: round one's ranks 16-20 held more required evidence than round two's finds.) Every search
is an ordinary recall (surface ``context``, its own content-free trace) with the turn's
ceiling, instant and hard filters; their items are merged — the entity search's, then
round one's, then the rest first-found first — duplicates dropped, and rendered together
within the allowance. A search is never cut short, so the
deadline is checked before each one: a search that would start past it is not run.

When the deadline or the allowance stops planned work — or the allowance leaves found items
out — the context ends with an explicit limitation notice, so the assistant knows memory
may hold more. Correction notices (``corrections``) follow it whatever the allowance: a
found original whose statement the owner corrected is never silently left out. The trace returned with the context holds counts, channels, trace IDs and
times only: never a query or a memory's text.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Literal, Optional
from uuid import UUID

from django.conf import settings

from recall import retriever
from recall.context import corrections
from recall.context.former import ContextNeed, entity_feedback, first_query, second_round
from recall.domain import RecallItem, RecallRequest, RecallResult
from recall.render import render
from veetbot.identity import Principal

Stop = Literal["", "deadline", "allowance"]
LIMITATION = {
    "deadline": "[limitation] Memory recall stopped at its time limit; other relevant memories may exist.",
    "allowance": "[limitation] Memory recall used its whole item and token allowance; other relevant "
                 "memories may exist.",
}


@dataclass(frozen=True)
class SearchTrace:
    round: int
    trace_id: Optional[UUID]
    channel: str
    fallback_reason: str
    returned: int  # items this search rendered within the allowance
    new: int  # of those, items no earlier search had found
    elapsed_ms: float


@dataclass(frozen=True)
class ContextResult:
    context: str  # rendered items, then any limitation notice, then any correction notices
    items: tuple[RecallItem, ...]
    tokens: int
    notices: tuple[str, ...]
    searches: tuple[SearchTrace, ...]
    planned: int  # searches the former proposed
    stopped: Stop
    deadline_ms: float
    elapsed_ms: float
    rounds: int
    # Every search's candidate and ranked originals, first-found first, each once: what the
    # diagnostic scores per stage (never rendered or returned by a surface).
    candidate_ids: tuple[UUID, ...] = ()
    ranked_ids: tuple[UUID, ...] = ()


def assemble(principal: Principal, need: ContextNeed, *, filters: dict, max_items: int, max_tokens: int,
             now: datetime, monotonic: Callable[[], float] = time.monotonic,
             encoder=retriever.DEFAULT_ENCODER) -> ContextResult:
    """One turn's context. ``filters``: the RecallRequest fields every search shares
    (ceiling, as_of, scope, belief_types, exclude_ids, selection_mode)."""
    started = monotonic()
    deadline_s = float(settings.RECALL_CONTEXT_DEADLINE_SECONDS)
    ceiling = int(settings.RECALL_CONTEXT_MAX_SEARCHES)
    found: dict[UUID, RecallItem] = {}
    ranked: list[UUID] = []  # every search's permitted ranked originals, for correction notices
    candidates: list[UUID] = []
    traces: list[SearchTrace] = []
    stopped: Stop = ""
    planned = 1

    def search(query: str, round_: int, *, lead: bool = False, semantic_from=None, **extra) -> RecallResult:
        """Run one search; ``lead``: its items go before everything found so far."""
        nonlocal found
        began = monotonic()
        request = RecallRequest(query=query, max_items=max_items, max_tokens=max_tokens, **filters, **extra)
        result = retriever.recall(principal=principal, surface="context", now=now, encoder=encoder,
                                  request=request, semantic_from=semantic_from)
        ranked.extend(result.stages.ranked_ids)
        candidates.extend(result.stages.candidate_ids)
        new = [item for item in result.items if item.id not in found]
        if lead:
            found = {**{item.id: item for item in result.items}, **found}
        else:
            found.update((item.id, item) for item in new)
        traces.append(SearchTrace(round=round_, trace_id=result.trace_id, channel=result.channel,
                                  fallback_reason=result.fallback_reason, returned=len(result.items),
                                  new=len(new), elapsed_ms=(monotonic() - began) * 1000.0))
        return result

    query = first_query(need)
    first = search(query, 1, entity_ids=tuple(need.active_entities))
    rounds = 1
    if int(settings.RECALL_CONTEXT_MAX_ROUNDS) >= 2 and ceiling > 1:
        feedback = entity_feedback(need, first.items, query=query)
        queries = second_round(need, first.items, asked=[first.query], room=ceiling - 1 - (feedback is not None))
        planned += len(queries) + (feedback is not None)
        # The entity search repeats round one's query: round one's semantic list is reused.
        plan = [(feedback.query, {"lead": True, "entity_ids": feedback.entity_ids,
                                  "semantic_from": first.semantic_list})] if feedback else []
        for text, extra in [*plan, *((q, {}) for q in queries)]:
            if monotonic() - started >= deadline_s:
                stopped = "deadline"
                break
            if not extra and _full(found, max_items=max_items, max_tokens=max_tokens):
                stopped = "allowance"
                break
            search(text, 2, **extra)
            rounds = 2
    rendered = _render(found, max_items=max_items, max_tokens=max_tokens)
    if not stopped and _left_out(found, rendered.items):
        stopped = "allowance"  # found more than the allowance could render
    corrected = corrections.corrections(principal, ranked, now=filters.get("as_of") or now)
    notices = ((LIMITATION[stopped],) if stopped else ()) + corrections.notices(
        corrected, {item.id for item in rendered.items})
    context = "\n".join(filter(None, [rendered.text, *notices]))
    return ContextResult(
        context=context, items=rendered.items, tokens=rendered.tokens, notices=notices, searches=tuple(traces),
        planned=planned, stopped=stopped, deadline_ms=deadline_s * 1000.0,
        elapsed_ms=(monotonic() - started) * 1000.0, rounds=rounds,
        candidate_ids=tuple(dict.fromkeys(candidates)), ranked_ids=tuple(dict.fromkeys(ranked)))


def _admit(item: RecallItem, kept) -> bool:
    """A summary or connection found by one search may repeat an original another search
    rendered: it is left out, as within one recall (``read_paths`` repeat rule)."""
    if item.record_kind == "belief":
        return True
    atoms = {k.id for k in kept} | {i for k in kept for c in k.clauses for i in c.source_ids}
    return not any(atoms.intersection(c.source_ids) for c in item.clauses)


def _render(found: dict, *, max_items: int, max_tokens: int):
    return render(found.values(), max_items=max_items, max_tokens=max_tokens, admit=_admit)


def _full(found: dict, *, max_items: int, max_tokens: int) -> bool:
    """Whether the items found so far already use the whole allowance: the item count is
    reached, or some found item no longer fits."""
    rendered = _render(found, max_items=max_items, max_tokens=max_tokens)
    return len(rendered.items) >= max_items or bool(_left_out(found, rendered.items))


def _left_out(found: dict, kept) -> list[RecallItem]:
    """Found items the allowance left out (not those the repeat rule refused)."""
    chosen = {k.id for k in kept}
    return [i for i in found.values() if i.id not in chosen and _admit(i, kept)]

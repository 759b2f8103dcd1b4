"""The context planner: the former's queries run through the retriever — at most
``RECALL_CONTEXT_MAX_SEARCHES`` searches in at most ``RECALL_CONTEXT_MAX_ROUNDS`` rounds —
under one deadline (``RECALL_CONTEXT_DEADLINE_SECONDS``) and one shared allowance of items
and tokens (the request's, at most the search defaults), rendered once.

Round one (the base) is the turn's query. Each round-two search (``former.second_round``)
adds the new items among its first ``RECALL_CONTEXT_DELTA_ITEMS`` in place of round one's
lowest-ranked items, round two together at most half of the item allowance: round one's
tail is where its order is least sure, and a search aimed at a named gap ("my male sibling")
ranks its answer where the whole question did not. The entity search repeats round one's
query, so its semantic list is reused (``retriever.recall``'s ``semantic_from``).

Every search is an ordinary recall (surface ``context``, its own content-free trace) with
the turn's ceiling, instant and hard filters. A search is never cut short, so the deadline
is checked before each one. When the deadline or the allowance stops planned work — or the
allowance leaves found items out — the context ends with an explicit limitation notice;
correction notices (``corrections``) follow it whatever the allowance. The returned trace
holds counts, channels, trace IDs and times only: never a query or a memory's text.
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
from recall.context.former import ContextNeed, Purpose, first_query, second_round
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
    purpose: Purpose  # message (round one), reference, entities, subject
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
    # The rendered items alone (the header and their lines, no notice): what a conversation
    # snapshot freezes as its prefix (recall.snapshots).
    rendered: str = ""


def assemble(principal: Principal, need: ContextNeed, *, filters: dict, max_items: int, max_tokens: int,
             now: datetime, monotonic: Callable[[], float] = time.monotonic,
             encoder=retriever.DEFAULT_ENCODER, frozen: bool = False) -> ContextResult:
    """One turn's context. ``filters``: the RecallRequest fields every search shares
    (ceiling, as_of, scope, belief_types, exclude_ids, selection_mode). ``frozen``: the
    rendering becomes a conversation's frozen prefix, so no search offers source excerpts
    (``recall.excerpts``); otherwise the items keep the excerpts their searches found and the
    shared allowance re-budgets them with the items."""
    started = monotonic()
    deadline_s = float(settings.RECALL_CONTEXT_DEADLINE_SECONDS)
    ceiling = int(settings.RECALL_CONTEXT_MAX_SEARCHES)
    ranked: list[UUID] = []  # every search's permitted ranked originals, for correction notices
    candidates: list[UUID] = []
    traces: list[SearchTrace] = []
    merged = ContextOrder(max_items=max_items)
    stopped: Stop = ""

    def search(query: str, round_: int, purpose: Purpose, entity_ids: tuple[str, ...],
               semantic_from=None) -> RecallResult:
        began = monotonic()
        request = RecallRequest(query=query, max_items=max_items, max_tokens=max_tokens, entity_ids=entity_ids,
                                **filters)
        result = retriever.recall(principal=principal, surface="context", now=now, encoder=encoder,
                                  request=request, semantic_from=semantic_from, frozen=frozen)
        ranked.extend(result.stages.ranked_ids)
        candidates.extend(result.stages.candidate_ids)
        traces.append(SearchTrace(round=round_, purpose=purpose, trace_id=result.trace_id, channel=result.channel,
                                  fallback_reason=result.fallback_reason, returned=len(result.items),
                                  new=merged.new_count(result.items), elapsed_ms=(monotonic() - began) * 1000.0))
        return result

    query = first_query(need)
    first = search(query, 1, "message", tuple(need.active_entities))
    merged.base(first.items)
    planned, rounds = 1, 1
    if int(settings.RECALL_CONTEXT_MAX_ROUNDS) >= 2 and ceiling > 1:
        # Without round one's expansion arm, round two also searches its top results' subjects.
        plan = second_round(need, first.items, query=query, room=ceiling - 1,
                            subjects=not first.stages.expanded)
        planned += len(plan)
        for step in plan:
            if monotonic() - started >= deadline_s:
                stopped = "deadline"
                break
            if not merged.has_room():
                stopped = "allowance"
                break
            # The entity search repeats round one's query: round one's semantic list is reused.
            reused = first.semantic_list if step.query == query else None
            result = search(step.query, 2, step.purpose, step.entity_ids, semantic_from=reused)
            merged.add(result.items)
            rounds = 2
    rendered = merged.render(max_tokens=max_tokens)
    if not stopped and merged.left_out(rendered.items):
        stopped = "allowance"  # found more than the allowance could render
    corrected = corrections.corrections(principal, ranked, now=filters.get("as_of") or now)
    notices = ((LIMITATION[stopped],) if stopped else ()) + corrections.notices(
        corrected, {item.id for item in rendered.items})
    context = "\n".join(filter(None, [rendered.text, *notices]))
    return ContextResult(
        context=context, items=rendered.items, tokens=rendered.tokens, notices=notices, searches=tuple(traces),
        planned=planned, stopped=stopped, deadline_ms=deadline_s * 1000.0,
        elapsed_ms=(monotonic() - started) * 1000.0, rounds=rounds,
        candidate_ids=tuple(dict.fromkeys(candidates)), ranked_ids=tuple(dict.fromkeys(ranked)),
        rendered=rendered.text)


class ContextOrder:
    """The items of one assembly in context order: round one's (the base), with round two's
    finds (the delta: the new items among each search's first RECALL_CONTEXT_DELTA_ITEMS,
    at most ``max_items // 2`` in all) in place of the base's tail."""

    def __init__(self, *, max_items: int) -> None:
        self.max_items = max_items
        self.delta_max = max_items // 2
        self._base: list[RecallItem] = []
        self._delta: list[RecallItem] = []

    def new_count(self, items) -> int:
        seen = {i.id for i in (*self._base, *self._delta)}
        return sum(1 for i in items if i.id not in seen)

    def base(self, items) -> None:
        self._base = list(items)

    def has_room(self) -> bool:
        return len(self._delta) < self.delta_max

    def add(self, items) -> None:
        seen = {i.id for i in (*self._base, *self._delta)}
        top = [i for i in items[:int(settings.RECALL_CONTEXT_DELTA_ITEMS)] if i.id not in seen]
        self._delta += top[:self.delta_max - len(self._delta)]

    def ordered(self) -> list[RecallItem]:
        cut = self.max_items - len(self._delta)
        return [*self._base[:cut], *self._delta, *self._base[cut:]]

    def render(self, *, max_tokens: int):
        return render(self.ordered(), max_items=self.max_items, max_tokens=max_tokens, admit=_admit)

    def left_out(self, kept) -> list[RecallItem]:
        """Found items the allowance left out (not those the repeat rule refused)."""
        chosen = {k.id for k in kept}
        return [i for i in self.ordered() if i.id not in chosen and _admit(i, kept)]


def _admit(item: RecallItem, kept) -> bool:
    """A summary or connection found by one search may repeat an original another search
    rendered: it is left out, as within one recall (``read_paths`` repeat rule)."""
    if item.record_kind == "belief":
        return True
    atoms = {k.id for k in kept} | {i for k in kept for c in k.clauses for i in c.source_ids}
    return not any(atoms.intersection(c.source_ids) for c in item.clauses)

"""Writes of conversation snapshots: a conversation's turns and the assistant's citation reports.

``conversation_turn`` — the first turn of a conversation runs the ordinary context assembly
(``recall.context.planner``) and freezes its rendered records as the prefix (one snapshot per
conversation: the session row is locked first, so two first turns serialize and the second
becomes turn two). Every later turn answers the same prefix bytes plus a turn context: its own
assembly with the prefix's originals excluded (a hard filter; derived items the prefix holds
are left out after), the limitation notice, then the corrections of everything the
conversation was given (``corrections``). A new conversation snapshots the current state; no
turn reads the past (``as_of``). Source excerpts (``recall.excerpts``, off by default) never
enter the frozen prefix; a later turn's new items carry theirs in its turn context. A turn takes no Idempotency-Key: like context assembly it is
a read, recording only content-free references, digests and trace IDs.

``citation_report`` — what the assistant's answer for one turn cited, once per Idempotency-Key.
A citation is the item's UUID or a prefix of it (at least RECALL_CITATION_SHORT_ID_MIN_CHARS);
it resolves against what that turn gave the model (the prefix and that turn's context) and
nothing else, so another owner's IDs — and the owner's own that the turn did not give — are
not_found with the field named, and nothing is written. A short ID naming two items is
ambiguous and credits nothing; an item the turn's corrections say no longer holds is
unavailable; an item already credited for the turn is repeated. Only a faithful, unambiguous
citation of a still-valid item is credited: the cited item's bounded utility and last use —
an original's through ``memory_record_usage``, a derived item's through the port
reconsolidation registers — never the supports of a derived item, nor any evidence time,
expiry, content revision or store position.
"""
from __future__ import annotations

import time
from datetime import datetime
from typing import Callable, Optional, Sequence
from uuid import UUID

from django.conf import settings

from memory.errors import Conflict, Invalid, MissingReference, NotFound, StateConflict
from memory.models import Session
from memory.services.originals import memory_record_usage
from memory.services.owner_state import lock_owner
from memory.services import receipts
from memory.services.receipts import receipt_record, receipt_replay
from recall import hooks, retriever
from recall.context import planner
from recall.context.former import ContextNeed
from recall.models import CitationReport, ContextSnapshot, ContextTurn
from recall.render import render
from recall.snapshots import corrections, selectors
from recall.snapshots.domain import (
    PREFIX_TURN, CitationReportView, CitedItem, Correction, FrozenItem, TurnView,
)
from recall.traces import rendered_sha256
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

RESOURCE_KIND = "citation_report"  # receipts of citation reports
SHARED_FILTERS = ("ceiling", "scope", "selection_mode", "belief_types")  # fixed by the first turn


class TurnLimitReached(Conflict):
    api_field = "turn"
    api_problem = "limit_reached"

    def __init__(self) -> None:
        super().__init__("conversation turn limit reached")


def _owner(principal: Principal) -> dict:
    return {"tenant_id": principal.tenant_id, "principal_id": principal.principal_id}


def _trace_ids(result: planner.ContextResult) -> list[UUID]:
    return [s.trace_id for s in result.searches if s.trace_id is not None]


def _dump(items: Sequence[FrozenItem]) -> list[dict]:
    return [item.model_dump(mode="json") for item in items]


def conversation_turn(*, principal: Principal, session_id: UUID, need: ContextNeed, filters: dict, max_items: int,
                      max_tokens: int, now: Optional[datetime] = None, encoder=retriever.DEFAULT_ENCODER,
                      monotonic: Callable[[], float] = time.monotonic) -> TurnView:
    """One turn of a conversation (see the module docstring). ``filters``: ceiling, scope,
    belief_types, exclude_ids, selection_mode — all but the exclusions fixed by the first turn
    (a later turn naming others is a ``StateConflict``: the conversation is frozen with them)."""
    now = now or utcnow()
    filters = {**filters, "as_of": None}
    with owner_context(principal):
        if not Session.objects.select_for_update().filter(id=session_id, erased_at__isnull=True).exists():
            raise NotFound("session")
        snapshot = ContextSnapshot.objects.select_for_update().filter(session_id=session_id).first()
        run = dict(need=need, max_items=max_items, max_tokens=max_tokens, now=now, encoder=encoder,
                   monotonic=monotonic)
        if snapshot is None:
            return _first_turn(principal, session_id, filters, **run)
        return _later_turn(principal, snapshot, filters, **run)


def _first_turn(principal: Principal, session_id: UUID, filters: dict, *, need, max_items, max_tokens, now, encoder,
                monotonic) -> TurnView:
    # The prefix is frozen: it never carries source excerpts (new evidence belongs in the
    # turn context, where a later turn's new items may carry theirs).
    result = planner.assemble(principal, need, filters=filters, max_items=max_items, max_tokens=max_tokens, now=now,
                              monotonic=monotonic, encoder=encoder, frozen=True)
    items = [FrozenItem.of(item) for item in result.items]
    snapshot = ContextSnapshot.objects.create(
        **_owner(principal), session_id=session_id, created_at=now, prefix=result.rendered,
        prefix_sha256=rendered_sha256(result.rendered), prefix_tokens=result.tokens, items=_dump(items),
        frozen_ids=list(dict.fromkeys(i for item in items for i in (item.id, *item.support_ids))),
        ceiling=filters["ceiling"], scope=filters["scope"], selection_mode=filters["selection_mode"],
        belief_types=list(filters["belief_types"]), turns=PREFIX_TURN, trace_ids=_trace_ids(result),
    )
    # The first turn's context is the prefix; its notices (a limitation, corrections of found
    # originals) are about this turn only, so they are its turn context, not frozen.
    context = "\n".join(result.notices)
    ContextTurn.objects.create(**_owner(principal), snapshot=snapshot, turn=PREFIX_TURN, created_at=now,
                               context_sha256=rendered_sha256(context))
    return TurnView(turn=PREFIX_TURN, snapshot=selectors.snapshot_view(snapshot), context=context, tokens=0,
                    items=(), corrections=(), notices=result.notices, assembly=result)


def _check_shared_filters(snapshot: ContextSnapshot, filters: dict) -> None:
    frozen = {"ceiling": snapshot.ceiling, "scope": snapshot.scope, "selection_mode": snapshot.selection_mode,
              "belief_types": tuple(snapshot.belief_types)}
    differing = [f"{name}: differs_from_snapshot" for name in SHARED_FILTERS
                 if (tuple(filters[name]) if name == "belief_types" else filters[name]) != frozen[name]]
    if differing:
        raise StateConflict(differing)


def _later_turn(principal: Principal, snapshot: ContextSnapshot, filters: dict, *, need, max_items, max_tokens, now,
                encoder, monotonic) -> TurnView:
    _check_shared_filters(snapshot, filters)
    if snapshot.turns >= int(settings.RECALL_SNAPSHOT_MAX_TURNS):
        raise TurnLimitReached()
    turn = snapshot.turns + 1
    prefix = selectors.frozen_items(snapshot.items)
    found = corrections.frozen_corrections(principal, selectors.delivered(snapshot, through_turn=turn),
                                           ceiling=snapshot.ceiling, scope=snapshot.scope, now=now)
    held = {item.id for item in prefix}
    excluded = tuple(dict.fromkeys([*filters["exclude_ids"], *(i.id for i in prefix if i.record_kind == "belief")]))
    result = planner.assemble(principal, need, filters={**filters, "exclude_ids": excluded}, max_items=max_items,
                              max_tokens=max_tokens, now=now, monotonic=monotonic, encoder=encoder)
    rendered = render([item for item in result.items if item.id not in held], max_items=max_items,
                      max_tokens=max_tokens)
    limitation = result.notices[:1] if result.stopped else ()
    notices = (*limitation, *corrections.notices(found), *result.notices[len(limitation):])
    context = "\n".join(filter(None, [rendered.text, *notices]))
    ContextTurn.objects.create(
        **_owner(principal), snapshot=snapshot, turn=turn, created_at=now,
        items=_dump([FrozenItem.of(item) for item in rendered.items]),
        corrections=[{"id": str(c.id), "reason": c.reason} for c in found],
        context_sha256=rendered_sha256(context), trace_ids=_trace_ids(result),
    )
    snapshot.turns = turn
    snapshot.save(update_fields=["turns"])
    return TurnView(turn=turn, snapshot=selectors.snapshot_view(snapshot), context=context, tokens=rendered.tokens,
                    items=rendered.items, corrections=tuple(found), notices=notices, assembly=result)


# --- citations ---------------------------------------------------------------------------

def _report_view(row: CitationReport, session_id: UUID, turn: int) -> CitationReportView:
    return CitationReportView(id=row.id, session_id=session_id, turn=turn, created_at=row.created_at,
                              citations=tuple(CitedItem.model_validate(c) for c in row.outcomes))


def citation_request_sha256(*, session_id: UUID, turn: int, citations: Sequence[str]) -> str:
    """What makes two reports the same request (the receipt's digest): the route, the turn
    and the citations as normalized (case and surrounding spaces do not matter)."""
    return receipts.request_sha256(route="sessions.turns.citations",
                                   params={"session_id": str(session_id), "turn": turn},
                                   body={"citations": [c.strip().lower() for c in citations]})


def _check_citations(citations: Sequence[str]) -> list[str]:
    bound, shortest = int(settings.RECALL_CITATIONS_MAX_PER_REPORT), int(settings.RECALL_CITATION_SHORT_ID_MIN_CHARS)
    if not 1 <= len(citations) <= bound:
        raise Invalid(f"citations: must hold 1-{bound} citations")
    normal = [c.strip().lower() for c in citations]
    bad = [f"citations[{n}]: invalid" for n, c in enumerate(normal)
           if not shortest <= len(c) <= 36 or any(ch not in "0123456789abcdef-" for ch in c)]
    if bad:
        raise Invalid(bad)
    return normal


def citation_report(*, principal: Principal, session_id: UUID, turn: int, citations: Sequence[str],
                    idempotency_key: str, now: Optional[datetime] = None) -> tuple[CitationReportView, bool]:
    """Record and credit one report (see the module docstring): (the report, replayed)."""
    normal = _check_citations(citations)
    now = now or utcnow()
    request = citation_request_sha256(session_id=session_id, turn=turn, citations=normal)
    with owner_context(principal):
        lock_owner(principal)
        receipt = receipt_replay(idempotency_key, request, RESOURCE_KIND)
        snapshot = selectors.conversation_snapshot(session_id)
        turn_row = ContextTurn.objects.filter(snapshot_id=snapshot.id, turn=turn).first()
        if receipt is not None:
            report = CitationReport.objects.filter(id=receipt.resource_id).first()
            if report is None or turn_row is None:
                raise NotFound("citation report")
            return _report_view(report, session_id, turn), True
        if turn_row is None:
            raise NotFound("turn")
        given = selectors.delivered(snapshot, through_turn=turn, only_turn=True)
        outcomes = _resolve(principal, snapshot, turn_row, normal, given, now)
        report = CitationReport.objects.create(**_owner(principal), turn=turn_row, created_at=now,
                                               outcomes=[o.model_dump(mode="json") for o in outcomes])
        _credit(principal, [o for o in outcomes if o.outcome == "credited"], now)
        receipt_record(principal, idempotency_key, request, status_code=200, resource_kind=RESOURCE_KIND,
                       resource_id=report.id, now=now)
        return _report_view(report, session_id, turn), False


def _resolve(principal: Principal, snapshot: ContextSnapshot, turn_row: ContextTurn, citations: Sequence[str],
             given, now: datetime) -> list[CitedItem]:
    by_id: dict[UUID, tuple[int, FrozenItem]] = {}
    for turn, item in given:
        by_id.setdefault(item.id, (turn, item))
    matches = [[i for i in by_id if str(i).startswith(c)] for c in citations]
    missing = [f"citations[{n}]: not_found" for n, found in enumerate(matches) if not found]
    if missing:
        raise MissingReference(missing)
    named = {found[0] for found in matches if len(found) == 1}
    stale: dict[UUID, Correction] = {c.id: c for c in corrections.frozen_corrections(
        principal, [by_id[i] for i in named], ceiling=snapshot.ceiling, scope=snapshot.scope, now=now)}
    credited = {UUID(c["id"]) for outcomes in CitationReport.objects.filter(turn_id=turn_row.id).values_list(
        "outcomes", flat=True) for c in outcomes if c["outcome"] == "credited"}
    outcomes = []
    for citation, found in zip(citations, matches):
        if len(found) > 1:
            outcomes.append(CitedItem(citation=citation, outcome="ambiguous"))
            continue
        item = by_id[found[0]][1]
        outcome = "unavailable" if item.id in stale else "repeated" if item.id in credited else "credited"
        credited.add(item.id)
        outcomes.append(CitedItem(citation=citation, outcome=outcome, id=item.id, record_kind=item.record_kind))
    return outcomes


def _credit(principal: Principal, credited: Sequence[CitedItem], now: datetime) -> None:
    gain = float(settings.RECALL_CITATION_UTILITY_GAIN)
    originals = [c.id for c in credited if c.record_kind == "belief"]
    derived = [c.id for c in credited if c.record_kind != "belief"]
    if originals:
        memory_record_usage(principal=principal, memory_ids=originals, now=now, utility_gain=gain)
    port = hooks.derived_port()
    if derived and port is not None:
        port.credit(principal=principal, derived_ids=derived, now=now, gain=gain)

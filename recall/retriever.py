"""The one retriever: every caller (API, CLI, context assembly, evaluations) recalls here.

``recall`` resolves the channel and the query vector first — outside any transaction, so no
provider call happens inside one — then runs these stages in one owner context:

1. ``_candidates``: the arms (``recall.arms``), each ranked and bounded in SQL after every
   hard predicate — lexical + structured (sparse), semantic (dense), all three (hybrid), or
   the newest-first arm alone for ``selection_mode="recent"``;
2. ``_fuse``: reciprocal-rank fusion (``recall.ranking.fusion``); in hybrid, the expansion
   arm's second hop is fused in as a fourth list;
3. ``_rank``: the rejoin (only originals still permitted in this snapshot are ranked), then
   the relevance floor (``recall.ranking.floor``);
4. the read-time view registered in ``recall.hooks`` (reconsolidation's), if any;
5. ``_render``: the whole-item context budget (``recall.render``) and the kept items' sources;
6. ``_trace``: one content-free trace row (``recall.traces``).

A semantic request without AGENT_MEMORY_SEMANTIC_ENABLED or a usable encoder runs sparse and
says why (``fallback_reason``). This module never writes originals, never widens a predicate
after SQL, and never puts query or memory text in a trace.
"""
from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional, Sequence, get_args
from uuid import UUID

from django.conf import settings

from memory import vocabulary
from memory.domain import SourceRef
from recall import egress, encoders, excerpts, hooks, policy, query_cache
from recall.arms import expansion, permitted, recent, semantic, sparse, structured
from recall.domain import Channel, RecallItem, RecallRequest, RecallResult, RecallStages, SemanticList, Surface
from recall.models import EMBEDDING_DIMENSIONS
from recall.ranking.floor import Floor, relevance_floor
from recall.ranking.fusion import Ranked, lexical_floor, reciprocal_rank_fusion, union_ids
from recall.render import Rendered, render
from recall.traces import TraceFacts, trace_write
from veetbot.clock import require_aware, utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

POLICY = policy.RECALL
SEMANTIC_POLICY = policy.SEMANTIC
DEFAULT_CHANNEL: Channel = "hybrid"  # the retrieval profile's semantic_channel
SURFACES = get_args(Surface)


class _DefaultEncoder:
    def __repr__(self) -> str:
        return "<the configured encoder>"


DEFAULT_ENCODER: Any = _DefaultEncoder()


def _usable(vector: Sequence[float], encoder) -> bool:
    return (
        len(vector) == EMBEDDING_DIMENSIONS
        and getattr(encoder.tuple, "dimensions", None) == EMBEDDING_DIMENSIONS
        and all(isinstance(x, (int, float)) and math.isfinite(x) for x in vector)
    )


@dataclass(frozen=True)
class _Route:
    """The channel this recall runs and, for a semantic one, the vector its arms search with."""

    requested: Channel
    channel: Channel
    fallback: str = ""  # why a semantic request runs sparse (recall.domain.FallbackReason)
    encoder: Any = None
    query_vector: Optional[list[float]] = None

    @property
    def space(self) -> str:
        return self.encoder.tuple.space if self.query_vector is not None else ""


def _route(request: RecallRequest, encoder, principal: Principal) -> _Route:
    """The effective channel, fallback reason, encoder and query vector for this request."""
    requested: Channel = request.channel or DEFAULT_CHANNEL
    if request.selection_mode == "recent":
        return _Route(requested, "sparse", "" if requested == "sparse" else "recent_selection")
    if requested == "sparse":
        return _Route(requested, "sparse")
    if not settings.AGENT_MEMORY_SEMANTIC_ENABLED:
        return _Route(requested, "sparse", "semantic_disabled")
    try:
        if encoder is DEFAULT_ENCODER:
            encoder = encoders.get_encoder()
        if encoder is None:
            return _Route(requested, "sparse", "encoder_unavailable")
        # Through the bounded query-vector cache; a miss encodes (outside any transaction),
        # a remote encoder only past the egress policy and a spend reservation.
        vector = list(query_cache.query_vector(egress.guarded(encoder, principal), request.query, SEMANTIC_POLICY))
    except egress.EgressRefused:
        return _Route(requested, "sparse", "egress_refused")
    except encoders.EncoderUnavailable:
        return _Route(requested, "sparse", "encoder_unavailable")
    if not _usable(vector, encoder):
        return _Route(requested, "sparse", "encoder_unavailable")
    return _Route(requested, requested, encoder=encoder, query_vector=vector)


def _allowed_sensitivities(ceiling: str) -> list[str]:
    return list(vocabulary.SENSITIVITIES[: vocabulary.SENSITIVITY_RANK[ceiling] + 1])


def _item(row: tuple, score: float) -> RecallItem:
    """An item without its sources (added once the budget has chosen the items)."""
    (memory_id, _position, revision, subject, statement, belief_type, polarity, derivation,
     attribution, authority, sensitivity, confidence, evidence_at, valid_from, expires_at, entity_ids) = row
    return RecallItem(
        id=memory_id, score=score, subject=subject, statement=statement, belief_type=belief_type,
        polarity=polarity, derivation=derivation, authority=authority, attribution=attribution,
        confidence=confidence, sensitivity=sensitivity, evidence_at=evidence_at, valid_from=valid_from,
        expires_at=expires_at, content_revision=revision, sources=(), entity_ids=tuple(entity_ids or ()),
    )


def semantic_key(principal: Principal, request: RecallRequest, now: datetime, space: str) -> str:
    """What a semantic list was read for (``SemanticList.key``): every input of the semantic
    arm — all request fields but ``entity_ids``, which only the structured arm reads."""
    facts = [str(principal.tenant_id), str(principal.principal_id), now.isoformat(), space,
             request.model_dump_json(exclude={"entity_ids"})]
    return hashlib.sha256("\x1f".join(facts).encode()).hexdigest()


def recall(
    *, principal: Principal, request: RecallRequest, surface: str, encoder: Any = DEFAULT_ENCODER,
    now: Optional[datetime] = None, semantic_from: Optional[SemanticList] = None, frozen: bool = False,
) -> RecallResult:
    """Recall permitted originals for ``request.query`` within the request's budgets.

    ``semantic_from``: an earlier result's ``semantic_list``. When its key matches this
    request's (the same query, predicates and instant; only the entity IDs may differ),
    its candidates are this recall's semantic list and the semantic arm is not searched
    again — context assembly's entity search repeats round one's query for this. The
    rejoin still admits only originals permitted in this recall's own snapshot.

    ``frozen``: the rendering becomes a conversation's frozen prefix, which never carries
    source excerpts (``recall.excerpts``); otherwise, with the setting on, the kept originals
    are offered theirs."""
    if surface not in SURFACES:
        raise ValueError(f"surface must be one of {', '.join(SURFACES)}")
    started = time.perf_counter()
    now = require_aware(now) if now is not None else utcnow()
    route = _route(request, encoder, principal)  # before the owner transaction: no provider call inside it

    with owner_context(principal):
        read = _read(principal, request, now)
        found = _candidates(read, route, principal, request, now, semantic_from)
        fused = _fuse(read, route, found)
        ranking = _rank(read, found, fused)
        offer = hooks.offer(
            request=request, params=read.params, ranked=ranking.eligible, rows=ranking.rows,
            rejoin=lambda ids: permitted.rejoin(read, ids), build=_item,
        )
        quoting = excerpts.admitted(request, frozen=frozen)
        rendered, items = _render(read, request, ranking, offer, quoting)
        stages = _stages(found, ranking, rendered, offer)
        trace_id = _trace(principal, now, surface, request, route, found, ranking, rendered, offer, stages, started,
                          quoting)

    return RecallResult(
        query=request.query, channel=route.channel, requested_channel=route.requested,
        fallback_reason=route.fallback, selection_mode=request.selection_mode, items=items,
        rendered=rendered.text, rendered_tokens=rendered.tokens, trace_id=trace_id, stages=stages,
        semantic_list=found.semantic_list,
    )


def _read(principal: Principal, request: RecallRequest, now: datetime) -> permitted.Read:
    return permitted.Read(
        params=permitted.base_params(
            tenant_id=principal.tenant_id, principal_id=principal.principal_id,
            at=request.as_of or now, as_of=request.as_of,
            sensitivities=_allowed_sensitivities(request.ceiling), scope=request.scope,
            exclude_ids=list(request.exclude_ids), belief_types=list(request.belief_types),
        ),
        historical=request.as_of is not None,
        limit=permitted.arm_limit(request.max_items),
    )


@dataclass
class _Candidates:
    lists: dict[str, list[permitted.Candidate]]  # arm -> its ranked, bounded list
    floors: dict[str, float] = field(default_factory=dict)  # arm -> least signal that votes in fusion
    semantic_search: str = ""  # recall.domain.SemanticSearch
    semantic_list: Optional[SemanticList] = None


def _candidates(read: permitted.Read, route: _Route, principal: Principal, request: RecallRequest,
                now: datetime, semantic_from: Optional[SemanticList]) -> _Candidates:
    """Stage 1: each arm's list — recent alone, or lexical + structured for the sparse
    channel, semantic for dense, all three for hybrid."""
    if request.selection_mode == "recent":
        return _Candidates(lists={"recent": recent.recent(read)})
    found = _Candidates(lists={})
    lists = found.lists
    if route.channel in ("hybrid", "sparse"):
        prepared = sparse.prepare_query(request.query)
        lists["lexical"], lists["structured"] = sparse.sparse(
            read, prepared, entity_ids=request.entity_ids,
            anchors=structured.anchor_types(request.query, request.belief_types),
        )
        if route.channel == "hybrid":
            found.floors["lexical"] = lexical_floor(prepared.lexemes)
    if route.channel in ("hybrid", "dense"):
        space = route.space
        exact = semantic.use_exact_search(space, owner=(principal.tenant_id, principal.principal_id))
        key = semantic_key(principal, request, now, space)
        if semantic_from is not None and semantic_from.key == key:
            lists["semantic"] = [permitted.Candidate(id=i, store_position=p, signal=d)
                                 for i, p, d in semantic_from.candidates]
            found.semantic_search = semantic_from.search
        else:
            lists["semantic"], found.semantic_search = semantic.semantic_search(
                read, route.query_vector, space, exact=exact)
        found.semantic_list = SemanticList(key=key, search=found.semantic_search, candidates=tuple(
            (c.id, c.store_position, c.signal) for c in lists["semantic"]))
    return found


def _fuse(read: permitted.Read, route: _Route, found: _Candidates) -> list[Ranked]:
    """Stage 2: reciprocal-rank fusion; in hybrid, the second hop — siblings of the first
    fusion's top (the expansion arm joins ``found.lists``) — then one fusion of all four."""
    fused = reciprocal_rank_fusion(found.lists, min_signals=found.floors)
    if route.channel == "hybrid" and "semantic" in found.lists and expansion.enabled():
        found.lists["expansion"] = expansion.expand(read, [r.id for r in fused], route.query_vector, route.space)
        fused = reciprocal_rank_fusion(found.lists, min_signals=found.floors)
    return fused


@dataclass(frozen=True)
class _Ranking:
    rows: dict[UUID, tuple]  # the rejoin: permitted originals with their effective content
    ranked: list[Ranked]  # the fused order of those
    floor: Optional[Floor]
    withheld: list[UUID]  # ranked originals below the floor, in rank order
    eligible: list[Ranked]  # ranked originals above it: what may be rendered


def _rank(read: permitted.Read, found: _Candidates, fused: list[Ranked]) -> _Ranking:
    """Stage 3: only originals still permitted in this statement's snapshot are ranked; the
    relevance floor then withholds from rendering those no channel relates to the query,
    so unrelated ones stop filling the item allowance."""
    rows = permitted.rejoin(read, [r.id for r in fused])
    ranked = [r for r in fused if r.id in rows]
    floor = relevance_floor(found.lists, lexical_min=found.floors.get("lexical"))
    withheld = floor.split([r.id for r in ranked])[1] if floor is not None else []
    eligible = ranked if floor is None else [r for r in ranked if r.id in floor.above]
    return _Ranking(rows=rows, ranked=ranked, floor=floor, withheld=withheld, eligible=eligible)


def _render(read: permitted.Read, request: RecallRequest, ranking: _Ranking, offer: Optional[hooks.Offer],
            quoting: bool) -> tuple[Rendered, tuple[RecallItem, ...]]:
    """Stage 5: the whole-item budget over what the read-time view offers (the eligible
    ranked originals when none), the kept originals' source excerpts in what the items
    left (``quoting``: ``recall.excerpts.admitted``), then the sources of the items kept."""
    # Items are built lazily: the budget usually stops long before the ranked list ends.
    rendered = render(
        (_item(ranking.rows[r.id], r.score) for r in ranking.eligible) if offer is None else offer.items,
        max_items=request.max_items, max_tokens=request.max_tokens,
        admit=None if offer is None else offer.admit,
        excerpts=(lambda kept: excerpts.read(read, kept)) if quoting else None,
    )
    sources = permitted.sources(read, [item.id for item in rendered.items])
    items = tuple(
        item.model_copy(update={"sources": tuple(SourceRef(event=e, part=p) for e, p in sources.get(item.id, ()))})
        for item in rendered.items
    )
    return rendered, items


def _stages(found: _Candidates, ranking: _Ranking, rendered: Rendered, offer: Optional[hooks.Offer]) -> RecallStages:
    lists = found.lists
    return RecallStages(
        candidate_ids=tuple(union_ids(lists.values())),
        dense_ids=tuple(c.id for c in lists.get("semantic", ())),
        ranked_ids=tuple(r.id for r in ranking.ranked),
        rendered_ids=tuple(item.id for item in rendered.items),
        below_floor_ids=tuple(ranking.withheld),
        lexical_ids=tuple(c.id for c in lists.get("lexical", ())),
        structured_ids=tuple(c.id for c in lists.get("structured", ())),
        suppressed_ids=tuple(offer.suppressed_ids) if offer is not None else (),
        summary_ids=tuple(offer.summary_ids) if offer is not None else (),
        semantic_search=found.semantic_search,
        expanded="expansion" in lists,
    )


def _trace(principal: Principal, now: datetime, surface: str, request: RecallRequest, route: _Route,
           found: _Candidates, ranking: _Ranking, rendered: Rendered, offer: Optional[hooks.Offer],
           stages: RecallStages, started: float, quoting: bool) -> UUID:
    """Stage 6: the content-free trace row, tagged with the stages that ran."""
    lists, floor = found.lists, ranking.floor
    return trace_write(principal=principal, now=now, facts=TraceFacts(
        surface=surface, policy=policy.tags(
            policy.RECALL, policy.SEMANTIC if "semantic" in lists else None,
            policy.EXPANSION if "expansion" in lists else None,
            policy.FLOOR if floor is not None else None,
            policy.RECONSOLIDATION if offer is not None else None,
            policy.EXCERPTS if quoting else None,
        ),
        selection_mode=request.selection_mode, channel=route.channel, requested_channel=route.requested,
        fallback_reason=route.fallback, space=route.space if "semantic" in lists else "", ceiling=request.ceiling,
        max_items=request.max_items, max_tokens=request.max_tokens, as_of=request.as_of,
        candidate_ids=stages.candidate_ids, dense_ids=stages.dense_ids, ranked_ids=stages.ranked_ids,
        rendered_ids=stages.rendered_ids, rendered=rendered.text, rendered_tokens=rendered.tokens,
        elapsed_ms=(time.perf_counter() - started) * 1000.0, semantic_search=found.semantic_search,
        floor_min_similarity=floor.min_similarity if floor is not None else None,
        floor_withheld=len(ranking.withheld), excerpt_sha256=excerpts.digests(rendered.items),
    ))

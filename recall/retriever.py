"""The one retriever: every caller (API, CLI, context assembly, evaluations) recalls here.

``recall(principal=..., request=..., surface=...)`` runs, in one owner context:

1. candidate arms (``recall.arms``), each bounded to
   max(max_items × 8, 64) and ranked in SQL after every hard predicate —
   lexical + structured for the sparse channel, semantic for dense, all three for hybrid;
   or the legacy newest-first arm for ``selection_mode="recent"``;
2. reciprocal-rank fusion (``recall.ranking.fusion``); in hybrid, lexical candidates covering less
   than RECALL_HYBRID_LEXICAL_MIN_COVERAGE of the query's lexemes get no vote, and the
   expansion arm (``recall.arms.expansion``: same-subject/entity siblings of the fused top,
   nearest the query) is fused in as a fourth list — a second hop;
3. the rejoin: only originals still permitted in this statement's snapshot are ranked;
   in hybrid and dense the relevance floor (``recall.ranking.floor``,
   RECALL_RELEVANCE_SIMILARITY_MARGIN) then withholds from rendering the ranked originals
   that no channel relates to the query (trace: its threshold and how many it withheld);
   then the read-time view registered in ``recall.hooks`` (reconsolidation's, when it is
   on: one member per active merge set, valid summaries after every original) may change
   what is offered;
4. the whole-item context budget and rendering (``recall.render``);
5. a content-free trace row (``recall.traces``).

Channels. The requested channel is ``request.channel`` or the profile default, hybrid.
Semantic retrieval needs AGENT_MEMORY_SEMANTIC_ENABLED and a working encoder; without
either the recall runs sparse and records ``fallback_reason`` (semantic_disabled |
encoder_unavailable). Dense omits the sparse arms and their signals entirely. The query
vector is prepared *before* the owner transaction opens, so no provider call happens
inside a repository transaction.

This module never writes originals, never widens a predicate after SQL, and never puts
query or memory text in a trace.
"""
from __future__ import annotations

import hashlib
import math
import time
from datetime import datetime
from typing import Any, Optional, Sequence, get_args

from django.conf import settings

from memory import vocabulary
from memory.domain import SourceRef
from recall import egress, encoders, hooks, policy, query_cache
from recall.arms import expansion, permitted, recent, semantic, sparse, structured
from recall.domain import Channel, RecallItem, RecallRequest, RecallResult, RecallStages, SemanticList, Surface
from recall.models import EMBEDDING_DIMENSIONS
from recall.ranking.floor import relevance_floor
from recall.ranking.fusion import reciprocal_rank_fusion, union_ids
from recall.render import render
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


def _semantic(request: RecallRequest, requested: Channel, encoder, principal: Principal
              ) -> tuple[Channel, str, Any, Optional[list[float]]]:
    """(effective channel, fallback reason, encoder, query vector) for this request."""
    if request.selection_mode == "recent":
        return "sparse", ("" if requested == "sparse" else "recent_selection"), None, None
    if requested == "sparse":
        return "sparse", "", None, None
    if not settings.AGENT_MEMORY_SEMANTIC_ENABLED:
        return "sparse", "semantic_disabled", None, None
    try:
        if encoder is DEFAULT_ENCODER:
            encoder = encoders.get_encoder()
        if encoder is None:
            return "sparse", "encoder_unavailable", None, None
        # Through the bounded query-vector cache; a miss encodes (outside any transaction),
        # a remote encoder only past the egress policy and a spend reservation.
        vector = list(query_cache.query_vector(egress.guarded(encoder, principal), request.query, SEMANTIC_POLICY))
    except egress.EgressRefused:
        return "sparse", "egress_refused", None, None
    except encoders.EncoderUnavailable:
        return "sparse", "encoder_unavailable", None, None
    if not _usable(vector, encoder):
        return "sparse", "encoder_unavailable", None, None
    return requested, "", encoder, vector


def lexical_floor(lexemes: Sequence[str]) -> int:
    """The least coverage with which a lexical candidate votes in hybrid fusion."""
    return max(1, math.ceil(settings.RECALL_HYBRID_LEXICAL_MIN_COVERAGE * len(lexemes)))


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
    now: Optional[datetime] = None, semantic_from: Optional[SemanticList] = None,
) -> RecallResult:
    """Recall permitted originals for ``request.query`` within the request's budgets.

    ``semantic_from``: an earlier result's ``semantic_list``. When its key matches this
    request's (the same query, predicates and instant; only the entity IDs may differ),
    its candidates are this recall's semantic list and the semantic arm is not searched
    again — context assembly's entity search repeats round one's query for this. The
    rejoin still admits only originals permitted in this recall's own snapshot."""
    if surface not in SURFACES:
        raise ValueError(f"surface must be one of {', '.join(SURFACES)}")
    started = time.perf_counter()
    now = require_aware(now) if now is not None else utcnow()
    requested: Channel = request.channel or DEFAULT_CHANNEL
    channel, fallback, encoder, query_vector = _semantic(request, requested, encoder, principal)
    space = encoder.tuple.space if query_vector is not None else ""

    with owner_context(principal):
        read = permitted.Read(
            params=permitted.base_params(
                tenant_id=principal.tenant_id, principal_id=principal.principal_id,
                at=request.as_of or now, as_of=request.as_of,
                sensitivities=_allowed_sensitivities(request.ceiling), scope=request.scope,
                exclude_ids=list(request.exclude_ids), belief_types=list(request.belief_types),
            ),
            historical=request.as_of is not None,
            limit=permitted.arm_limit(request.max_items),
        )
        lists: dict[str, list[permitted.Candidate]] = {}
        floors: dict[str, float] = {}
        semantic_search = ""
        semantic_list: Optional[SemanticList] = None
        if request.selection_mode == "recent":
            lists["recent"] = recent.recent(read)
        else:
            if channel in ("hybrid", "sparse"):
                prepared = sparse.prepare_query(request.query)
                lists["lexical"], lists["structured"] = sparse.sparse(
                    read, prepared, entity_ids=request.entity_ids,
                    anchors=structured.anchor_types(request.query, request.belief_types),
                )
                if channel == "hybrid":
                    floors["lexical"] = lexical_floor(prepared.lexemes)
            if channel in ("hybrid", "dense"):
                exact = semantic.use_exact_search(space, owner=(principal.tenant_id, principal.principal_id))
                key = semantic_key(principal, request, now, space)
                if semantic_from is not None and semantic_from.key == key:
                    lists["semantic"] = [permitted.Candidate(id=i, store_position=p, signal=d)
                                         for i, p, d in semantic_from.candidates]
                    semantic_search = semantic_from.search
                else:
                    lists["semantic"], semantic_search = semantic.semantic_search(read, query_vector, space, exact=exact)
                semantic_list = SemanticList(key=key, search=semantic_search, candidates=tuple(
                    (c.id, c.store_position, c.signal) for c in lists["semantic"]))
        fused = reciprocal_rank_fusion(lists, min_signals=floors)
        if channel == "hybrid" and "semantic" in lists and expansion.enabled():
            # The second hop: siblings of the first pass's top, then one fusion of all four.
            lists["expansion"] = expansion.expand(read, [r.id for r in fused], query_vector, space)
            fused = reciprocal_rank_fusion(lists, min_signals=floors)
        rows = permitted.rejoin(read, [r.id for r in fused])
        ranked = [r for r in fused if r.id in rows]
        # The relevance floor (recall.ranking.floor): ranked originals no channel relates to the
        # query are not rendered, so unrelated ones stop filling the item allowance.
        floor = relevance_floor(lists, lexical_min=floors.get("lexical"))
        withheld = floor.split([r.id for r in ranked])[1] if floor is not None else []
        eligible = ranked if floor is None else [r for r in ranked if r.id in floor.above]
        # The registered read-time view (reconsolidation's: one rendering per active merge
        # set, then summaries in the remaining slots); None means plain atomic recall.
        offer = hooks.offer(
            request=request, params=read.params, ranked=eligible, rows=rows,
            rejoin=lambda ids: permitted.rejoin(read, ids), build=_item,
        )
        # Items are built lazily: the budget usually stops long before the ranked list ends.
        rendered = render(
            (_item(rows[r.id], r.score) for r in eligible) if offer is None else offer.items,
            max_items=request.max_items, max_tokens=request.max_tokens,
            admit=None if offer is None else offer.admit,
        )
        sources = permitted.sources(read, [item.id for item in rendered.items])
        kept = tuple(
            item.model_copy(update={"sources": tuple(SourceRef(event=e, part=p) for e, p in sources.get(item.id, ()))})
            for item in rendered.items
        )

        stages = RecallStages(
            candidate_ids=tuple(union_ids(lists.values())),
            dense_ids=tuple(c.id for c in lists.get("semantic", ())),
            ranked_ids=tuple(r.id for r in ranked),
            rendered_ids=tuple(item.id for item in rendered.items),
            below_floor_ids=tuple(withheld),
            lexical_ids=tuple(c.id for c in lists.get("lexical", ())),
            structured_ids=tuple(c.id for c in lists.get("structured", ())),
            suppressed_ids=tuple(offer.suppressed_ids) if offer is not None else (),
            summary_ids=tuple(offer.summary_ids) if offer is not None else (),
            semantic_search=semantic_search,
            expanded="expansion" in lists,
        )
        trace_id = trace_write(principal=principal, now=now, facts=TraceFacts(
            surface=surface, policy=policy.tags(
                policy.RECALL, policy.SEMANTIC if "semantic" in lists else None,
                policy.EXPANSION if "expansion" in lists else None,
                policy.FLOOR if floor is not None else None,
                policy.RECONSOLIDATION if offer is not None else None,
            ),
            selection_mode=request.selection_mode, channel=channel, requested_channel=requested,
            fallback_reason=fallback, space=space if "semantic" in lists else "", ceiling=request.ceiling,
            max_items=request.max_items, max_tokens=request.max_tokens, as_of=request.as_of,
            candidate_ids=stages.candidate_ids, dense_ids=stages.dense_ids, ranked_ids=stages.ranked_ids,
            rendered_ids=stages.rendered_ids, rendered=rendered.text, rendered_tokens=rendered.tokens,
            elapsed_ms=(time.perf_counter() - started) * 1000.0, semantic_search=semantic_search,
            floor_min_similarity=floor.min_similarity if floor is not None else None,
            floor_withheld=len(withheld),
        ))

    return RecallResult(
        query=request.query, channel=channel, requested_channel=requested, fallback_reason=fallback,
        selection_mode=request.selection_mode, items=kept, rendered=rendered.text,
        rendered_tokens=rendered.tokens, trace_id=trace_id, stages=stages, semantic_list=semantic_list,
    )

"""Domain values of recall: the request, the embedding tuple, the result and its stages.

``RecallResult.stages`` holds the transient candidate / dense / ranked / rendered IDs
an evaluator needs; it is excluded from serialization and never rendered.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Literal, Optional
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from memory import vocabulary
from memory.domain import BeliefType, SourceRef

Channel = Literal["hybrid", "dense", "sparse"]
SelectionMode = Literal["relevance", "recent"]
Sensitivity = Literal["public", "internal", "sensitive", "restricted"]
Surface = Literal["api", "cli", "eval", "context", "dashboard"]  # who asked; recorded on the trace
# Why the effective channel differs from the requested one ("" when it does not):
# semantic_disabled (AGENT_MEMORY_SEMANTIC_ENABLED off), encoder_unavailable (no encoder,
# or it failed or gave an unusable vector), recent_selection (the legacy mode has no
# semantic arm), egress_refused (a remote encoder may not receive this query or its spend
# ceiling is reached: recall.egress). A fallback is never a dense observation.
FallbackReason = Literal["", "semantic_disabled", "encoder_unavailable", "recent_selection", "egress_refused"]
# How the semantic arm searched ("" when it did not run): exact; hnsw; hnsw_short_exact —
# HNSW came back with fewer than the arm limit and the arm searched again exactly
# (``recall.arms.semantic.semantic_search``: another owner's vectors can never starve it).
SemanticSearch = Literal["", "exact", "hnsw", "hnsw_short_exact"]
TEXT_VERSION = "memory-text@1"  # subject + statement, no inferred labels
QUERY_MAX_CHARS = 2000
MAX_ITEMS_BOUND = 100  # the largest item budget any caller may ask for
MAX_TOKENS_BOUND = 32000  # the largest token budget any caller may ask for
MAX_EXCLUDE_IDS = 1000  # the most explicit exclusions one request may carry


class Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EmbeddingTuple(Value):
    """Identity of an embedding space; vectors from different tuples never mix."""

    provider: str
    model: str
    model_revision: str
    dimensions: int
    text_version: str = TEXT_VERSION

    @property
    def space(self) -> str:
        payload = json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()


def memory_text(subject: str, statement: str) -> str:
    """memory-text@1: what gets embedded for an original."""
    return f"{subject}: {statement}"


class RecallRequest(Value):
    query: str = Field(min_length=1, max_length=QUERY_MAX_CHARS)
    ceiling: Sensitivity
    max_items: int = Field(default=20, ge=1, le=MAX_ITEMS_BOUND)
    max_tokens: int = Field(default=2000, ge=1, le=MAX_TOKENS_BOUND)
    as_of: Optional[AwareDatetime] = None
    channel: Optional[Channel] = None  # None: the configured default
    # The scope the recall happens in (user | project:<id> | session:<id>): local scopes
    # never cross; a user-scope belief enters a local scope's recall only when portable.
    scope: str = Field(default="user", pattern=vocabulary.SCOPE.pattern)
    selection_mode: SelectionMode = "relevance"
    belief_types: tuple[BeliefType, ...] = ()
    entity_ids: tuple[str, ...] = ()
    exclude_ids: tuple[UUID, ...] = Field(default=(), max_length=MAX_EXCLUDE_IDS)


RecordKind = Literal["belief", "summary", "hypothesis"]


class SummaryClause(Value):
    """One extractive clause of a recalled summary and the originals it repeats."""

    text: str
    source_ids: tuple[UUID, ...]


class SourceExcerpt(Value):
    """One whole text part of the owner's own message that formed a rendered original
    (``recall.excerpts``): its stable event/part identity, when it was said, the text and
    the text's SHA-256 (what the trace records in its place)."""

    event: UUID
    part: UUID
    created_at: datetime
    text: str
    text_sha256: str


class RecallItem(Value):
    """A recalled original (``record_kind`` belief) or, with reconsolidation on, a derived
    summary (retrieval-reconsolidation@2). A belief that represents an active merge set
    carries that operation's ID and revision; a summary carries its operation, clauses and
    complete support (rendered and omitted inputs alike)."""

    id: UUID
    score: float
    subject: str
    statement: str
    belief_type: str
    polarity: str
    derivation: str
    authority: str
    attribution: str
    confidence: float
    sensitivity: str
    evidence_at: datetime
    valid_from: datetime
    expires_at: Optional[datetime]
    content_revision: int
    sources: tuple[SourceRef, ...]
    record_kind: RecordKind = "belief"
    operation_id: Optional[UUID] = None
    operation_revision: Optional[int] = None
    clauses: tuple[SummaryClause, ...] = ()
    support_ids: tuple[UUID, ...] = ()
    # The original's entity IDs (a belief's; empty on a summary): context assembly's second
    # round searches the entities of round one's top results.
    entity_ids: tuple[str, ...] = ()
    # With RECALL_SOURCE_EXCERPTS_ENABLED: the source excerpts rendered with this item (a
    # belief's only; empty when off, when none is admissible or the allowance had no room).
    excerpts: tuple[SourceExcerpt, ...] = ()


class RecallStages(Value):
    """IDs of the actual permitted read, per stage, for evaluators (never serialized).

    candidate_ids: the deduplicated union of the arms' lists (lexical, structured,
    semantic — or recent); dense_ids: the semantic arm in cosine order; ranked_ids: the
    fused order after the rejoin, before the relevance floor and the context budget; rendered_ids: what the budget
    kept. lexical_ids / structured_ids: the sparse arms' own lists, for attributing each
    channel's contribution.
    """

    candidate_ids: tuple[UUID, ...] = ()
    dense_ids: tuple[UUID, ...] = ()
    ranked_ids: tuple[UUID, ...] = ()
    rendered_ids: tuple[UUID, ...] = ()
    # Ranked originals the relevance floor (recall.ranking.floor) withheld from rendering, in rank order.
    below_floor_ids: tuple[UUID, ...] = ()
    lexical_ids: tuple[UUID, ...] = ()
    structured_ids: tuple[UUID, ...] = ()
    # With reconsolidation on: ranked originals whose rendering an active merge suppressed
    # (a duplicate of the member rendered instead), and the summaries offered to the budget.
    suppressed_ids: tuple[UUID, ...] = ()
    summary_ids: tuple[UUID, ...] = ()
    semantic_search: SemanticSearch = ""  # how the semantic arm searched
    expanded: bool = False  # whether the expansion arm (same-subject/entity siblings) ran


class SemanticList(Value):
    """One recall's semantic candidates (id, store position, cosine distance) in rank order,
    and ``key``: what they were read for — the owner, the instant, the embedding space and
    every request field the semantic arm reads (all but ``entity_ids``, which only the
    structured arm reads). A later recall with the same key may reuse them instead of
    searching again (``retriever.recall``'s ``semantic_from``)."""

    key: str
    candidates: tuple[tuple[UUID, int, float], ...]
    search: SemanticSearch


class RecallResult(Value):
    query: str
    channel: Channel
    requested_channel: Channel
    fallback_reason: str = ""
    selection_mode: SelectionMode
    items: tuple[RecallItem, ...]
    rendered: str
    rendered_tokens: int
    trace_id: Optional[UUID] = None
    stages: RecallStages = Field(default_factory=RecallStages, exclude=True, repr=False)
    semantic_list: Optional[SemanticList] = Field(default=None, exclude=True, repr=False)

"""Content-free recall traces: what one recall did, never what it read.

A trace holds the policy (the registered tags of the stages that ran, ``recall.policy``),
selection mode, channels, fallback, embedding space, how the semantic arm searched, ceiling,
budgets, instant and the four stage ID lists (candidate, dense, ranked, rendered), the
relevance floor in force and how many ranked originals it withheld, plus the SHA-256 and
token count of the rendered text, the SHA-256 of each source excerpt rendered and the
elapsed time. It must never hold a
query, subject, statement, excerpt or rendered text: the staff admin may read this table.
Written by the retriever inside the same owner context as the recall itself.
"""
from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from django.db import connection

from recall import policy
from recall.arms.permitted import uuid_array
from recall.models import RecallTrace
from veetbot.identity import Principal


@dataclass(frozen=True)
class TraceFacts:
    surface: str
    policy: tuple[str, ...]  # recall.policy.tags
    selection_mode: str
    channel: str
    requested_channel: str
    fallback_reason: str
    space: str
    ceiling: str
    max_items: int
    max_tokens: int
    as_of: Optional[datetime]
    candidate_ids: Sequence[UUID]
    dense_ids: Sequence[UUID]
    ranked_ids: Sequence[UUID]
    rendered_ids: Sequence[UUID]
    rendered: str
    rendered_tokens: int
    elapsed_ms: float
    semantic_search: str = ""
    floor_min_similarity: Optional[float] = None  # recall.ranking.floor in force (None: no floor applied)
    floor_withheld: int = 0  # ranked originals the floor withheld from rendering
    excerpt_sha256: Sequence[str] = ()  # recall.excerpts: digests of the rendered excerpts, never their text


def rendered_sha256(rendered: str) -> str:
    return hashlib.sha256(rendered.encode("utf-8")).hexdigest()


_COLUMNS = (
    "id", "tenant_id", "principal_id", "created_at", "surface", "policy", "selection_mode", "channel",
    "requested_channel", "fallback_reason", "space", "ceiling", "max_items", "max_tokens", "as_of",
    "candidate_ids", "dense_ids", "ranked_ids", "rendered_ids", "rendered_sha256", "rendered_tokens", "elapsed_ms",
    "semantic_search", "floor_min_similarity", "floor_withheld", "excerpt_sha256",
)
_ID_LISTS = ("candidate_ids", "dense_ids", "ranked_ids", "rendered_ids")
_ARRAYS = {**{name: "uuid[]" for name in _ID_LISTS}, "policy": "text[]", "excerpt_sha256": "text[]"}
# One plain INSERT: the ORM's create quoted every ID of the four lists one by one (about a
# thousand per hybrid recall), the largest single cost of a small owner's recall.
_INSERT = "INSERT INTO {table} ({columns}) VALUES ({values})".format(
    table=RecallTrace._meta.db_table, columns=", ".join(_COLUMNS),
    values=", ".join(f"%({c})s::{_ARRAYS[c]}" if c in _ARRAYS else f"%({c})s" for c in _COLUMNS),
)


def trace_write(*, principal: Principal, facts: TraceFacts, now: datetime) -> UUID:
    """Insert one trace; the caller holds ``owner_context(principal)``. An unregistered
    policy tag raises (``recall.policy.UnregisteredPolicyTag``) before the insert."""
    trace_id = uuid.uuid4()
    row = {
        "id": trace_id, "tenant_id": principal.tenant_id, "principal_id": principal.principal_id, "created_at": now,
        "surface": facts.surface, "policy": list(policy.check(tuple(facts.policy))),
        "selection_mode": facts.selection_mode,
        "channel": facts.channel, "requested_channel": facts.requested_channel,
        "fallback_reason": facts.fallback_reason, "space": facts.space, "ceiling": facts.ceiling,
        "max_items": facts.max_items, "max_tokens": facts.max_tokens, "as_of": facts.as_of,
        **{name: uuid_array(getattr(facts, name)) for name in _ID_LISTS},
        "rendered_sha256": rendered_sha256(facts.rendered), "rendered_tokens": facts.rendered_tokens,
        "elapsed_ms": facts.elapsed_ms, "semantic_search": facts.semantic_search,
        "floor_min_similarity": facts.floor_min_similarity, "floor_withheld": facts.floor_withheld,
        "excerpt_sha256": list(facts.excerpt_sha256),
    }
    with connection.cursor() as cursor:
        cursor.execute(_INSERT, row)
    return trace_id

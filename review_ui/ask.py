"""Ask your memory: the dashboard runs the same recall as ``POST /v1/memories/search``
(hybrid when semantic recall is on; the configured default channel otherwise) and says what
each cited item is — an original, one standing for merged duplicates, a summary or a
connection — and which channel ran, with any fallback in words.

The query comes in a POSTed form and goes nowhere else: not into a URL, a log line or the
trace (which, as for every recall, holds IDs and counts only).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional
from uuid import UUID

from django.conf import settings

from recall import retriever
from recall.domain import QUERY_MAX_CHARS, RecallRequest
from review_ui import words
from veetbot.clock import utcnow
from veetbot.identity import Principal

ASK_MAX_ITEMS = 10  # a page a person reads, not a model's context


@dataclass(frozen=True)
class AnsweredItem:
    citation: UUID
    kind: str  # words.RECORD_KIND, or the merged-duplicates phrase
    subject: str
    statement: str
    clauses: tuple[tuple[str, tuple[UUID, ...]], ...]  # a summary's quotes and the originals each repeats
    source_id: Optional[UUID]  # an original to open
    operation_id: Optional[UUID]  # the operation it comes from or stands for


@dataclass(frozen=True)
class Answer:
    items: tuple[AnsweredItem, ...]
    channel: str  # in words
    fallback: str  # in words, "" when none


def validate(query: str) -> Optional[str]:
    """Why the query cannot be asked ("" when it can): a fixed phrase, never the query."""
    if not query.strip():
        return "Type a question first."
    if len(query) > QUERY_MAX_CHARS or "\x00" in query:
        return f"A question can have at most {QUERY_MAX_CHARS} characters."
    return ""


def ask(principal: Principal, query: str, *, ceiling: str) -> Answer:
    result = retriever.recall(principal=principal, surface="dashboard", now=utcnow(), request=RecallRequest(
        query=query, ceiling=ceiling, max_items=min(ASK_MAX_ITEMS, settings.RECALL_MAX_ITEMS),
        max_tokens=settings.RECALL_MAX_TOKENS))
    items = []
    for item in result.items:
        if item.record_kind == "belief":
            kind = ("Original memory, standing for merged duplicates" if item.operation_id is not None
                    else words.RECORD_KIND["belief"])
        else:
            kind = words.RECORD_KIND.get(item.record_kind, item.record_kind)
        items.append(AnsweredItem(
            citation=item.id, kind=kind, subject=item.subject, statement=item.statement,
            clauses=tuple((c.text, c.source_ids) for c in item.clauses),
            source_id=item.id if item.record_kind == "belief" else None, operation_id=item.operation_id))
    channel = words.CHANNEL.get(result.channel, result.channel)
    return Answer(items=tuple(items), channel=channel, fallback=words.FALLBACK.get(result.fallback_reason, ""))

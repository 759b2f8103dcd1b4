"""Shared builders of the conversation-snapshot tests: a conversation of a recall ``Bank``'s
owner and its turns through the real service, at fixed instants."""
from __future__ import annotations

from datetime import timedelta
from typing import Optional

from memory import services as memory_services
from recall.context.former import ContextNeed
from recall.snapshots.services import conversation_turn
from tests.factories import T0

QUESTION = "What do I need for the passport renewal?"
FILTERS = dict(ceiling="internal", scope="user", belief_types=(), exclude_ids=(), selection_mode="relevance")
DAY = timedelta(days=1)


def at(day: int):
    return T0 + day * DAY


def conversation(bank, *, day: int = 1):
    return memory_services.session_create(principal=bank.principal, started_at=at(day)).id


def turn(bank, session_id, *, day: int, message: str = QUESTION, max_items: int = 20, max_tokens: int = 2000,
         filters: Optional[dict] = None):
    return conversation_turn(principal=bank.principal, session_id=session_id,
                             need=ContextNeed(current_message=message), filters={**FILTERS, **(filters or {})},
                             max_items=max_items, max_tokens=max_tokens, now=at(day))


def ids(view) -> list:
    return [item.id for item in view.items]

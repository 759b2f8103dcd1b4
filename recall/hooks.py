"""The read-time hook: how a later app changes what one recall renders.

``recall`` knows nothing of reconsolidation. Reconsolidation registers its read-time view
here when the app loads (``reconsolidation/apps.py``), as it registers invalidation with
``memory.hooks``. The retriever hands the view each recall's ranked originals — every hard
predicate already applied in SQL — inside the recall's owner context, and renders what the
view offers. With no view registered, or one that returns None for this request, recall is
plain atomic recall: the ranked originals, in order, each admitted by the budget alone.
"""
from __future__ import annotations

from typing import Callable, Iterator, Optional, Protocol, Sequence
from uuid import UUID

from recall.domain import RecallItem, RecallRequest


class Offer(Protocol):
    """What a view offers the budget instead of the plain ranked list."""

    items: Iterator[RecallItem]  # in the order the budget takes them
    suppressed_ids: list[UUID]  # ranked originals left out in favour of another item (for the trace)
    summary_ids: list[UUID]  # derived items offered (for the trace)

    def admit(self, item: RecallItem, kept: Sequence[RecallItem]) -> bool:
        """Whether the budget may keep ``item`` after ``kept``."""


class ReadTimeView(Protocol):
    def __call__(
        self, *, request: RecallRequest, params: dict, ranked: Sequence, rows: dict[UUID, tuple],
        rejoin: Callable[[Sequence[UUID]], dict[UUID, tuple]], build: Callable[[tuple, float], RecallItem],
    ) -> Optional[Offer]:
        """``ranked``: the fused candidates (``id``, ``score``) permitted by ``rows`` (the
        retriever's rejoin), best first; ``params``: the recall's ``base_params``;
        ``rejoin(ids)``: the same permitted relation for more IDs; ``build(row, score)``: the
        retriever's item builder."""


_view: Optional[ReadTimeView] = None


def register(view: ReadTimeView) -> ReadTimeView:
    """Register the read-time view (usable as a decorator); registering it twice is
    harmless, a second, different view is a programming error."""
    global _view
    if _view is not None and _view is not view:
        raise ValueError("a read-time view is already registered")
    _view = view
    return view


def unregister(view: ReadTimeView) -> None:
    global _view
    if _view is view:
        _view = None


def offer(
    *, request: RecallRequest, params: dict, ranked: Sequence, rows: dict[UUID, tuple],
    rejoin: Callable[[Sequence[UUID]], dict[UUID, tuple]], build: Callable[[tuple, float], RecallItem],
) -> Optional[Offer]:
    """The registered view's offer for one recall, or None: plain atomic recall."""
    if _view is None:
        return None
    return _view(request=request, params=params, ranked=ranked, rows=rows, rejoin=rejoin, build=build)

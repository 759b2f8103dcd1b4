"""The read-time hook: how a later app changes what one recall renders.

``recall`` knows nothing of reconsolidation. Reconsolidation registers its read-time view
here when the app loads (``reconsolidation/apps.py``), as it registers invalidation with
``memory.hooks``. The retriever hands the view each recall's ranked originals — every hard
predicate already applied in SQL — inside the recall's owner context, and renders what the
view offers. With no view registered, or one that returns None for this request, recall is
plain atomic recall: the ranked originals, in order, each admitted by the budget alone.

A second, smaller port serves conversation snapshots (``recall.snapshots``): what became of
the derived items and merge sets a conversation froze (``DerivedPort.states``) and the
credit of a faithful citation of a derived item (``DerivedPort.credit``). Reconsolidation
registers it beside the view; with none registered a frozen derived item is reported
withdrawn and never credited.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
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


@dataclass(frozen=True)
class FrozenRef:
    """One frozen reference a derived state is asked about: a derived item (``record_kind``
    summary or hypothesis) or a belief that represented a merge set (its ``operation_id``)."""

    id: UUID
    record_kind: str
    operation_id: UUID
    operation_revision: Optional[int]


@dataclass(frozen=True)
class FrozenState:
    """Why a frozen reference no longer holds (``recall.snapshots.domain.CorrectionReason``)
    and since when, if known."""

    reason: str
    at: Optional[datetime]


@dataclass(frozen=True)
class DerivedPort:
    """``states(principal=, refs=, ceiling=, scope=, now=)``: the refs that no longer hold,
    by ID; ``credit(principal=, derived_ids=, now=, gain=)``: raise those derived items'
    utility (bounded) and stamp last use, returning how many changed. Both join the caller's
    owner context and transaction."""

    states: Callable[..., dict[UUID, FrozenState]]
    credit: Callable[..., int]


_derived: Optional[DerivedPort] = None


def register_derived(port: DerivedPort) -> DerivedPort:
    global _derived
    _derived = port
    return port


def derived_port() -> Optional[DerivedPort]:
    return _derived

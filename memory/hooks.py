"""The invalidation hook: how later apps react to changes of originals.

``memory`` knows nothing of recall or reconsolidation. They register a listener here;
every content change and erasure publishes one ``ContentChange`` *inside* the
transaction that makes it, so a listener's writes (deleting a vector, invalidating a
derived operation) commit or roll back with the change itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal
from uuid import UUID

from veetbot.identity import Principal

ChangeKind = Literal["created", "revised", "retracted", "expired", "erased"]


@dataclass(frozen=True)
class ContentChange:
    principal: Principal
    kind: ChangeKind
    memory_ids: tuple[UUID, ...]


Listener = Callable[[ContentChange], None]
_listeners: list[Listener] = []


def register(listener: Listener) -> Listener:
    """Register ``listener`` (usable as a decorator); registering twice is harmless."""
    if listener not in _listeners:
        _listeners.append(listener)
    return listener


def unregister(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def publish(change: ContentChange) -> None:
    if change.memory_ids:
        for listener in list(_listeners):
            listener(change)

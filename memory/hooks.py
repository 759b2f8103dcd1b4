"""The invalidation hook: how later apps react to changes of originals.

``memory`` knows nothing of recall or reconsolidation. They register a listener here;
every content change and erasure publishes one ``ContentChange`` *inside* the
transaction that makes it, so a listener's writes (deleting a vector, invalidating a
derived operation) commit or roll back with the change itself.

Erasing a conversation (or the whole account) publishes one ``SessionsErased`` the same way,
so what a later app keeps per conversation (recall's frozen snapshot and its traces) goes in
the erasure's own transaction.
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


def _add(listeners: list, listener):
    if listener not in listeners:
        listeners.append(listener)
    return listener


def _notify(listeners: list, change, ids: tuple) -> None:
    """Every listener in registration order; nothing for a change that names no ID."""
    if ids:
        for listener in list(listeners):
            listener(change)


def register(listener: Listener) -> Listener:
    """Register ``listener`` (usable as a decorator); registering twice is harmless."""
    return _add(_listeners, listener)


def unregister(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def publish(change: ContentChange) -> None:
    _notify(_listeners, change, change.memory_ids)


@dataclass(frozen=True)
class SessionsErased:
    principal: Principal
    session_ids: tuple[UUID, ...]


SessionListener = Callable[[SessionsErased], None]
_session_listeners: list[SessionListener] = []


def register_session_erasure(listener: SessionListener) -> SessionListener:
    """Register ``listener`` for conversation erasures; registering twice is harmless."""
    return _add(_session_listeners, listener)


def publish_session_erasure(change: SessionsErased) -> None:
    _notify(_session_listeners, change, change.session_ids)

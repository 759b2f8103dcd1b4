"""Strict reading of a memory-bank@1 document, and the problem list every stage reports into.

JSON itself is permissive where this format must not be: a repeated key silently keeps the
last value, and ``NaN``/``Infinity`` are accepted by Python's parser. Here a repeated key is
a problem named by its JSON path, and a non-finite constant becomes a marker that no field
accepts (so it is reported where it stands, as a wrong type). This module never touches the
database.
"""
from __future__ import annotations

import json
import re
from typing import Any, Optional

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def key_path(path: str, key: str) -> str:
    """``path.key``, or ``path["odd key"]`` when the key is not a plain identifier."""
    if _IDENTIFIER.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


class Problems:
    """Problems as ``path: message`` lines, kept in document order.

    A check that can only be finished later (against the stored rows) reserves its place
    with ``reserve()`` while the document is walked, so its problem still lands where the
    path is in the document.
    """

    def __init__(self) -> None:
        self._items: list[tuple[int, int, str]] = []
        self._next = 0

    def reserve(self) -> int:
        self._next += 1
        return self._next

    def add(self, path: str, message: str, *, at: Optional[int] = None) -> None:
        order = self.reserve() if at is None else at
        self._items.append((order, len(self._items), f"{path or '$'}: {message}"))

    def __bool__(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def lines(self) -> list[str]:
        return [text for _, _, text in sorted(self._items)]


class NonFinite:
    """Stands in for ``NaN``/``Infinity``/``-Infinity``: never a valid value of any field."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal

    def __repr__(self) -> str:
        return self.literal


class _Repeated(dict):
    """An object in which some key occurred more than once (the last value is kept)."""

    repeated: tuple[str, ...] = ()


def parse_document(data: bytes | str, problems: Problems) -> Any:
    """The parsed document, or None (with the reason in ``problems``) if it is not JSON."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.add("$", f"not UTF-8 text (byte {error.start})")
            return None
    found_repeats = False

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict:
        nonlocal found_repeats
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        found_repeats = True
        seen: set[str] = set()
        repeated: list[str] = []
        for key, _ in pairs:
            if key in seen and key not in repeated:
                repeated.append(key)
            seen.add(key)
        marked = _Repeated(obj)
        marked.repeated = tuple(repeated)
        return marked

    try:
        document = json.loads(data, object_pairs_hook=pairs_hook, parse_constant=NonFinite)
    except json.JSONDecodeError as error:
        problems.add("$", f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})")
        return None
    except RecursionError:
        problems.add("$", "not valid JSON: nested too deeply")
        return None
    if found_repeats:
        _report_repeats(document, "", problems)
    return document


def _report_repeats(value: Any, path: str, problems: Problems) -> None:
    # Iterative, so a deeply nested document cannot exhaust the stack here either.
    stack = [(value, path)]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            for key in getattr(value, "repeated", ()):
                problems.add(key_path(path, key), "duplicate key")
            stack.extend((item, key_path(path, key)) for key, item in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{index}]") for index, item in reversed(list(enumerate(value))))

"""Waiting for background work (beat, workers) the way a person would: look again until
it shows, within a bound, and say what never showed."""
from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def eventually(probe: Callable[[], T], *, timeout: float, what: str, every: float = 0.5) -> T:
    """``probe()`` until it returns something truthy; fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout} s (last seen: {last!r})")


def dump_tables_containing(dump: str, needle: str) -> set[str]:
    """The tables whose rows in a ``pg_dump --data-only`` text hold ``needle``."""
    tables, current = set(), None
    for line in dump.splitlines():
        if line.startswith("COPY "):
            current = line.split()[1].split(".")[-1]
        elif line == "\\.":
            current = None
        elif needle in line:
            tables.add(current or "(outside any table)")
    return tables

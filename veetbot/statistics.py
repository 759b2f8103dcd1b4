"""Planner statistics after a bulk write, so the next read is planned for the new data.

Right after a bulk import into tables the planner has not analysed, it has no statistics
until autovacuum's first pass (up to a minute later): every owner-prefixed index then looks
as cheap as the primary key, and recall's per-ID probes took 100-400 ms at 1,000 memories
(measured by the recall load benchmark). Operator commands that write in bulk therefore
ANALYZE what they wrote. The runtime role owns no table and may not analyse one, so this
runs on the schema owner's connection (the ``owner`` alias migrations use); ANALYZE reads a
sample of rows to compute statistics and returns nothing.

A bulk import also needs statistics *while* it writes: its foreign-key checks are planned
from them (``analyze_import_tables``, memory migration 0005).
"""
from __future__ import annotations

import time
from typing import Sequence

from django.conf import settings
from django.db import connection, connections

ORIGINALS = ("memory_memory", "memory_memorysource", "memory_event")
VECTORS = ("recall_memoryvector",)


def analyze(tables: Sequence[str]) -> float:
    """ANALYZE ``tables`` (names from this module, never from input); the seconds taken."""
    known = set(ORIGINALS) | set(VECTORS)
    if not tables or not set(tables) <= known:
        raise ValueError("analyze only the tables this module names")
    began = time.perf_counter()
    with connections["owner"].cursor() as cursor:
        cursor.execute("ANALYZE " + ", ".join(tables))
    return round(time.perf_counter() - began, 2)


def analyze_import_tables() -> bool:
    """ANALYZE, inside the caller's (the import's) transaction, the tables its foreign-key
    checks read, counting the rows it has written so far; False when another transaction
    held them past ``IMPORT_ANALYZE_LOCK_MS`` (nothing analysed, nothing else changed)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT memory_import_analyze(%s)", [int(settings.IMPORT_ANALYZE_LOCK_MS)])
        return bool(cursor.fetchone()[0])

"""Export of one owner's original memory bank as a memory-bank@1 document.

What is written is exactly what import accepts, so export → import into a fresh owner →
export gives the same bytes, and re-importing an export into its own owner is a no-op:

* Erased rows are left out (their prose is gone), and so are beliefs with status
  ``deleted`` — the live system reaches that status only through erasure.
* Order depends only on exported fields: people by (name, id), sessions by
  (started_at, id), events by (created_at, id) with parts in position order, beliefs by
  (created_at, id) — the order import allocates ``creation_sequence`` in — with sources in
  position order. Instants are UTC with a ``Z``.
* What the format has no field for is not carried: an event's ``excluded`` flag, review
  flags and rejections, usage (utility, last use) and the allocated sequences.

The document is streamed one item per line (diff-friendly), never held whole in memory.
Read-only: this module never writes a row.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Iterable, Iterator, TextIO

from django.conf import settings
from django.db import connection

from memory.bank.validate import FORMAT, MEMORY_FIELDS
from memory.domain import Value
from memory.models import Event, EventPart, Memory, MemorySource, Person, Session
from veetbot.identity import Principal
from veetbot.rls import owner_context


class ExportCounts(Value):
    memories: int
    events: int
    sessions: int
    people: int


def instant(value: datetime) -> str:
    """An aware instant as ISO 8601 UTC with ``Z`` (microseconds only when present)."""
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _chunks(rows: Iterator[tuple], size: int) -> Iterator[list[tuple]]:
    chunk: list[tuple] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _people() -> Iterator[dict]:
    rows = Person.objects.filter(erased_at__isnull=True).order_by("name", "id").values_list("id", "name")
    for person_id, name in rows.iterator(chunk_size=settings.IMPORT_BATCH_ROWS):
        yield {"id": str(person_id), "name": name}


def _sessions() -> Iterator[dict]:
    rows = Session.objects.filter(erased_at__isnull=True).order_by("started_at", "id")
    for session_id, scope, started_at in rows.values_list("id", "scope", "started_at").iterator(
            chunk_size=settings.IMPORT_BATCH_ROWS):
        yield {"id": str(session_id), "scope": scope, "started_at": instant(started_at)}


def _events() -> Iterator[dict]:
    size = settings.IMPORT_BATCH_ROWS
    rows = Event.objects.filter(erased_at__isnull=True).order_by("created_at", "id").values_list(
        "id", "session_id", "kind", "speaker", "created_at")
    for chunk in _chunks(rows.iterator(chunk_size=size), size):
        parts: dict = {}
        for event_id, part_id, text in EventPart.objects.filter(event_id__in=[row[0] for row in chunk]).order_by(
                "event_id", "position").values_list("event_id", "id", "text"):
            parts.setdefault(event_id, []).append({"id": str(part_id), "text": text})
        for event_id, session_id, kind, speaker, created_at in chunk:
            yield {"id": str(event_id), "session": str(session_id), "kind": kind, "speaker": speaker,
                   "created_at": instant(created_at), "parts": parts.get(event_id, [])}


def _memories() -> Iterator[dict]:
    size = settings.IMPORT_BATCH_ROWS
    columns = [name for name in MEMORY_FIELDS if name != "sources"]
    rows = (Memory.objects.filter(erased_at__isnull=True).exclude(status="deleted")
            .order_by("created_at", "id").values_list(*columns))
    for chunk in _chunks(rows.iterator(chunk_size=size), size):
        sources: dict = {}
        for memory_id, event_id, part_id in MemorySource.objects.filter(
                memory_id__in=[row[0] for row in chunk]).order_by("memory_id", "position").values_list(
                "memory_id", "event_id", "part_id"):
            sources.setdefault(memory_id, []).append({"event": str(event_id), "part": str(part_id)})
        for row in chunk:
            item = dict(zip(columns, row))
            memory_id = item["id"]
            item["id"] = str(memory_id)
            for name in ("evidence_at", "valid_from", "expires_at", "created_at"):
                if item[name] is not None:
                    item[name] = instant(item[name])
            item["entity_ids"] = list(item["entity_ids"])
            item["sources"] = sources.get(memory_id, [])
            yield item


def _section(out: TextIO, name: str, items: Iterable[dict], last: bool = False) -> int:
    count = 0
    out.write(f'  "{name}": [')
    for item in items:
        out.write(",\n    " if count else "\n    ")
        out.write(json.dumps(item, ensure_ascii=False))
        count += 1
    out.write("\n  ]" if count else "]")
    out.write("\n" if last else ",\n")
    return count


def _hold_writers(principal: Principal) -> None:
    """Share-lock the owner lock row (if the owner has one): every writer takes it FOR UPDATE
    first, so no change of this owner commits between the export's queries."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM memory_ownerlock WHERE tenant_id = %s AND principal_id = %s FOR SHARE",
            [principal.tenant_id, principal.principal_id],
        )


def memory_bank_export(*, principal: Principal, out: TextIO) -> ExportCounts:
    """Write ``principal``'s bank to ``out`` as memory-bank@1, from one consistent snapshot."""
    with owner_context(principal):
        _hold_writers(principal)
        out.write(f'{{\n  "format": {json.dumps(FORMAT)},\n')
        people = _section(out, "people", _people())
        sessions = _section(out, "sessions", _sessions())
        events = _section(out, "events", _events())
        memories = _section(out, "memories", _memories(), last=True)
        out.write("}\n")
    return ExportCounts(memories=memories, events=events, sessions=sessions, people=people)

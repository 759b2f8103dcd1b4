"""Builders of small, valid memory-bank@1 documents for the import/export tests, plus the
row counting those tests use to prove that a refused import wrote nothing.

``small_bank()`` holds one person, two sessions (one user-scoped, one session-scoped), an
owner message with two parts, an assistant reply, a forwarded message from the person and
three memories (one attributed, session-scoped). Tests break one thing in a copy of it.
"""
from __future__ import annotations

import copy
import json
import uuid
from datetime import datetime, timedelta, timezone

from memory.models import (
    ChangeJournal, Event, EventPart, Memory, MemoryRevision, MemorySource, OwnerLock, Person, Rejection, Session,
)
from veetbot.rls import owner_context

FORMAT = "memory-bank@1"
T0 = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)


def new_id() -> str:
    return str(uuid.uuid4())


def at(seconds: float = 0) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def person(name: str = "Dana", **overrides) -> dict:
    return {"id": new_id(), "name": name, **overrides}


def session(scope: str = "user", started_at: str = at(0), **overrides) -> dict:
    item = {"id": new_id(), "scope": scope, "started_at": started_at}
    if scope == "session":
        item["scope"] = f"session:{item['id']}"
    item.update(overrides)
    return item


def event(session_item: dict, *texts: str, kind: str = "user.message.created", speaker: str = "owner",
          created_at: str = at(60), **overrides) -> dict:
    texts = texts or ("I prefer Celsius for weather.",)
    return {"id": new_id(), "session": session_item["id"], "kind": kind, "speaker": speaker,
            "created_at": created_at, "parts": [{"id": new_id(), "text": text} for text in texts], **overrides}


def memory(event_item: dict, part: int = 0, *, statement: str = "The owner prefers Celsius.",
           subject: str = "weather units", created_at: str = at(65), **overrides) -> dict:
    item = {
        "id": new_id(), "subject": subject, "statement": statement, "belief_type": "preference",
        "claim_kind": "claim", "polarity": "affirmed", "derivation": "explicit", "attribution": "owner",
        "authority": "USER", "sensitivity": "internal", "scope": "user", "portable": True, "confidence": 0.9,
        "evidence_at": event_item["created_at"], "valid_from": event_item["created_at"], "expires_at": None,
        "entity_ids": [], "status": "active", "created_at": created_at,
        "sources": [{"event": event_item["id"], "part": event_item["parts"][part]["id"]}],
    }
    item.update(overrides)
    return item


def bank(*, people=(), sessions=(), events=(), memories=()) -> dict:
    return {"format": FORMAT, "people": list(people), "sessions": list(sessions), "events": list(events),
            "memories": list(memories)}


def small_bank() -> dict:
    dana = person("Dana")
    chat = session("user", at(0))
    private = session("session", at(3600))
    said = event(chat, "I prefer Celsius for weather.", "And I live in Utrecht.", created_at=at(60))
    reply = event(chat, "Noted: Celsius.", kind="assistant.message.created", speaker="assistant", created_at=at(90))
    forwarded = event(private, "Dana: I am moving to Lisbon in May.", speaker=f"person:{dana['id']}",
                      created_at=at(3660))
    memories = [
        memory(said, 0, created_at=at(65)),
        memory(said, 1, subject="home city", statement="The owner lives in Utrecht.", belief_type="attribute",
               created_at=at(66), entity_ids=["place:utrecht"], expires_at=at(86400 * 365)),
        memory(forwarded, 0, subject="Dana's move", statement="Dana is moving to Lisbon in May.",
               belief_type="event", derivation="extracted", authority="EXTRACTED", attribution=f"person:{dana['id']}",
               sensitivity="sensitive", scope=private["scope"], portable=False, confidence=0.8,
               entity_ids=[f"person:{dana['id']}"], created_at=at(3665)),
    ]
    return bank(people=[dana], sessions=[chat, private], events=[said, reply, forwarded], memories=memories)


def copy_of(document: dict) -> dict:
    return copy.deepcopy(document)


def dumps(document) -> bytes:
    return json.dumps(document).encode()


TABLES = (Person, Session, Event, EventPart, Memory, MemorySource, MemoryRevision, ChangeJournal, Rejection)


def row_counts(principal) -> dict:
    """Rows of every memory table visible to ``principal``, and its allocators."""
    with owner_context(principal):
        counts = {model.__name__: model.objects.count() for model in TABLES}
        lock = OwnerLock.objects.values_list("next_creation_sequence", "next_journal_seq", "next_store_position").first()
    counts["OwnerLock"] = lock
    return counts


# Each table's natural key; the surrogate IDs of sources, revisions, journal entries and the
# owner lock are random (uuid4), so they are left out of what is compared.
_NATURAL_KEYS = {
    "memory_person": ("id",), "memory_session": ("id",), "memory_event": ("id",), "memory_eventpart": ("id",),
    "memory_memory": ("id",), "memory_memorysource": ("memory_id", "position"),
    "memory_memoryrevision": ("memory_id", "revision"), "memory_changejournal": ("seq",),
    "memory_ownerlock": ("tenant_id", "principal_id"),
}
_SURROGATE = {"memory_memorysource", "memory_memoryrevision", "memory_changejournal", "memory_ownerlock"}


def stored_rows(principal) -> dict[str, dict[str, str]]:
    """Every column of every row ``principal`` holds in the originals' tables (generated
    columns included), as ``{table: {natural key: canonical JSON}}``: what an import wrote,
    comparable across runs with the same owner, clock and document."""
    from django.db import connection

    rows: dict[str, dict[str, str]] = {}
    with owner_context(principal), connection.cursor() as cursor:
        for table, key in _NATURAL_KEYS.items():
            drop = " - 'id'" if table in _SURROGATE else ""
            cursor.execute(f"SELECT to_jsonb(t){drop} FROM {table} t")
            rows[table] = {
                "/".join(str(row[k]) for k in key): json.dumps(row, sort_keys=True)
                for (row,) in ((json.loads(r) if isinstance(r, str) else r,) for (r,) in cursor.fetchall())
            }
    return rows

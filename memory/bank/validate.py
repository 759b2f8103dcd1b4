"""Validation of a parsed memory-bank@1 document against the format's rules, without the database.

The walk visits people, sessions, events and memories in that order (whatever the key order
in the file), collects *every* problem with its JSON path, and turns each well-formed item
into a record for the importer. A reference the document itself cannot satisfy (an event
naming a session that is not in the file, a source citing an event imported earlier) is not
yet a problem: it becomes a ``Reference`` that the importer resolves against the owner's
stored rows, and its problem (if any) keeps its place in document order.

This module never touches the database and never writes.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Optional

from django.conf import settings
from pydantic import ValidationError

from memory import vocabulary
from memory.bank.parse import Problems, key_path
from memory.domain import CONTENT_FIELDS, MemoryDraft

FORMAT = "memory-bank@1"

TOP_FIELDS = ("format", "people", "sessions", "events", "memories")
PERSON_FIELDS = ("id", "name")
SESSION_FIELDS = ("id", "scope", "started_at")
EVENT_FIELDS = ("id", "session", "kind", "speaker", "created_at", "parts")
PART_FIELDS = ("id", "text")
SOURCE_FIELDS = ("event", "part")
MEMORY_FIELDS = (
    "id", "subject", "statement", "belief_type", "claim_kind", "polarity", "derivation",
    "attribution", "authority", "sensitivity", "scope", "portable", "confidence", "evidence_at",
    "valid_from", "expires_at", "entity_ids", "status", "created_at", "sources",
)
PERSON_NAME_MAX_CHARS = 200  # as memory.services.conversations.person_create
ENTITY_ID_MAX_CHARS = 200  # as memory.domain.MemoryContent
MEMORY_MAX_SOURCES = 64  # as memory.domain.MemoryDraft

# IDs are compared as text across the document and with the vocabulary patterns
# (person:<uuid>, session:<uuid>), so only the canonical lowercase form is accepted.
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
UUID_MESSAGE = "must be a UUID (lowercase, 8-4-4-4-12 hex digits)"
SCOPE_MESSAGE = "must be user, project:<name> or session:<uuid>"
_FIELDS = {
    name: (frozenset(fields), fields) for name, fields in (
        ("document", TOP_FIELDS), ("person", PERSON_FIELDS), ("session", SESSION_FIELDS), ("event", EVENT_FIELDS),
        ("part", PART_FIELDS), ("source", SOURCE_FIELDS), ("memory", MEMORY_FIELDS),
    )
}
_MEMORY_CHOICES = ("belief_type", "claim_kind", "polarity", "derivation", "authority", "sensitivity", "status")
_CHOICES = {
    "kind": vocabulary.EVENT_KINDS,
    "belief_type": vocabulary.BELIEF_TYPES,
    "claim_kind": vocabulary.CLAIM_KINDS,
    "polarity": vocabulary.POLARITIES,
    "derivation": vocabulary.DERIVATIONS,
    "authority": vocabulary.AUTHORITIES,
    "sensitivity": vocabulary.SENSITIVITIES,
    "status": vocabulary.STATUSES,
}
_CHOICE_SETS = {name: frozenset(values) for name, values in _CHOICES.items()}


@dataclass(slots=True)
class PersonRecord:
    order: int  # place in the problem list, for problems found against stored rows
    path: str
    id: str
    name: str


@dataclass(slots=True)
class SessionRecord:
    order: int  # place in the problem list, for problems found against stored rows
    path: str
    id: str
    scope: str
    started_at: datetime


@dataclass(slots=True)
class EventRecord:
    order: int  # place in the problem list, for problems found against stored rows
    path: str
    id: str
    session: str
    kind: str
    speaker: str
    created_at: datetime
    parts: list[tuple[str, str]]  # (part id, text) in position order


@dataclass(slots=True)
class MemoryRecord:
    order: int  # place in the problem list, for problems found against stored rows
    path: str
    id: str
    content: dict  # CONTENT_FIELDS -> Python values, as the Memory row holds them
    created_at: datetime
    sources: list[tuple[str, str]]  # (event id, part id) in position order
    draft: MemoryDraft


@dataclass(slots=True)
class Reference:
    """A reference the document does not satisfy; the importer checks the stored rows."""

    order: int
    path: str
    kind: Literal["session", "person", "source"]
    id: str
    part: Optional[str] = None  # for a source: the cited part


@dataclass
class Bank:
    people: list[PersonRecord] = field(default_factory=list)
    sessions: list[SessionRecord] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    memories: list[MemoryRecord] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    # Every ID the document declares -> the path of its "id" field.
    ids: dict[str, str] = field(default_factory=dict)


def validate_document(document: Any, problems: Problems) -> Bank:
    """Walk ``document``, add its problems to ``problems`` and return its well-formed records."""
    return _Walk(problems).run(document)


class _Walk:
    """One pass over the document. Paths are built only when a problem is found: a large
    bank is mostly valid, and formatting ~20 paths per memory would dominate the walk."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self.bank = Bank()
        # IDs by kind, registered as soon as the ID itself is valid, so one bad field of an
        # event does not also make every source citing it "unknown".
        self.people: set[str] = set()
        self.sessions: set[str] = set()
        self.event_parts: dict[str, set[str]] = {}

    # -- helpers: each takes the item's path and the field name ---------------------------

    def bad(self, path: str, message: str) -> None:
        self.problems.add(path, message)

    def obj(self, path: str, value: Any, expected: frozenset[str], order: tuple[str, ...]) -> bool:
        """Is ``value`` an object? Reports unknown and missing fields (and still returns True)."""
        if not isinstance(value, dict):
            self.bad(path, "must be an object")
            return False
        if value.keys() != expected:
            for key in value:
                if key not in expected:
                    self.bad(key_path(path, key), "unknown field")
            for key in order:
                if key not in value:
                    self.bad(key_path(path, key), "missing field")
        return True

    def new_id(self, path: str, item: dict) -> Optional[str]:
        """The item's valid, first-seen ID, registered document-wide; None otherwise."""
        if "id" not in item:
            return None  # reported as a missing field
        value = item["id"]
        if type(value) is not str or not _UUID.match(value):
            self.bad(f"{path}.id", UUID_MESSAGE)
            return None
        first = self.bank.ids.get(value)
        if first is not None:
            self.bad(f"{path}.id", f"duplicate id (first at {first})")
            return None
        self.bank.ids[value] = f"{path}.id"
        return value

    def uuid_ref(self, path: str, name: str, item: dict) -> Optional[str]:
        value = item.get(name)
        if type(value) is str and _UUID.match(value):
            return value
        if name in item:
            self.bad(f"{path}.{name}", UUID_MESSAGE)
        return None

    def when(self, path: str, name: str, value: Any) -> Optional[datetime]:
        if type(value) is not str:
            self.bad(f"{path}.{name}", "must be an ISO 8601 datetime string")
            return None
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            self.bad(f"{path}.{name}", "not an ISO 8601 datetime")
            return None
        if parsed.tzinfo is None or parsed.utcoffset() is None:
            self.bad(f"{path}.{name}", "naive datetime (needs a UTC offset, e.g. Z)")
            return None
        return parsed.astimezone(timezone.utc)

    def choice(self, path: str, name: str, value: Any) -> Optional[str]:
        if type(value) is str and value in _CHOICE_SETS[name]:
            return value
        self.bad(f"{path}.{name}", "must be one of: " + ", ".join(_CHOICES[name]))
        return None

    def text(self, path: str, name: str, value: Any, maximum: int, *, blank_ok: bool = True) -> Optional[str]:
        if type(value) is not str:
            self.bad(f"{path}.{name}", "must be a string")
            return None
        if not value or len(value) > maximum or (not blank_ok and not value.strip()):
            self.bad(f"{path}.{name}", f"must be 1-{maximum} characters")
            return None
        return value

    def person_ref(self, path: str, person_id: str) -> None:
        if person_id not in self.people:
            self.bank.references.append(Reference(self.problems.reserve(), path, "person", person_id))

    def session_ref(self, path: str, session_id: str) -> None:
        if session_id not in self.sessions:
            self.bank.references.append(Reference(self.problems.reserve(), path, "session", session_id))

    def items(self, document: dict, name: str) -> list:
        if name not in document:
            return []  # reported as a missing field already
        value = document[name]
        if not isinstance(value, list):
            self.bad(name, "must be a list")
            return []
        return value

    # -- the walk ------------------------------------------------------------------------

    def run(self, document: Any) -> Bank:
        if not self.obj("", document, *_FIELDS["document"]):
            return self.bank
        if "format" in document and (type(document["format"]) is not str or document["format"] != FORMAT):
            self.bad("format", f'must be "{FORMAT}"')
        for index, item in enumerate(self.items(document, "people")):
            self.person(f"people[{index}]", item)
        for index, item in enumerate(self.items(document, "sessions")):
            self.session(f"sessions[{index}]", item)
        for index, item in enumerate(self.items(document, "events")):
            self.event(f"events[{index}]", item)
        for index, item in enumerate(self.items(document, "memories")):
            self.memory(f"memories[{index}]", item)
        return self.bank

    def person(self, path: str, item: Any) -> None:
        before = len(self.problems)
        if not self.obj(path, item, *_FIELDS["person"]):
            return
        person_id = self.new_id(path, item)
        if person_id:
            self.people.add(person_id)
        name = self.text(path, "name", item["name"], PERSON_NAME_MAX_CHARS, blank_ok=False) if "name" in item else None
        if len(self.problems) == before:
            self.bank.people.append(PersonRecord(self.problems.reserve(), path, person_id, name))

    def session(self, path: str, item: Any) -> None:
        before = len(self.problems)
        if not self.obj(path, item, *_FIELDS["session"]):
            return
        session_id = self.new_id(path, item)
        if session_id:
            self.sessions.add(session_id)
        scope = item.get("scope")
        if "scope" in item:
            if type(scope) is not str or not vocabulary.SCOPE.match(scope):
                self.bad(f"{path}.scope", SCOPE_MESSAGE)
            elif scope.startswith("session:") and session_id and scope != f"session:{session_id}":
                self.bad(f"{path}.scope", "a session scope must name this session (session:<its id>)")
        started_at = self.when(path, "started_at", item["started_at"]) if "started_at" in item else None
        if len(self.problems) == before:
            self.bank.sessions.append(SessionRecord(self.problems.reserve(), path, session_id, scope, started_at))

    def event(self, path: str, item: Any) -> None:
        before = len(self.problems)
        if not self.obj(path, item, *_FIELDS["event"]):
            return
        event_id = self.new_id(path, item)
        session_id = self.uuid_ref(path, "session", item)
        if session_id:
            self.session_ref(f"{path}.session", session_id)
        kind = self.choice(path, "kind", item["kind"]) if "kind" in item else None
        speaker = item.get("speaker")
        if "speaker" in item:
            if type(speaker) is not str or not vocabulary.SPEAKER.match(speaker):
                self.bad(f"{path}.speaker", "must be owner, assistant, tool or person:<uuid>")
            elif speaker.startswith("person:"):
                self.person_ref(f"{path}.speaker", speaker[len("person:"):])
        created_at = self.when(path, "created_at", item["created_at"]) if "created_at" in item else None
        parts = self.parts(f"{path}.parts", item["parts"]) if "parts" in item else []
        if event_id:
            self.event_parts[event_id] = {part_id for part_id, _ in parts if part_id}
        if len(self.problems) == before:
            self.bank.events.append(
                EventRecord(self.problems.reserve(), path, event_id, session_id, kind, speaker, created_at, parts))

    def parts(self, path: str, value: Any) -> list[tuple[str, str]]:
        if not isinstance(value, list):
            self.bad(path, "must be a list")
            return []
        if not 1 <= len(value) <= settings.EVENT_MAX_PARTS:
            self.bad(path, f"must hold 1-{settings.EVENT_MAX_PARTS} parts")
        parts = []
        for index, part in enumerate(value):
            where = f"{path}[{index}]"
            if not self.obj(where, part, *_FIELDS["part"]):
                continue
            part_id = self.new_id(where, part)
            text = self.text(where, "text", part["text"], settings.EVENT_PART_MAX_CHARS) if "text" in part else None
            parts.append((part_id, text))
        return parts

    def memory(self, path: str, item: Any) -> None:
        before = len(self.problems)
        if not self.obj(path, item, *_FIELDS["memory"]):
            return
        memory_id = self.new_id(path, item)
        content: dict[str, Any] = {}
        if "subject" in item:
            content["subject"] = self.text(path, "subject", item["subject"], settings.MEMORY_SUBJECT_MAX_CHARS)
        if "statement" in item:
            content["statement"] = self.text(path, "statement", item["statement"], settings.MEMORY_STATEMENT_MAX_CHARS)
        for name in _MEMORY_CHOICES:
            if name in item:
                content[name] = self.choice(path, name, item[name])
        if "attribution" in item:
            attribution = content["attribution"] = item["attribution"]
            if type(attribution) is not str or not vocabulary.ATTRIBUTION.match(attribution):
                self.bad(f"{path}.attribution", "must be owner or person:<uuid>")
            elif attribution.startswith("person:"):
                self.person_ref(f"{path}.attribution", attribution[len("person:"):])
        if "scope" in item:
            scope = content["scope"] = item["scope"]
            if type(scope) is not str or not vocabulary.SCOPE.match(scope):
                self.bad(f"{path}.scope", SCOPE_MESSAGE)
            elif scope.startswith("session:"):
                self.session_ref(f"{path}.scope", scope[len("session:"):])
        if "portable" in item:
            content["portable"] = item["portable"]
            if type(content["portable"]) is not bool:
                self.bad(f"{path}.portable", "must be true or false")
        if "confidence" in item:
            confidence = item["confidence"]
            # bool is an int in Python, but true is not a confidence (hence type(), not isinstance).
            if not (type(confidence) is int or (type(confidence) is float and math.isfinite(confidence))):
                self.bad(f"{path}.confidence", "must be a number")
            elif not 0 <= confidence <= 1:
                self.bad(f"{path}.confidence", "outside [0, 1]")
            else:
                content["confidence"] = float(confidence)
        for name in ("evidence_at", "valid_from"):
            if name in item:
                content[name] = self.when(path, name, item[name])
        if "expires_at" in item:
            value = item["expires_at"]
            expires_at = content["expires_at"] = None if value is None else self.when(path, "expires_at", value)
            valid_from = content.get("valid_from")
            if expires_at is not None and valid_from is not None and expires_at <= valid_from:
                self.bad(f"{path}.expires_at", "not after valid_from")
        if "entity_ids" in item:
            content["entity_ids"] = self.entity_ids(f"{path}.entity_ids", item["entity_ids"])
        created_at = self.when(path, "created_at", item["created_at"]) if "created_at" in item else None
        sources = self.sources(f"{path}.sources", item["sources"]) if "sources" in item else []
        if len(self.problems) != before:
            return
        draft = self.draft(path, memory_id, content, created_at, sources)
        if draft is not None:
            self.bank.memories.append(
                MemoryRecord(self.problems.reserve(), path, memory_id, content, created_at, sources, draft))

    def entity_ids(self, path: str, value: Any) -> list[str]:
        if not isinstance(value, list):
            self.bad(path, "must be a list of strings")
            return []
        for index, entity in enumerate(value):
            if type(entity) is not str or not 1 <= len(entity) <= ENTITY_ID_MAX_CHARS:
                self.bad(f"{path}[{index}]", f"must be a string of 1-{ENTITY_ID_MAX_CHARS} characters")
            elif match := vocabulary.PERSON_REF.match(entity):
                self.person_ref(f"{path}[{index}]", match.group(1))
        return list(value)

    def sources(self, path: str, value: Any) -> list[tuple[str, str]]:
        if not isinstance(value, list):
            self.bad(path, "must be a list")
            return []
        if not 1 <= len(value) <= MEMORY_MAX_SOURCES:
            self.bad(path, f"must hold 1-{MEMORY_MAX_SOURCES} sources")
        sources = []
        cited: set[str] = set()
        for index, source in enumerate(value):
            where = f"{path}[{index}]"
            if not self.obj(where, source, *_FIELDS["source"]):
                continue
            event_id = self.uuid_ref(where, "event", source)
            part_id = self.uuid_ref(where, "part", source)
            if not (event_id and part_id):
                continue
            if part_id in cited:
                self.bad(f"{where}.part", "repeated part (already cited by this memory)")
                continue
            cited.add(part_id)
            parts = self.event_parts.get(event_id)
            if parts is None:
                self.bank.references.append(Reference(self.problems.reserve(), where, "source", event_id, part_id))
            elif part_id not in parts:
                self.bad(f"{where}.part", "not a part of that event")
            sources.append((event_id, part_id))
        return sources

    def draft(self, path, memory_id, content, created_at, sources) -> Optional[MemoryDraft]:
        """The draft live creation would take; its own validation is the last word."""
        try:
            return MemoryDraft.model_validate({
                **content, "id": memory_id, "created_at": created_at,
                "sources": [{"event": event, "part": part} for event, part in sources],
            })
        except ValidationError as error:
            for detail in error.errors():
                where = path
                for step in detail["loc"]:
                    where = f"{where}[{step}]" if isinstance(step, int) else key_path(where, str(step))
                self.bad(where, detail["msg"])
            return None


assert set(MEMORY_FIELDS) == set(CONTENT_FIELDS) | {"id", "created_at", "sources"}

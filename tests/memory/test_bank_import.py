"""import_memory_bank: every rule of memory-bank-format.md, the creation and revision paths it
must share with live writes, and the command's interface.

A refused import must name every problem by JSON path and write nothing: ``refused()``
counts the rows of every memory table (and the owner's allocators) before and after.
"""
from __future__ import annotations

import io
import json
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from memory import hooks, services
from memory.bank import memory_bank_import
from memory.bank.importer import ERASED, IN_USE
from memory.errors import Invalid
from memory.models import ChangeJournal, Event, EventPart, Memory, MemoryRevision, MemorySource, Person
from memory.vocabulary import (
    AUTHORITIES, BELIEF_TYPES, CLAIM_KINDS, DERIVATIONS, EVENT_KINDS, POLARITIES, SENSITIVITIES, STATUSES,
)
from tests.conftest import WITH_OWNER_ALIAS, new_principal
from tests.memory import bank_docs as docs
from veetbot.rls import owner_context

UUID_MESSAGE = "must be a UUID (lowercase, 8-4-4-4-12 hex digits)"
DEMO_BANK = Path(__file__).resolve().parents[2] / "evals" / "fixtures" / "demo-bank.json"


def load(principal, document, *, update=False):
    data = document if isinstance(document, (bytes, str)) else docs.dumps(document)
    return memory_bank_import(principal=principal, data=data, update=update)


def refused(principal, document, *, update=False) -> list[str]:
    """Import ``document``: assert it is refused and that nothing was written; the problems."""
    before = docs.row_counts(principal)
    with pytest.raises(Invalid) as caught:
        load(principal, document, update=update)
    assert docs.row_counts(principal) == before
    return caught.value.problems


def stored_memories(principal) -> dict[str, Memory]:
    with owner_context(principal):
        return {str(row.id): row for row in Memory.objects.all()}


def journal(principal) -> list[tuple[str, str, int]]:
    with owner_context(principal):
        return [(str(m), k, r) for m, k, r in
                ChangeJournal.objects.order_by("seq").values_list("memory_id", "kind", "content_revision")]


@pytest.fixture
def principal():
    return new_principal()


@pytest.fixture
def doc():
    return docs.small_bank()


# -- strict JSON -----------------------------------------------------------------------------

def test_invalid_json_is_refused_with_its_position(db, principal):
    assert refused(principal, b'{"format": ') == ["$: not valid JSON: Expecting value (line 1, column 12)"]


def test_text_that_is_not_utf8_is_refused(db, principal):
    assert refused(principal, b'{"format": "\xff"}') == ["$: not UTF-8 text (byte 12)"]


def test_duplicate_json_key_is_refused_with_its_path(db, principal, doc):
    text = docs.dumps(doc).decode().replace('"subject": "weather units"', '"subject": "x", "subject": "weather units"', 1)
    assert refused(principal, text) == ["memories[0].subject: duplicate key"]


def test_duplicate_top_level_key_is_refused(db, principal, doc):
    text = docs.dumps(doc).decode().replace('"format": "memory-bank@1"', '"format": "memory-bank@1", "format": "memory-bank@1"')
    assert refused(principal, text) == ["format: duplicate key"]


def test_deeply_nested_json_is_refused(db, principal):
    assert refused(principal, b"[" * 100_000 + b"]" * 100_000) == ["$: not valid JSON: nested too deeply"]


def test_duplicate_keys_are_found_anywhere_even_inside_unknown_fields(db, principal, doc):
    doc["memories"][0]["notes"] = {"a": 1}
    text = docs.dumps(doc).decode().replace('{"a": 1}', '{"a": 1, "a": 2}')
    assert refused(principal, text) == ["memories[0].notes.a: duplicate key", "memories[0].notes: unknown field"]


@pytest.mark.parametrize("literal", ["1e400", "1" + "0" * 400, "-Infinity"], ids=["overflow", "huge-int", "infinity"])
def test_numbers_beyond_floats_are_refused(db, principal, doc, literal):
    text = docs.dumps(doc).decode().replace('"confidence": 0.9', f'"confidence": {literal}', 1)
    expected = "outside [0, 1]" if literal.startswith("1" + "0") else "must be a number"
    assert refused(principal, text) == [f"memories[0].confidence: {expected}"]


def test_nan_is_not_a_number(db, principal, doc):
    text = docs.dumps(doc).decode().replace('"confidence": 0.9', '"confidence": NaN', 1)
    assert refused(principal, text) == ["memories[0].confidence: must be a number"]


# -- shape -----------------------------------------------------------------------------------

def test_document_must_be_an_object(db, principal):
    assert refused(principal, b"[]") == ["$: must be an object"]


def test_format_must_be_memory_bank_1(db, principal, doc):
    doc["format"] = "memory-bank@2"
    assert refused(principal, doc) == ['format: must be "memory-bank@1"']


def test_section_must_be_a_list(db, principal, doc):
    doc["people"] = {}
    problems = refused(principal, doc)
    # Without its people, the references to Dana are unknown too.
    assert problems[0] == "people: must be a list"
    assert set(problems[1:]) == {"events[2].speaker: unknown person", "memories[2].attribution: unknown person",
                                 "memories[2].entity_ids[0]: unknown person"}


def test_item_must_be_an_object(db, principal, doc):
    doc["memories"][1] = "The owner lives in Utrecht."
    assert refused(principal, doc) == ["memories[1]: must be an object"]


UNKNOWN_FIELD_AT = {
    "document": lambda d: d,
    "person": lambda d: d["people"][0],
    "session": lambda d: d["sessions"][0],
    "event": lambda d: d["events"][0],
    "part": lambda d: d["events"][0]["parts"][1],
    "memory": lambda d: d["memories"][1],
    "source": lambda d: d["memories"][1]["sources"][0],
}
UNKNOWN_FIELD_PATH = {
    "document": "colour", "person": "people[0].colour", "session": "sessions[0].colour",
    "event": "events[0].colour", "part": "events[0].parts[1].colour", "memory": "memories[1].colour",
    "source": "memories[1].sources[0].colour",
}


@pytest.mark.parametrize("level", sorted(UNKNOWN_FIELD_AT))
def test_unknown_fields_are_refused_at_every_level(db, principal, doc, level):
    UNKNOWN_FIELD_AT[level](doc)["colour"] = "blue"
    assert refused(principal, doc) == [f"{UNKNOWN_FIELD_PATH[level]}: unknown field"]


def test_unknown_field_with_an_odd_name_is_quoted_in_the_path(db, principal, doc):
    doc["memories"][0]["two words"] = 1
    assert refused(principal, doc) == ['memories[0]["two words"]: unknown field']


MISSING = {
    "format": lambda d: d.pop("format"),
    "people[0].name": lambda d: d["people"][0].pop("name"),
    "sessions[0].started_at": lambda d: d["sessions"][0].pop("started_at"),
    "events[1].speaker": lambda d: d["events"][1].pop("speaker"),
    "events[0].parts[0].text": lambda d: d["events"][0]["parts"][0].pop("text"),
    "memories[0].expires_at": lambda d: d["memories"][0].pop("expires_at"),
    "memories[0].status": lambda d: d["memories"][0].pop("status"),
    "memories[0].sources[0].part": lambda d: d["memories"][0]["sources"][0].pop("part"),
}


@pytest.mark.parametrize("path", sorted(MISSING))
def test_missing_required_fields_are_refused(db, principal, doc, path):
    MISSING[path](doc)
    assert refused(principal, doc) == [f"{path}: missing field"]


# -- IDs -------------------------------------------------------------------------------------

def test_duplicate_ids_across_the_document_are_refused(db, principal, doc):
    doc["memories"][1]["id"] = doc["people"][0]["id"]
    assert refused(principal, doc) == ["memories[1].id: duplicate id (first at people[0].id)"]


def test_part_id_repeating_an_event_id_is_refused(db, principal, doc):
    doc["events"][1]["parts"][0]["id"] = doc["events"][0]["id"]
    assert refused(principal, doc) == ["events[1].parts[0].id: duplicate id (first at events[0].id)"]


@pytest.mark.parametrize("value", [
    "42", 42, None, "6F1C1A8E-1B7A-4F64-9D39-0E2F3F4B5A61", "6f1c1a8e1b7a4f649d390e2f3f4b5a61",
    "{6f1c1a8e-1b7a-4f64-9d39-0e2f3f4b5a61}",
], ids=["digits", "number", "null", "uppercase", "no-hyphens", "braces"])
def test_non_uuid_ids_are_refused(db, principal, doc, value):
    doc["memories"][0]["id"] = value
    assert refused(principal, doc) == [f"memories[0].id: {UUID_MESSAGE}"]


def test_non_uuid_references_are_refused(db, principal, doc):
    doc["events"][1]["session"] = "chat-1"
    doc["memories"][0]["sources"][0]["event"] = 7
    assert refused(principal, doc) == [f"events[1].session: {UUID_MESSAGE}",
                                       f"memories[0].sources[0].event: {UUID_MESSAGE}"]


# -- datetimes -------------------------------------------------------------------------------

NAIVE = {
    "sessions[0].started_at": lambda d, v: d["sessions"][0].__setitem__("started_at", v),
    "events[0].created_at": lambda d, v: d["events"][0].__setitem__("created_at", v),
    "memories[0].evidence_at": lambda d, v: d["memories"][0].__setitem__("evidence_at", v),
    "memories[0].valid_from": lambda d, v: d["memories"][0].__setitem__("valid_from", v),
    "memories[1].expires_at": lambda d, v: d["memories"][1].__setitem__("expires_at", v),
    "memories[0].created_at": lambda d, v: d["memories"][0].__setitem__("created_at", v),
}


@pytest.mark.parametrize("path", sorted(NAIVE))
def test_naive_datetimes_are_refused(db, principal, doc, path):
    NAIVE[path](doc, "2027-09-01T09:00:00")
    assert refused(principal, doc) == [f"{path}: naive datetime (needs a UTC offset, e.g. Z)"]


def test_datetimes_with_an_offset_are_accepted_as_utc(db, principal, doc):
    doc["memories"][0]["created_at"] = "2026-09-01T11:01:05+02:00"
    load(principal, doc)
    assert stored_memories(principal)[doc["memories"][0]["id"]].created_at.isoformat() == "2026-09-01T09:01:05+00:00"


@pytest.mark.parametrize("value, message", [
    ("yesterday", "not an ISO 8601 datetime"), (1788253200, "must be an ISO 8601 datetime string"),
    ("2026-02-30T09:00:00Z", "not an ISO 8601 datetime"),
])
def test_unreadable_datetimes_are_refused(db, principal, doc, value, message):
    doc["events"][1]["created_at"] = value
    assert refused(principal, doc) == [f"events[1].created_at: {message}"]


# -- values outside the tables ---------------------------------------------------------------

TABLE_FIELDS = {
    "events[0].kind": EVENT_KINDS, "memories[0].belief_type": BELIEF_TYPES, "memories[0].claim_kind": CLAIM_KINDS,
    "memories[0].polarity": POLARITIES, "memories[0].derivation": DERIVATIONS,
    "memories[0].authority": AUTHORITIES, "memories[0].sensitivity": SENSITIVITIES, "memories[0].status": STATUSES,
}


def _set(doc, path, value):
    section, rest = path.split("[", 1)
    index, name = rest.split("].", 1)
    doc[section][int(index)][name] = value


@pytest.mark.parametrize("path", sorted(TABLE_FIELDS))
def test_values_outside_the_tables_are_refused(db, principal, doc, path):
    _set(doc, path, "secret")
    assert refused(principal, doc) == [f"{path}: must be one of: {', '.join(TABLE_FIELDS[path])}"]


def test_table_values_are_case_sensitive(db, principal, doc):
    doc["memories"][0]["authority"] = "user"
    assert refused(principal, doc) == [f"memories[0].authority: must be one of: {', '.join(AUTHORITIES)}"]


@pytest.mark.parametrize("path, value, message", [
    ("events[0].speaker", "bot", "must be owner, assistant, tool or person:<uuid>"),
    ("events[0].speaker", "person:dana", "must be owner, assistant, tool or person:<uuid>"),
    ("memories[0].attribution", "assistant", "must be owner or person:<uuid>"),
    ("memories[0].scope", "team", "must be user, project:<name> or session:<uuid>"),
    ("memories[0].scope", "project:", "must be user, project:<name> or session:<uuid>"),
    ("sessions[0].scope", "global", "must be user, project:<name> or session:<uuid>"),
    ("memories[0].portable", "yes", "must be true or false"),
])
def test_patterned_values_outside_the_tables_are_refused(db, principal, doc, path, value, message):
    _set(doc, path, value)
    assert refused(principal, doc) == [f"{path}: {message}"]


def test_project_scopes_are_accepted(db, principal, doc):
    doc["sessions"][0]["scope"] = "project:garden"
    doc["memories"][0]["scope"] = "project:garden"
    assert load(principal, doc).memories == 3


def test_session_scope_must_name_its_own_session(db, principal, doc):
    doc["sessions"][1]["scope"] = f"session:{doc['sessions'][0]['id']}"
    assert refused(principal, doc) == ["sessions[1].scope: a session scope must name this session (session:<its id>)"]


# -- numbers and text ------------------------------------------------------------------------

@pytest.mark.parametrize("value", [1.5, -0.01, 2])
def test_confidence_outside_the_unit_interval_is_refused(db, principal, doc, value):
    doc["memories"][0]["confidence"] = value
    assert refused(principal, doc) == ["memories[0].confidence: outside [0, 1]"]


@pytest.mark.parametrize("value", [True, False, "0.9", None], ids=["true", "false", "string", "null"])
def test_confidence_must_be_a_number_and_bool_is_not(db, principal, doc, value):
    doc["memories"][0]["confidence"] = value
    assert refused(principal, doc) == ["memories[0].confidence: must be a number"]


def test_confidence_bounds_are_accepted(db, principal, doc):
    doc["memories"][0]["confidence"], doc["memories"][1]["confidence"] = 0, 1
    load(principal, doc)
    stored = stored_memories(principal)
    assert stored[doc["memories"][0]["id"]].confidence == 0.0 and stored[doc["memories"][1]["id"]].confidence == 1.0


@pytest.mark.parametrize("expires_at", [docs.at(60), docs.at(0)], ids=["equal", "before"])
def test_expiry_not_after_valid_from_is_refused(db, principal, doc, expires_at):
    doc["memories"][1]["expires_at"] = expires_at  # valid_from is at(60)
    assert refused(principal, doc) == ["memories[1].expires_at: not after valid_from"]


@pytest.mark.parametrize("path, value, message", [
    ("memories[0].statement", "", "must be 1-4000 characters"),
    ("memories[0].statement", "x" * 4001, "must be 1-4000 characters"),
    ("memories[0].subject", "x" * 201, "must be 1-200 characters"),
    ("memories[0].subject", 7, "must be a string"),
    ("people[0].name", "   ", "must be 1-200 characters"),
])
def test_text_outside_its_limits_is_refused(db, principal, doc, path, value, message):
    _set(doc, path, value)
    assert refused(principal, doc) == [f"{path}: {message}"]


def test_empty_event_part_text_is_refused(db, principal, doc):
    doc["events"][1]["parts"][0]["text"] = ""
    assert refused(principal, doc) == ["events[1].parts[0].text: must be 1-20000 characters"]


def test_event_without_parts_is_refused(db, principal, doc):
    doc["events"][1]["parts"] = []
    assert refused(principal, doc) == ["events[1].parts: must hold 1-32 parts"]


def test_entity_ids_must_be_short_strings(db, principal, doc):
    doc["memories"][0]["entity_ids"] = ["place:utrecht", "", 5]
    assert refused(principal, doc) == ["memories[0].entity_ids[1]: must be a string of 1-200 characters",
                                       "memories[0].entity_ids[2]: must be a string of 1-200 characters"]


# -- references ------------------------------------------------------------------------------

def test_source_naming_an_unknown_event_is_refused(db, principal, doc):
    doc["memories"][0]["sources"][0]["event"] = docs.new_id()
    assert refused(principal, doc) == ["memories[0].sources[0].event: unknown event"]


def test_source_naming_a_part_of_another_event_is_refused(db, principal, doc):
    doc["memories"][0]["sources"][0]["part"] = doc["events"][1]["parts"][0]["id"]
    assert refused(principal, doc) == ["memories[0].sources[0].part: not a part of that event"]


def test_source_citing_the_same_part_twice_is_refused(db, principal, doc):
    doc["memories"][0]["sources"].append(dict(doc["memories"][0]["sources"][0]))
    assert refused(principal, doc) == ["memories[0].sources[1].part: repeated part (already cited by this memory)"]


def test_memory_without_sources_is_refused(db, principal, doc):
    doc["memories"][0]["sources"] = []
    assert refused(principal, doc) == ["memories[0].sources: must hold 1-64 sources"]


def test_session_scoped_memory_naming_an_unknown_session_is_refused(db, principal, doc):
    doc["memories"][2]["scope"] = f"session:{docs.new_id()}"
    assert refused(principal, doc) == ["memories[2].scope: unknown session"]


def test_event_naming_an_unknown_session_is_refused(db, principal, doc):
    doc["events"][0]["session"] = docs.new_id()
    assert refused(principal, doc) == ["events[0].session: unknown session"]


def test_speaker_naming_an_unknown_person_is_refused(db, principal, doc):
    doc["events"][2]["speaker"] = f"person:{docs.new_id()}"
    assert refused(principal, doc) == ["events[2].speaker: unknown person"]


def test_attribution_and_entities_naming_an_unknown_person_are_refused(db, principal, doc):
    stranger = f"person:{docs.new_id()}"
    doc["memories"][2]["attribution"] = stranger
    doc["memories"][2]["entity_ids"] = [stranger]
    assert refused(principal, doc) == ["memories[2].attribution: unknown person",
                                       "memories[2].entity_ids[0]: unknown person"]


def test_a_reference_to_an_id_of_another_kind_is_unknown(db, principal, doc):
    doc["events"][0]["session"] = doc["people"][0]["id"]
    assert refused(principal, doc) == ["events[0].session: unknown session"]


def test_every_problem_is_reported_at_once_in_document_order(db, principal, doc):
    doc["memories"][1]["confidence"] = 3
    doc["memories"][0]["sources"][0]["event"] = docs.new_id()
    doc["events"][1]["kind"] = "chat"
    doc["people"][0]["nickname"] = "D"
    doc["sessions"][0]["started_at"] = "2026-09-01T09:00:00"
    assert refused(principal, doc) == [
        "people[0].nickname: unknown field",
        "sessions[0].started_at: naive datetime (needs a UTC offset, e.g. Z)",
        f"events[1].kind: must be one of: {', '.join(EVENT_KINDS)}",
        "memories[0].sources[0].event: unknown event",
        "memories[1].confidence: outside [0, 1]",
    ]


def test_references_may_name_rows_stored_by_an_earlier_import(db, principal, doc):
    memories = doc.pop("memories")
    load(principal, {**doc, "memories": []})
    counts = load(principal, docs.bank(memories=memories))
    assert (counts.memories, counts.events, counts.sessions, counts.people) == (3, 0, 0, 0)


def test_references_to_erased_rows_are_unknown(db, principal, doc):
    memories = doc.pop("memories")
    load(principal, {**doc, "memories": []})
    services.session_erase(principal=principal, session_id=uuid.UUID(doc["sessions"][1]["id"]))
    services.person_erase(principal=principal, person_id=uuid.UUID(doc["people"][0]["id"]))
    assert refused(principal, docs.bank(memories=memories)) == [
        "memories[2].attribution: unknown person",
        "memories[2].scope: unknown session",
        "memories[2].entity_ids[0]: unknown person",
        "memories[2].sources[0].event: unknown event",
    ]


# -- the stored state: re-import, changes, erasure, other owners -----------------------------

def test_import_creates_every_row_of_the_document(db, principal, doc):
    counts = load(principal, doc)
    assert (counts.memories, counts.events, counts.sessions, counts.people) == (3, 3, 2, 1)
    rows = docs.row_counts(principal)
    assert {k: rows[k] for k in ("Person", "Session", "Event", "EventPart", "Memory", "MemorySource",
                                 "MemoryRevision", "ChangeJournal")} == {
        "Person": 1, "Session": 2, "Event": 3, "EventPart": 4, "Memory": 3, "MemorySource": 3,
        "MemoryRevision": 3, "ChangeJournal": 3}


def test_imported_memories_hold_the_document_values(db, principal, doc):
    load(principal, doc)
    item = doc["memories"][1]
    row = stored_memories(principal)[item["id"]]
    assert (row.subject, row.statement, row.belief_type, row.entity_ids, row.confidence) == (
        "home city", "The owner lives in Utrecht.", "attribute", ["place:utrecht"], 0.9)
    assert row.expires_at.isoformat().replace("+00:00", "Z") == item["expires_at"]
    assert row.created_at == row.updated_at and row.content_revision == 1
    with owner_context(principal):
        sources = list(MemorySource.objects.filter(memory_id=row.id).values_list("event_id", "part_id"))
    assert [(str(e), str(p)) for e, p in sources] == [(item["sources"][0]["event"], item["sources"][0]["part"])]


def test_event_parts_keep_their_order_ids_and_text_hash(db, principal, doc):
    import hashlib

    load(principal, doc)
    event = doc["events"][0]
    with owner_context(principal):
        parts = list(EventPart.objects.filter(event_id=event["id"]).order_by("position")
                     .values_list("id", "position", "text", "text_sha256"))
        stored_event = Event.objects.get(id=event["id"])
    assert [(str(i), n, t) for i, n, t, _ in parts] == [(p["id"], n, p["text"]) for n, p in enumerate(event["parts"])]
    assert all(h == hashlib.sha256(t.encode()).hexdigest() for _, _, t, h in parts)
    assert (stored_event.kind, stored_event.speaker, stored_event.excluded) == ("user.message.created", "owner", False)


def test_import_into_an_unknown_owner_creates_its_lock_row(db, principal, doc):
    assert docs.row_counts(principal)["OwnerLock"] is None
    load(principal, doc)
    assert docs.row_counts(principal)["OwnerLock"] == (4, 4, 4)


def test_reimporting_the_same_document_is_a_noop(db, principal, doc):
    load(principal, doc)
    before, journal_before = docs.row_counts(principal), journal(principal)
    counts = load(principal, doc)
    assert (counts.memories, counts.events, counts.sessions, counts.people) == (0, 0, 0, 0)
    assert docs.row_counts(principal) == before and journal(principal) == journal_before
    assert {row.content_revision for row in stored_memories(principal).values()} == {1}


def test_changed_memory_content_is_refused_without_update(db, principal, doc):
    load(principal, doc)
    doc["memories"][0]["statement"] = "The owner prefers Fahrenheit."
    doc["memories"][0]["confidence"] = 0.5
    assert refused(principal, doc) == [
        "memories[0].statement: differs from the stored memory (use --update to change it)",
        "memories[0].confidence: differs from the stored memory (use --update to change it)",
    ]


def test_update_revises_changed_content_through_the_revision_path(db, principal, doc):
    load(principal, doc)
    memory_id = doc["memories"][0]["id"]
    before = stored_memories(principal)[memory_id]
    doc["memories"][0]["statement"] = "The owner prefers Fahrenheit."
    counts = load(principal, doc, update=True)
    assert (counts.memories, counts.events, counts.sessions, counts.people) == (1, 0, 0, 0)
    after = stored_memories(principal)[memory_id]
    assert after.statement == "The owner prefers Fahrenheit." and after.content_revision == 2
    assert after.store_position > before.store_position and after.creation_sequence == before.creation_sequence
    assert journal(principal)[-1] == (memory_id, "revised", 2)
    with owner_context(principal):
        snapshots = list(MemoryRevision.objects.filter(memory_id=memory_id).order_by("revision")
                         .values_list("revision", "snapshot"))
    assert [(n, s["statement"]) for n, s in snapshots] == [
        (1, "The owner prefers Celsius."), (2, "The owner prefers Fahrenheit.")]


def test_update_to_retracted_journals_a_retraction(db, principal, doc):
    load(principal, doc)
    doc["memories"][1]["status"] = "retracted"
    load(principal, doc, update=True)
    assert journal(principal)[-1] == (doc["memories"][1]["id"], "retracted", 2)


def test_update_of_an_unchanged_document_is_a_noop(db, principal, doc):
    load(principal, doc)
    before = docs.row_counts(principal)
    counts = load(principal, doc, update=True)
    assert (counts.memories, counts.events, counts.sessions, counts.people) == (0, 0, 0, 0)
    assert docs.row_counts(principal) == before


def test_update_never_changes_creation_time_or_sources(db, principal, doc):
    load(principal, doc)
    doc["memories"][0]["created_at"] = docs.at(70)
    doc["memories"][0]["sources"][0]["part"] = doc["events"][0]["parts"][1]["id"]
    assert refused(principal, doc, update=True) == [
        "memories[0].created_at: differs from the stored memory (creation time cannot change)",
        "memories[0].sources: differ from the stored sources (provenance cannot change)",
    ]


def test_update_cannot_mark_a_memory_deleted(db, principal, doc):
    load(principal, doc)
    doc["memories"][0]["status"] = "deleted"
    assert refused(principal, doc, update=True) == [
        "memories[0].status: cannot become deleted by import (erase the memory instead)"]


def test_changed_person_name_is_refused_without_update(db, principal, doc):
    load(principal, doc)
    doc["people"][0]["name"] = "Dana K."
    assert refused(principal, doc) == ["people[0].name: differs from the stored person (use --update to change it)"]


def test_update_renames_a_person(db, principal, doc):
    load(principal, doc)
    doc["people"][0]["name"] = "Dana K."
    assert load(principal, doc, update=True).people == 1
    with owner_context(principal):
        assert Person.objects.get(id=doc["people"][0]["id"]).name == "Dana K."


def test_changed_session_is_refused_even_with_update(db, principal, doc):
    load(principal, doc)
    doc["sessions"][0]["started_at"] = docs.at(1)
    assert refused(principal, doc, update=True) == [
        "sessions[0].started_at: differs from the stored session (sessions cannot be changed by import)"]


def test_changed_event_part_text_is_refused_even_with_update(db, principal, doc):
    load(principal, doc)
    doc["events"][0]["parts"][1]["text"] = "And I live in Rotterdam."
    assert refused(principal, doc, update=True) == [
        "events[0].parts[1].text: differs from the stored event (events cannot be changed by import)"]


def test_changed_event_fields_and_part_count_are_refused(db, principal, doc):
    load(principal, doc)
    doc["events"][1]["speaker"] = "tool"
    doc["events"][1]["parts"].append({"id": docs.new_id(), "text": "More."})
    assert refused(principal, doc, update=True) == [
        "events[1].speaker: differs from the stored event (events cannot be changed by import)",
        "events[1].parts: differs from the stored event (events cannot be changed by import): 1 parts stored",
    ]


def test_new_event_reusing_a_stored_part_id_is_refused(db, principal, doc):
    load(principal, doc)
    extra = docs.event(doc["sessions"][0], "Another message.", created_at=docs.at(120))
    extra["parts"][0]["id"] = doc["events"][1]["parts"][0]["id"]
    assert refused(principal, docs.bank(events=[extra])) == ["events[0].parts[0].id: already used by another stored event"]


def test_erased_memory_is_never_reimported(db, principal, doc):
    load(principal, doc)
    services.memory_erase(principal=principal, memory_id=uuid.UUID(doc["memories"][0]["id"]))
    assert refused(principal, doc) == [f"memories[0].id: {ERASED}"]


def test_erased_session_and_its_events_are_never_reimported(db, principal, doc):
    load(principal, doc)
    services.session_erase(principal=principal, session_id=uuid.UUID(doc["sessions"][1]["id"]))
    assert refused(principal, doc) == [f"sessions[1].id: {ERASED}", f"events[2].id: {ERASED}",
                                       f"memories[2].id: {ERASED}"]


def test_ids_held_by_another_owner_are_refused_and_nothing_is_written(db, principal, doc):
    load(principal, doc)
    other = new_principal()
    assert refused(other, doc) == [f"people[0].id: {IN_USE}"]
    assert docs.row_counts(other)["OwnerLock"] is None


def test_memory_ids_held_by_another_owner_are_found_by_path(db, principal, doc):
    load(principal, doc)
    other = new_principal()
    copy = docs.small_bank()
    copy["memories"][1]["id"] = doc["memories"][2]["id"]
    copy["memories"][2]["id"] = doc["memories"][0]["id"]
    assert refused(other, copy) == [f"memories[1].id: {IN_USE}", f"memories[2].id: {IN_USE}"]


def test_a_claim_the_owner_rejected_is_refused(db, principal, doc):
    load(principal, doc)
    services.memory_reject(principal=principal, memory_id=uuid.UUID(doc["memories"][0]["id"]))
    again = docs.memory(doc["events"][0], 0, statement="the owner prefers  CELSIUS!", created_at=docs.at(500))
    assert refused(principal, docs.bank(memories=[again])) == ["memories[0]: claim was rejected by the owner"]


# -- the one creation path -------------------------------------------------------------------

def _ordered_bank():
    said = docs.small_bank()
    event = said["events"][0]
    tie = docs.at(100)
    memories = [docs.memory(event, 0, statement=f"Fact {n}.", created_at=at)
                for n, at in enumerate([docs.at(300), tie, docs.at(50), tie, docs.at(200)])]
    said["memories"] = memories
    return said


def _expected_order(document):
    return [m["id"] for m in sorted(document["memories"], key=lambda m: (m["created_at"], uuid.UUID(m["id"])))]


def test_creation_sequence_follows_created_at_then_id(db, principal):
    document = _ordered_bank()
    load(principal, document)
    by_sequence = sorted(stored_memories(principal).values(), key=lambda row: row.creation_sequence)
    assert [str(row.id) for row in by_sequence] == _expected_order(document)
    assert [row.creation_sequence for row in by_sequence] == [1, 2, 3, 4, 5]


def test_creation_sequence_is_one_order_across_batches(db, principal, settings):
    settings.IMPORT_BATCH_ROWS = 2
    document = _ordered_bank()
    load(principal, document)
    by_sequence = sorted(stored_memories(principal).values(), key=lambda row: row.creation_sequence)
    assert [str(row.id) for row in by_sequence] == _expected_order(document)
    assert [row.creation_sequence for row in by_sequence] == [1, 2, 3, 4, 5]


def test_each_imported_memory_gets_a_created_journal_entry_in_creation_order(db, principal):
    document = _ordered_bank()
    load(principal, document)
    assert journal(principal) == [(memory_id, "created", 1) for memory_id in _expected_order(document)]


def test_import_publishes_creations_to_the_invalidation_hook(db, principal, doc):
    seen = []

    def listener(change):
        seen.append((change.principal, change.kind, set(map(str, change.memory_ids))))

    hooks.register(listener)
    try:
        load(principal, doc)
    finally:
        hooks.unregister(listener)
    assert seen == [(principal, "created", {m["id"] for m in doc["memories"]})]


def test_import_creation_matches_live_creation(db, principal, doc):
    """The same belief imported or created live gets the same rows (modulo IDs and clocks)."""
    from tests.factories import draft as live_draft

    load(principal, doc)
    event = services.event_append(principal=principal, session_id=uuid.UUID(doc["sessions"][0]["id"]),
                                  kind="user.message.created", speaker="owner", parts=["I prefer Celsius."],
                                  created_at=docs.T0)
    live = services.memory_create(principal=principal, draft=live_draft(event), now=docs.T0)
    imported = stored_memories(principal)[doc["memories"][0]["id"]]
    assert live.creation_sequence == 4 and live.content_revision == imported.content_revision == 1
    assert journal(principal)[-1] == (str(live.id), "created", 1)


ROWS_BEFORE_COPY = json.loads((Path(__file__).with_name("fixtures") / "demo-bank-import-rows.json").read_text())


@pytest.mark.parametrize("copy_min_rows, batch_rows", [(1, 2000), (10**9, 2000), (200, 50)],
                         ids=["all-staged-copy", "all-insert-values", "mixed-small-batches"])
def test_import_writes_exactly_the_rows_the_row_by_row_importer_wrote(db, settings, copy_min_rows, batch_rows):
    """Every column of every row (generated columns, provenance, revision snapshots, journal,
    allocators) equals what the bulk_create importer wrote for the demo bank at 3919f60, with
    the same owner and clock, whichever way ``veetbot.bulk.insert_rows`` carries the rows."""
    import hashlib

    from veetbot.identity import Principal

    settings.BULK_INSERT_COPY_MIN_ROWS, settings.IMPORT_BATCH_ROWS = copy_min_rows, batch_rows
    owner = Principal(tenant_id=uuid.UUID("7d0e8a3c-5b1f-4c2e-9a6d-2f4b8c1e0a57"),
                      principal_id=uuid.UUID("3a9f1c7e-2d4b-4e8a-b6c5-9e0d1f2a3b4c"))
    memory_bank_import(principal=owner, data=DEMO_BANK.read_bytes(), now=datetime(2026, 10, 1, 12, tzinfo=timezone.utc))
    written = {table: {"rows": len(rows), "sha256": hashlib.sha256("\n".join(v for _, v in sorted(rows.items())).encode()).hexdigest()}
               for table, rows in docs.stored_rows(owner).items()}
    assert written == ROWS_BEFORE_COPY["tables"]


TRANSPORTS = pytest.mark.parametrize("copy_min_rows", [10**9, 1], ids=["insert-values", "staged-copy"])


@TRANSPORTS
def test_a_reimport_of_the_demo_bank_writes_nothing(db, principal, settings, copy_min_rows):
    settings.BULK_INSERT_COPY_MIN_ROWS = copy_min_rows
    load(principal, DEMO_BANK.read_bytes())
    before = docs.stored_rows(principal)
    again = load(principal, DEMO_BANK.read_bytes())
    assert (again.memories, again.events, again.sessions, again.people) == (0, 0, 0, 0)
    assert docs.stored_rows(principal) == before


@TRANSPORTS
def test_imported_rows_stay_invisible_to_another_owner(db, principal, settings, copy_min_rows):
    settings.BULK_INSERT_COPY_MIN_ROWS = copy_min_rows
    load(principal, DEMO_BANK.read_bytes())
    assert all(docs.stored_rows(principal)[table] for table in ("memory_memory", "memory_changejournal"))
    other = new_principal()
    assert docs.stored_rows(other) == {table: {} for table in docs.stored_rows(other)}
    assert set(docs.row_counts(other).values()) == {0, None}


@TRANSPORTS
def test_a_clash_found_while_writing_is_reported_and_nothing_is_written(db, principal, settings, copy_min_rows):
    """IDs another owner holds are found only when the insert fails (they are invisible): the
    refusal comes after earlier tables and batches were written, and still nothing stays."""
    settings.BULK_INSERT_COPY_MIN_ROWS, settings.IMPORT_BATCH_ROWS = copy_min_rows, 2
    load(principal, docs.small_bank())
    taken = stored_memories(principal)
    copy = docs.small_bank()
    copy["memories"][2]["id"] = sorted(taken)[0]
    assert refused(new_principal(), copy) == [f"memories[2].id: {IN_USE}"]


def test_the_demo_bank_imports_and_reimports_as_a_noop(db, principal):
    document = json.loads(DEMO_BANK.read_text())
    counts = load(principal, DEMO_BANK.read_bytes())
    assert (counts.memories, counts.events, counts.sessions, counts.people) == tuple(
        len(document[k]) for k in ("memories", "events", "sessions", "people"))
    again = load(principal, DEMO_BANK.read_bytes())
    assert (again.memories, again.events, again.sessions, again.people) == (0, 0, 0, 0)


# -- the command -----------------------------------------------------------------------------

def write(tmp_path, document) -> str:
    path = tmp_path / "bank.json"
    path.write_bytes(docs.dumps(document))
    return str(path)


def command(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_memory_bank", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@WITH_OWNER_ALIAS
def test_command_json_prints_exactly_the_counts(db, principal, doc, tmp_path):
    out, err = command(write(tmp_path, doc), "--owner", principal.label, "--json")
    result = json.loads(out)
    assert list(result) == ["memories", "events", "sessions", "people", "seconds"]
    assert (result["memories"], result["events"], result["sessions"], result["people"]) == (3, 3, 2, 1)
    assert isinstance(result["seconds"], float) and err == ""


@WITH_OWNER_ALIAS
def test_command_reimport_prints_zero_counts(db, principal, doc, tmp_path):
    path = write(tmp_path, doc)
    command(path, "--owner", principal.label)
    result = json.loads(command(path, "--owner", principal.label, "--json")[0])
    assert {k: v for k, v in result.items() if k != "seconds"} == {"memories": 0, "events": 0, "sessions": 0, "people": 0}


@WITH_OWNER_ALIAS
def test_command_prints_a_summary_without_json(db, principal, doc, tmp_path):
    out, _ = command(write(tmp_path, doc), "--owner", principal.label)
    assert out.startswith(f"Imported into {principal.label}: 3 memories, 3 events, 2 sessions, 1 people")


@WITH_OWNER_ALIAS
def test_command_update_option_revises(db, principal, doc, tmp_path):
    command(write(tmp_path, doc), "--owner", principal.label)
    doc["memories"][0]["confidence"] = 0.4
    result = json.loads(command(write(tmp_path, doc), "--owner", principal.label, "--update", "--json")[0])
    assert result["memories"] == 1


@WITH_OWNER_ALIAS
def test_command_reads_standard_input_for_dash(db, principal, doc, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(docs.dumps(doc))))
    result = json.loads(command("-", "--owner", principal.label, "--json")[0])
    assert result["memories"] == 3


def test_command_refusal_exits_1_with_one_stderr_line_per_problem(db, principal, doc, tmp_path, monkeypatch, capsys):
    from django.core.management import load_command_class

    # run_from_argv closes every connection when done; keep the test's transaction open.
    monkeypatch.setattr("django.core.management.base.connections.close_all", lambda: None)
    doc["memories"][0]["sources"][0]["event"] = docs.new_id()
    doc["memories"][1]["confidence"] = 1.5
    before = docs.row_counts(principal)
    cmd = load_command_class("memory", "import_memory_bank")
    with pytest.raises(SystemExit) as exit_:
        cmd.run_from_argv(["manage.py", "import_memory_bank", write(tmp_path, doc), "--owner", principal.label, "--json"])
    captured = capsys.readouterr()
    assert exit_.value.code == 1
    assert captured.err.splitlines() == ["memories[0].sources[0].event: unknown event",
                                         "memories[1].confidence: outside [0, 1]"]
    assert captured.out == "" and docs.row_counts(principal) == before


def test_command_refusal_raises_for_callers_in_process(db, principal, doc, tmp_path):
    doc["format"] = "memory-bank@0"
    err = io.StringIO()
    with pytest.raises(Invalid):
        call_command("import_memory_bank", write(tmp_path, doc), "--owner", principal.label, stderr=err)
    assert err.getvalue() == 'format: must be "memory-bank@1"\n'


def test_command_refuses_a_malformed_owner(db, doc, tmp_path):
    with pytest.raises(CommandError, match="--owner must be TENANT_UUID/PRINCIPAL_UUID"):
        command(write(tmp_path, doc), "--owner", "dana")


def test_command_reports_an_unreadable_file(db, principal, tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        command(str(tmp_path / "missing.json"), "--owner", principal.label)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@WITH_OWNER_ALIAS
def test_command_draws_progress_only_on_a_terminal(db, principal, doc, tmp_path):
    quiet = io.StringIO()
    call_command("import_memory_bank", write(tmp_path, doc), "--owner", principal.label, stdout=io.StringIO(),
                 stderr=quiet)
    assert quiet.getvalue() == ""
    terminal = _Terminal()
    call_command("import_memory_bank", write(tmp_path, docs.small_bank()), "--owner", principal.label,
                 stdout=io.StringIO(), stderr=terminal)
    drawn = terminal.getvalue()
    assert "\rmemories" in drawn and "100% [" in drawn and drawn.endswith("\r\x1b[K")


# -- robustness: no input makes the validator fail other than by listing problems -----------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
    | st.sampled_from(["user", "owner", "person:", "session:", "2026-09-01T09:00:00Z", "2026-09-01T09:00:00"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)


def _slots(value, path=()):
    """Every (container path) in ``value`` that can be replaced."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _slots(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _slots(item, path + (index,))


_SMALL_BANK = docs.small_bank()
_SLOTS = list(_slots(_SMALL_BANK))


@hypothesis_settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(slot=st.sampled_from(_SLOTS), value=_JSON, drop=st.booleans())
def test_any_replaced_or_dropped_value_yields_problems_not_errors(slot, value, drop):
    from memory.bank.parse import Problems, parse_document
    from memory.bank.validate import validate_document

    document = docs.copy_of(_SMALL_BANK)
    if not slot:
        document = value
    else:
        parent = document
        for step in slot[:-1]:
            parent = parent[step]
        if drop and isinstance(parent, dict):
            del parent[slot[-1]]
        else:
            parent[slot[-1]] = value
    problems = Problems()
    parsed = parse_document(json.dumps(document), problems)
    validate_document(parsed, problems)
    for line in problems.lines():
        path, _, message = line.partition(": ")
        assert path and message, line

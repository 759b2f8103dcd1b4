"""export_memory_bank: a valid memory-bank@1 document that imports back to the same state.

Primary keys are unique across owners, so "import into a fresh owner" is exercised the way it
happens in practice (a bank moved to another database): the source owner's rows are rolled
back before the export is imported for the new owner.
"""
from __future__ import annotations

import io
import json
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from memory import services
from memory.bank import memory_bank_export, memory_bank_import
from memory.bank.parse import Problems, parse_document
from memory.bank.validate import validate_document
from memory.domain import MemoryChanges, SourceRef
from memory.models import ChangeJournal
from tests.conftest import new_principal
from tests.factories import draft
from tests.memory import bank_docs as docs
from veetbot.rls import owner_context

DEMO_BANK = Path(__file__).resolve().parents[2] / "evals" / "fixtures" / "demo-bank.json"
EMPTY = '{\n  "format": "memory-bank@1",\n  "people": [],\n  "sessions": [],\n  "events": [],\n  "memories": []\n}\n'


class _Undo(Exception):
    """Raised to roll back the source owner's rows after exporting them."""


def export(principal) -> str:
    out = io.StringIO()
    memory_bank_export(principal=principal, out=out)
    return out.getvalue()


def counts(result) -> tuple[int, int, int, int]:
    return result.memories, result.events, result.sessions, result.people


def problems_of(text: str) -> list[str]:
    problems = Problems()
    document = parse_document(text, problems)
    validate_document(document, problems)
    return problems.lines()


def live_bank(principal) -> None:
    """A bank written through the live services, with sub-second instants, a revision, an
    excluded event and an erased belief."""
    t0 = docs.T0 + timedelta(microseconds=123456)
    dana = services.person_create(principal=principal, name="Dana", now=t0)
    chat = services.session_create(principal=principal, started_at=t0)
    private = services.session_create(principal=principal, scope="session", started_at=t0 + timedelta(hours=1))
    said = services.event_append(principal=principal, session_id=chat.id, kind="user.message.created", speaker="owner",
                                 parts=["I prefer Celsius for weather.", "I live in Utrecht."],
                                 created_at=t0 + timedelta(seconds=60))
    services.event_append(principal=principal, session_id=chat.id, kind="assistant.message.created",
                          speaker="assistant", parts=["Noted."], created_at=t0 + timedelta(seconds=61), excluded=True)
    forwarded = services.event_append(principal=principal, session_id=private.id, kind="user.message.created",
                                      speaker=f"person:{dana.id}", parts=["Dana: I am moving to Lisbon."],
                                      created_at=t0 + timedelta(hours=1, seconds=5))
    celsius = services.memory_create(principal=principal, draft=draft(said, at=said.created_at), now=t0)
    services.memory_create(principal=principal, draft=draft(
        said, at=said.created_at, subject="home city", statement="The owner lives in Utrecht.",
        belief_type="attribute", entity_ids=("place:utrecht",), expires_at=said.created_at + timedelta(days=400),
        sources=(SourceRef(event=said.id, part=said.parts[1].id),),
    ), now=t0)
    services.memory_create(principal=principal, draft=draft(
        forwarded, at=forwarded.created_at, subject="Dana's move", statement="Dana is moving to Lisbon.",
        belief_type="event", derivation="extracted", authority="EXTRACTED", attribution=f"person:{dana.id}",
        sensitivity="sensitive", scope=private.scope, portable=False, entity_ids=(f"person:{dana.id}",),
    ), now=t0)
    doomed = services.memory_create(principal=principal, draft=draft(
        said, at=said.created_at, subject="weather", statement="The owner likes rain."), now=t0)
    services.memory_revise(principal=principal, memory_id=celsius.id, changes=MemoryChanges(confidence=0.5))
    services.memory_erase(principal=principal, memory_id=doomed.id)


def test_export_of_an_owner_without_rows_is_an_empty_bank(db):
    assert export(new_principal()) == EMPTY
    assert problems_of(EMPTY) == []


def test_export_is_a_valid_memory_bank(db):
    principal = new_principal()
    live_bank(principal)
    text = export(principal)
    assert problems_of(text) == []
    document = json.loads(text)
    assert [len(document[k]) for k in ("people", "sessions", "events", "memories")] == [1, 2, 3, 3]


def test_export_writes_one_item_per_line(db):
    principal = new_principal()
    memory_bank_import(principal=principal, data=docs.dumps(docs.small_bank()))
    lines = export(principal).splitlines()
    assert lines[:3] == ["{", '  "format": "memory-bank@1",', '  "people": [']
    assert sum(line.startswith('    {"id": ') for line in lines) == 1 + 2 + 3 + 3


def test_export_round_trips_through_a_fresh_owner_byte_for_byte(db):
    with pytest.raises(_Undo):
        with transaction.atomic():
            source = new_principal()
            live_bank(source)
            first = export(source)
            raise _Undo
    fresh = new_principal()
    imported = memory_bank_import(principal=fresh, data=first)
    assert counts(imported) == (3, 3, 2, 1)
    assert export(fresh) == first
    assert counts(memory_bank_import(principal=fresh, data=first)) == (0, 0, 0, 0)


def test_reimporting_an_export_into_its_own_owner_is_a_noop(db):
    principal = new_principal()
    live_bank(principal)
    text = export(principal)
    before = docs.row_counts(principal)
    with owner_context(principal):
        journal_before = list(ChangeJournal.objects.order_by("seq").values_list("seq", "memory_id", "kind"))
    assert counts(memory_bank_import(principal=principal, data=text)) == (0, 0, 0, 0)
    assert docs.row_counts(principal) == before
    with owner_context(principal):
        assert list(ChangeJournal.objects.order_by("seq").values_list("seq", "memory_id", "kind")) == journal_before


def test_export_carries_the_current_content_of_revised_memories(db):
    principal = new_principal()
    live_bank(principal)
    celsius = next(m for m in json.loads(export(principal))["memories"] if m["subject"] == "weather units")
    assert celsius["confidence"] == 0.5


def test_export_leaves_out_erased_memories_sessions_events_and_people(db):
    principal = new_principal()
    document = docs.small_bank()
    memory_bank_import(principal=principal, data=docs.dumps(document))
    services.memory_erase(principal=principal, memory_id=uuid.UUID(document["memories"][0]["id"]))
    services.person_erase(principal=principal, person_id=uuid.UUID(document["people"][0]["id"]))
    exported = json.loads(export(principal))
    assert exported["people"] == []
    assert [s["id"] for s in exported["sessions"]] == [s["id"] for s in document["sessions"]]
    assert [e["id"] for e in exported["events"]] == [e["id"] for e in document["events"][:2]]
    assert [m["id"] for m in exported["memories"]] == [document["memories"][1]["id"]]
    assert problems_of(json.dumps(exported)) == []


def test_export_leaves_out_deleted_memories(db):
    principal = new_principal()
    document = docs.small_bank()
    document["memories"][1]["status"] = "deleted"
    memory_bank_import(principal=principal, data=docs.dumps(document))
    exported = json.loads(export(principal))
    assert [m["id"] for m in exported["memories"]] == [document["memories"][i]["id"] for i in (0, 2)]


def test_export_orders_items_by_exported_fields_only(db):
    principal = new_principal()
    document = docs.small_bank()
    zed, abe = docs.person("Zed"), docs.person("Abe")
    document["people"] += [zed, abe]
    for section in ("people", "sessions", "events", "memories"):
        document[section].reverse()
    memory_bank_import(principal=principal, data=docs.dumps(document))
    exported = json.loads(export(principal))
    assert [p["name"] for p in exported["people"]] == ["Abe", "Dana", "Zed"]
    assert [s["started_at"] for s in exported["sessions"]] == [docs.at(0), docs.at(3600)]
    assert [e["created_at"] for e in exported["events"]] == [docs.at(60), docs.at(90), docs.at(3660)]
    assert [m["created_at"] for m in exported["memories"]] == [docs.at(65), docs.at(66), docs.at(3665)]


def test_export_writes_utc_instants_with_z(db):
    principal = new_principal()
    document = docs.small_bank()
    document["memories"][0]["created_at"] = "2026-09-01T11:01:05.250000+02:00"
    memory_bank_import(principal=principal, data=docs.dumps(document))
    exported = json.loads(export(principal))
    assert exported["memories"][0]["created_at"] == "2026-09-01T09:01:05.250000Z"
    assert exported["sessions"][0]["started_at"] == "2026-09-01T09:00:00Z"


def test_export_of_the_demo_bank_holds_the_same_items(db):
    principal = new_principal()
    demo = json.loads(DEMO_BANK.read_text())
    memory_bank_import(principal=principal, data=DEMO_BANK.read_bytes())
    exported = json.loads(export(principal))
    for section in ("people", "sessions", "events", "memories"):
        assert sorted(exported[section], key=lambda item: item["id"]) == sorted(demo[section], key=lambda item: item["id"])


# -- the command -----------------------------------------------------------------------------

def test_command_writes_the_document_to_stdout(db):
    principal = new_principal()
    memory_bank_import(principal=principal, data=docs.dumps(docs.small_bank()))
    out = io.StringIO()
    call_command("export_memory_bank", "--owner", principal.label, stdout=out)
    assert out.getvalue() == export(principal)


def test_command_writes_the_document_to_an_output_file(db, tmp_path):
    principal = new_principal()
    memory_bank_import(principal=principal, data=docs.dumps(docs.small_bank()))
    target = tmp_path / "bank.json"
    out = io.StringIO()
    call_command("export_memory_bank", "--owner", principal.label, "--output", str(target), stdout=out)
    assert target.read_text() == export(principal)
    assert out.getvalue() == f"Exported {principal.label} to {target}: 3 memories, 3 events, 2 sessions, 1 people\n"
    assert [p.name for p in tmp_path.iterdir()] == ["bank.json"]


def test_command_output_imports_through_the_import_command(db, tmp_path):
    principal = new_principal()
    memory_bank_import(principal=principal, data=docs.dumps(docs.small_bank()))
    target = tmp_path / "bank.json"
    call_command("export_memory_bank", "--owner", principal.label, "--output", str(target), stdout=io.StringIO())
    out = io.StringIO()
    call_command("import_memory_bank", str(target), "--owner", principal.label, "--json", stdout=out)
    assert json.loads(out.getvalue())["memories"] == 0


def test_command_refuses_a_malformed_owner(db):
    with pytest.raises(CommandError, match="--owner must be TENANT_UUID/PRINCIPAL_UUID"):
        call_command("export_memory_bank", "--owner", "nobody", stdout=io.StringIO())


def test_command_reports_an_unwritable_output(db, tmp_path):
    with pytest.raises(CommandError, match="cannot write"):
        call_command("export_memory_bank", "--owner", new_principal().label,
                     "--output", str(tmp_path / "missing" / "bank.json"), stdout=io.StringIO())

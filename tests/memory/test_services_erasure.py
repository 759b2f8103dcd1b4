"""Erasure leaves no prose behind: every text column of every table is scanned afterwards.

The scan runs on the owner (superuser) connection, so row-level security hides nothing
from it; the data is committed for real (``live_db``).
"""
import pytest
from django.db import connections

from memory import services
from memory.errors import NotFound
from memory.models import ChangeJournal, ErasureFence, Memory, OwnerToken
from tests.factories import T0, draft, make_memory, make_owner, owner_message
from veetbot.rls import owner_context


def tables_containing(needle: str) -> list[str]:
    """Every table.column (text, varchar, json, arrays) whose value contains ``needle``."""
    hits = []
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
            " AND data_type IN ('text', 'character varying', 'character', 'jsonb', 'json', 'ARRAY')"
        )
        for table, column in cursor.fetchall():
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s', [f"%{needle}%"])
            if cursor.fetchone()[0]:
                hits.append(f"{table}.{column}")
    return sorted(hits)


def fence(principal):
    with owner_context(principal):
        return ErasureFence.objects.get().generation


def test_erase_memory_removes_its_prose_everywhere_and_keeps_opaque_ids(live_db):
    principal, _ = make_owner()
    memory = make_memory(principal, "The owner hides a spare key under the blue flowerpot.",
                         message="Spare key is under the pot.", subject="spare key location")
    services.memory_revise(principal=principal, memory_id=memory.id,
                           changes=__import__("memory.domain", fromlist=["x"]).MemoryChanges(confidence=0.5))
    assert "memory_memory.statement" in tables_containing("blue flowerpot")
    services.memory_erase(principal=principal, memory_id=memory.id)
    assert tables_containing("blue flowerpot") == []
    assert tables_containing("spare key location") == []
    with owner_context(principal):
        row = Memory.objects.get(id=memory.id)
        kinds = list(ChangeJournal.objects.filter(memory_id=memory.id).values_list("kind", flat=True))
    assert row.status == "deleted" and row.erased_at is not None and row.claim_sha256
    assert kinds[-1] == "erased"
    assert fence(principal) == 1


def test_erased_memory_is_not_found_afterwards(live_db):
    principal, _ = make_owner()
    memory = make_memory(principal)
    services.memory_erase(principal=principal, memory_id=memory.id)
    with pytest.raises(NotFound):
        services.memory_erase(principal=principal, memory_id=memory.id)


def test_erase_session_removes_messages_and_beliefs_formed_from_them(live_db):
    principal, _ = make_owner()
    session = services.session_create(principal=principal, started_at=T0)
    event = owner_message(principal, "My allergist is Dr Quillfeather on Elm Street.", session_id=session.id)
    local = services.session_create(principal=principal, scope="session", started_at=T0)
    local_event = owner_message(principal, "Just for now: call me Captain Zebulon.", session_id=local.id)
    services.memory_create(principal=principal, draft=draft(event, statement="The owner's allergist is Dr Quillfeather."))
    services.memory_create(principal=principal, draft=draft(local_event, statement="The owner wants to be called Captain Zebulon.",
                                                            scope=f"session:{local.id}", portable=False))
    keeper = make_memory(principal, "The owner likes marmalade.", message="I like marmalade.")
    services.session_erase(principal=principal, session_id=session.id)
    services.session_erase(principal=principal, session_id=local.id)
    for prose in ("Quillfeather", "Captain Zebulon"):
        assert tables_containing(prose) == [], prose
    assert tables_containing("marmalade")  # other sessions are untouched
    with owner_context(principal):
        assert Memory.objects.get(id=keeper.id).status == "active"
    assert fence(principal) == 2


def test_erase_person_removes_name_messages_and_beliefs_about_them(live_db):
    principal, _ = make_owner()
    person = services.person_create(principal=principal, name="Ottoline Brackenbury", now=T0)
    session = services.session_create(principal=principal, started_at=T0)
    said = services.event_append(principal=principal, session_id=session.id, kind="user.message.created",
                                 speaker=f"person:{person.id}", parts=["Ottoline: my new flat is in Leith."], created_at=T0)
    services.memory_create(principal=principal, draft=draft(
        said, statement="Ottoline's new flat is in Leith.", attribution=f"person:{person.id}",
        derivation="extracted", authority="EXTRACTED", sensitivity="sensitive"))
    about = owner_message(principal, "Ottoline is my oldest friend.")
    services.memory_create(principal=principal, draft=draft(
        about, statement="Ottoline Brackenbury is the owner's oldest friend.", entity_ids=(f"person:{person.id}",)))
    services.person_erase(principal=principal, person_id=person.id)
    for prose in ("Ottoline", "Brackenbury", "Leith"):
        assert tables_containing(prose) == [], prose


def test_erase_principal_removes_all_prose_and_revokes_tokens(live_db):
    principal, token = make_owner("Wilhelmina Fairweather")
    make_memory(principal, "The owner grows heirloom tomatoes.", message="I grow heirloom tomatoes.")
    services.person_create(principal=principal, name="Barnaby Thistlewood", now=T0)
    services.principal_erase(principal=principal)
    for prose in ("Wilhelmina", "heirloom tomatoes", "Thistlewood"):
        assert tables_containing(prose) == [], prose
    assert services.token_authenticate(token) is None
    with owner_context(principal):
        assert not OwnerToken.objects.filter(revoked_at__isnull=True).exists()


def test_erasure_leaves_other_owners_prose(live_db):
    alice, _ = make_owner()
    bob, _ = make_owner()
    make_memory(alice, "The owner collects antique barometers.", message="I collect barometers.")
    make_memory(bob, "The owner collects antique barometers.", message="I collect barometers.")
    services.principal_erase(principal=alice)
    assert sorted(tables_containing("antique barometers")) == ["memory_memory.statement", "memory_memoryrevision.snapshot"]

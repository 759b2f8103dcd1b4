"""veetbot.bulk.insert_rows: both of its transports (one INSERT ... VALUES, or a binary COPY
into a temporary staging table and one INSERT ... SELECT) are ordinary INSERTs under the
caller's forced row-level security, all or nothing per statement, leaving nothing behind.

Every test runs on the runtime role: the proofs fail if it could bypass the policies.
"""
from __future__ import annotations

import uuid

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.utils import NotSupportedError, ProgrammingError

from memory.models import ChangeJournal
from tests.conftest import new_principal
from tests.factories import T0
from veetbot.bulk import id_array, insert_rows
from veetbot.rls import owner_context

COLUMNS = ("tenant_id", "principal_id", "seq", "memory_id", "kind", "content_revision", "recorded_at")
TRANSPORTS = pytest.mark.parametrize("copy_min_rows", [10**9, 1], ids=["insert-values", "staged-copy"])


def entries(owner, seqs):
    return [(owner.tenant_id, owner.principal_id, seq, uuid.uuid4(), "created", 1, T0) for seq in seqs]


def visible_seqs(owner) -> list[int]:
    with owner_context(owner):
        return sorted(ChangeJournal.objects.values_list("seq", flat=True))


def test_copy_from_is_refused_under_forced_row_level_security(db):
    """Why the staging table exists: PostgreSQL will not COPY into an owner table."""
    owner = new_principal()
    with owner_context(owner), pytest.raises(NotSupportedError, match="row-level security"):
        with transaction.atomic(), connection.cursor() as cursor, connection.wrap_database_errors:
            with cursor.cursor.copy(f"COPY memory_changejournal (id, {', '.join(COLUMNS)}) FROM STDIN") as copy:
                copy.write_row((uuid.uuid4(), *entries(owner, [1])[0]))


@TRANSPORTS
def test_rows_land_for_their_owner_only(db, settings, copy_min_rows):
    settings.BULK_INSERT_COPY_MIN_ROWS = copy_min_rows
    owner, other = new_principal(), new_principal()
    with owner_context(owner):
        insert_rows("memory_changejournal", COLUMNS, entries(owner, [1, 2, 3]), new_ids=True)
    assert visible_seqs(owner) == [1, 2, 3]
    assert visible_seqs(other) == []
    with connection.cursor() as cursor:  # no owner context at all
        cursor.execute("SELECT count(*) FROM memory_changejournal")
        assert cursor.fetchone()[0] == 0


@TRANSPORTS
def test_rows_for_another_owner_are_refused_by_the_policy(db, settings, copy_min_rows):
    settings.BULK_INSERT_COPY_MIN_ROWS = copy_min_rows
    owner, other = new_principal(), new_principal()
    with owner_context(owner):
        with pytest.raises(ProgrammingError, match="row-level security"), transaction.atomic():
            insert_rows("memory_changejournal", COLUMNS, entries(owner, [1]) + entries(other, [2]), new_ids=True)
    assert visible_seqs(owner) == [] and visible_seqs(other) == []


@TRANSPORTS
def test_one_refused_row_refuses_the_whole_statement(db, settings, copy_min_rows):
    settings.BULK_INSERT_COPY_MIN_ROWS = copy_min_rows
    owner = new_principal()
    with owner_context(owner):
        with pytest.raises(IntegrityError, match="changejournal_seq_unique"), transaction.atomic():
            insert_rows("memory_changejournal", COLUMNS, entries(owner, [1, 2, 2]), new_ids=True)
    assert visible_seqs(owner) == []


@TRANSPORTS
def test_new_ids_are_distinct_random_uuids(db, settings, copy_min_rows):
    settings.BULK_INSERT_COPY_MIN_ROWS = copy_min_rows
    owner = new_principal()
    with owner_context(owner):
        insert_rows("memory_changejournal", COLUMNS, entries(owner, range(1, 51)), new_ids=True)
        ids = list(ChangeJournal.objects.values_list("id", flat=True))
    assert len(set(ids)) == 50 and {i.version for i in ids} == {4}


def test_the_staging_table_is_gone_after_each_insert(db, settings):
    settings.BULK_INSERT_COPY_MIN_ROWS = 1
    owner = new_principal()
    with owner_context(owner):
        insert_rows("memory_changejournal", COLUMNS, entries(owner, [1]), new_ids=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT to_regclass('pg_temp.staged_memory_changejournal')")
            assert cursor.fetchone()[0] is None
        insert_rows("memory_changejournal", COLUMNS, entries(owner, [2]), new_ids=True)  # the name is free again
    assert visible_seqs(owner) == [1, 2]


def test_id_array_is_one_uuid_array_parameter(db):
    ids = [uuid.uuid4() for _ in range(3)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::uuid[]", [id_array([ids[0], str(ids[1]), ids[2]])])
        assert cursor.fetchone()[0] == ids

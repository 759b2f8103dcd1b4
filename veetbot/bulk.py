"""Bulk statements under the caller's owner context: inserts into row-level-security tables at
COPY speed (``insert_rows``), and many IDs as one array parameter (``id_array``).

Why not plain ``COPY``: PostgreSQL refuses ``COPY ... FROM`` into a table whose row-level
security applies to the current role ("COPY FROM not supported with row-level security"), and
every owner table forces it, even for its owner. Why not ``bulk_create``: Django builds a model
instance and binds ~30 parameters per row in Python, which held an import of 100,000 beliefs to
about 1,300 a second.

So many rows are copied in binary into a temporary table (temporary tables carry no policy,
live only in this session and write no WAL) shaped exactly like the target's columns, and moved
from there with one ``INSERT ... SELECT``. A few rows (live creation writes one belief) go in
one ``INSERT ... VALUES`` instead: a staging table costs a few milliseconds of catalog work per
table, more than the rows it would carry. Either way it is one ordinary INSERT statement: the
owner policy's WITH CHECK, every constraint, foreign key, unique index and generated column
apply to each row exactly as to a row-by-row insert, and a refused row refuses the statement.
The staging table is dropped at once (and at commit, ``ON COMMIT DROP``, should an error skip
that), so it never outlives the unit of work. The role needs the database's TEMPORARY
privilege, which PostgreSQL grants to every role by default.

Many IDs go to the server as one array literal (``= ANY(%s::uuid[])``): psycopg adapts a
Python list element by element (0.2 s of client time for 100,000 IDs, measured) where the
literal costs 0.01 s, and Django's ``__in`` lookups also bind one parameter per ID.

This module decides nothing about what is written: callers pass complete rows, in the order
they want them inserted, from inside their own owner context. It never writes outside the
caller's transaction and never reads rows back.
"""
from __future__ import annotations

from typing import Iterable, Sequence
from uuid import UUID

from django.conf import settings
from django.db import connection
from psycopg import sql


def insert_rows(table: str, columns: Sequence[str], rows: Sequence[Sequence[object]], *,
                new_ids: bool = False) -> None:
    """INSERT ``rows`` (tuples in ``columns`` order) into ``table`` in one statement.

    ``table`` and ``columns`` are code, never input. JSON values are passed wrapped
    (``psycopg.types.json.Jsonb``), arrays as lists. With ``new_ids`` the ``id`` column is
    left out of ``columns`` and the server fills it with a random UUID (``gen_random_uuid()``,
    as ``uuid.uuid4`` would), for rows whose ID nobody keeps: a third fewer values to build
    and send for a source, revision or journal entry.
    """
    if not rows:
        return
    names = sql.SQL(", ").join(map(sql.Identifier, columns))
    insert = sql.SQL("INSERT INTO {} ({}{})").format(sql.Identifier(table), sql.SQL("id, " if new_ids else ""), names)

    def with_id(expressions: sql.Composable) -> sql.Composable:
        return sql.SQL("gen_random_uuid(), {}").format(expressions) if new_ids else expressions

    # psycopg's own cursor (Django's wrapper has no COPY), with Django's error translation, so
    # callers catch django.db.IntegrityError as from any other write.
    with connection.cursor() as wrapper, connection.wrap_database_errors:
        cursor = wrapper.cursor
        if len(rows) < settings.BULK_INSERT_COPY_MIN_ROWS:
            row = sql.SQL("({})").format(with_id(sql.SQL(", ").join(sql.Placeholder() * len(columns))))
            cursor.execute(sql.SQL("{} VALUES {}").format(insert, sql.SQL(", ").join([row] * len(rows))),
                           [value for values in rows for value in values])
            return
        staging = sql.Identifier(f"staged_{table}")
        # WITH NO DATA reads no row; the staging table gets the target columns' exact types.
        cursor.execute(sql.SQL("CREATE TEMPORARY TABLE {} ON COMMIT DROP AS SELECT {} FROM {} WITH NO DATA")
                       .format(staging, names, sql.Identifier(table)))
        cursor.execute("SELECT atttypid FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0"
                       " ORDER BY attnum", [f"pg_temp.staged_{table}"])
        types = [oid for (oid,) in cursor.fetchall()]
        with cursor.copy(sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(staging, names)) as copy:
            copy.set_types(types)
            for values in rows:
                copy.write_row(values)
        cursor.execute(sql.SQL("{} SELECT {} FROM {}").format(insert, with_id(names), staging))
        cursor.execute(sql.SQL("DROP TABLE {}").format(staging))


def id_array(ids: Iterable[UUID | str]) -> str:
    """``ids`` (UUIDs, or strings already checked to be UUIDs or hex digests) as one array
    literal, for ``= ANY(%s::uuid[])`` (the server refuses anything that is not a UUID) or a
    digest column's ``= ANY(%s::varchar[])``."""
    return "{" + ",".join(map(str, ids)) + "}"

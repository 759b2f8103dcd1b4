"""SQL used by hand-written migrations: roles, forced RLS policies, owner-bound keys.

Policies compare with ``NULLIF(current_setting(..., true), '')::uuid`` because once a
setting has been used on a connection it reads back as '' (not NULL) in later
transactions, and ''::uuid would raise instead of matching nothing.
"""
from __future__ import annotations

from django.db import migrations

OWNER_PREDICATE = (
    "tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid"
    " AND principal_id = NULLIF(current_setting('app.principal_id', true), '')::uuid"
)
STAFF_PREDICATE = "current_setting('app.staff', true) = 'on'"


def owner_rls(table: str, *, staff_readable: bool = False) -> migrations.RunSQL:
    """ENABLE + FORCE row-level security with the owner policy (and, for content-free
    tables only, a read-only staff policy)."""
    sql = [
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY owner_isolation ON {table} USING ({OWNER_PREDICATE})"
        f" WITH CHECK ({OWNER_PREDICATE})",
    ]
    reverse = [
        f"DROP POLICY IF EXISTS owner_isolation ON {table}",
        f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY",
    ]
    if staff_readable:
        sql.append(f"CREATE POLICY staff_read ON {table} FOR SELECT USING ({STAFF_PREDICATE})")
        reverse.insert(0, f"DROP POLICY IF EXISTS staff_read ON {table}")
    return migrations.RunSQL(sql, reverse)


def owner_key(table: str) -> migrations.RunSQL:
    """A unique (tenant_id, principal_id, id) key that owner-bound foreign keys target."""
    name = f"{table}_owner_key"
    return migrations.RunSQL(
        f"ALTER TABLE {table} ADD CONSTRAINT {name} UNIQUE (tenant_id, principal_id, id)",
        f"ALTER TABLE {table} DROP CONSTRAINT {name}",
    )


def owner_foreign_key(table: str, column: str, target: str, *, on_delete: str = "CASCADE") -> migrations.RunSQL:
    """Bind a reference to the same owner: a row can never point at another owner's row."""
    name = f"{table}_{column}_owner_fk"
    return migrations.RunSQL(
        f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY (tenant_id, principal_id, {column})"
        f" REFERENCES {target} (tenant_id, principal_id, id) ON DELETE {on_delete}"
        " DEFERRABLE INITIALLY DEFERRED",
        f"ALTER TABLE {table} DROP CONSTRAINT {name}",
    )


def count_rows(schema_editor, table: str, where: str = "true") -> int:
    """Rows of an owner table, all owners' (for a migration's downgrade refusal): the
    migrating role owns the table, so lifting FORCE for the count lets it see every row."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
        cursor.execute(f"SELECT count(*) FROM {table} WHERE {where}")
        (rows,) = cursor.fetchone()
        cursor.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    return rows


def spend_days_into_the_ledger(table: str, purpose: str, *, charged: str, count: str,
                               staff_readable: bool = False) -> list:
    """Operations that copy every owner's rows of a per-owner daily spend table into the
    owner's spend ledger (``memory_spendday``) under ``purpose``, before the table is deleted.
    Rows are copied under lifted FORCE (the migrating role owns both tables). A downgrade
    refuses while spend of that purpose is recorded (dropping it would forget what was paid),
    and recreates the old table's forced RLS once its model is back."""

    def move(apps, schema_editor):
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
            cursor.execute("ALTER TABLE memory_spendday NO FORCE ROW LEVEL SECURITY")
            cursor.execute(
                "INSERT INTO memory_spendday (id, tenant_id, principal_id, purpose, day, charged_usd, reservations,"
                f" updated_at) SELECT id, tenant_id, principal_id, %s, day, {charged}, {count}, updated_at"
                f" FROM {table}", [purpose])
            cursor.execute("ALTER TABLE memory_spendday FORCE ROW LEVEL SECURITY")
            cursor.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")

    def refuse_while_recorded(apps, schema_editor):
        rows = count_rows(schema_editor, "memory_spendday", f"purpose = '{purpose}'")
        if rows:
            raise RuntimeError(f"Refusing to move the ledger back: {rows} day(s) of {purpose} spend recorded.")

    return [
        migrations.RunPython(move, refuse_while_recorded),
        migrations.RunSQL(migrations.RunSQL.noop, owner_rls(table, staff_readable=staff_readable).sql),
    ]

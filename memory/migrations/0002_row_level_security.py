"""Forced row-level security on every owner table, owner-bound foreign keys, and the one
function that may look across owners: token authentication.

``authenticate_owner_token`` is SECURITY DEFINER (owned by the migrating role) because a
bearer token has to be resolved to its owner before any owner context exists. It takes
only the SHA-256 of the token, returns only opaque IDs and scopes, and records last use.
"""
from django.db import migrations

from veetbot.migration_sql import owner_foreign_key, owner_key, owner_rls

OWNER_TABLES = [
    "memory_principal", "memory_ownerlock", "memory_erasurefence", "memory_ownertoken",
    "memory_person", "memory_session", "memory_event", "memory_eventpart", "memory_memory",
    "memory_memorysource", "memory_memoryrevision", "memory_changejournal", "memory_rejection",
    "memory_idempotencyreceipt",
]
# Content-free tables that the staff context may read.
STAFF_READABLE = {"memory_ownerlock", "memory_erasurefence", "memory_changejournal"}

AUTHENTICATE_SQL = """
CREATE FUNCTION authenticate_owner_token(p_token_hash text, p_now timestamptz)
RETURNS TABLE (tenant_id uuid, principal_id uuid, scopes varchar[])
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    UPDATE memory_ownertoken AS t SET last_used_at = p_now
    WHERE t.token_hash = p_token_hash AND t.revoked_at IS NULL
    RETURNING t.tenant_id, t.principal_id, t.scopes
$$;
REVOKE ALL ON FUNCTION authenticate_owner_token(text, timestamptz) FROM PUBLIC;
"""


def _grant_authenticate(apps, schema_editor):
    from django.conf import settings

    schema_editor.execute(
        f'GRANT EXECUTE ON FUNCTION authenticate_owner_token(text, timestamptz) TO "{settings.VEETBOT_RUNTIME_ROLE}"'
    )


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_originals")]

    operations = [
        *[owner_rls(table, staff_readable=table in STAFF_READABLE) for table in OWNER_TABLES],
        *[owner_key(t) for t in ("memory_session", "memory_event", "memory_eventpart", "memory_memory")],
        owner_foreign_key("memory_event", "session_id", "memory_session"),
        owner_foreign_key("memory_eventpart", "event_id", "memory_event"),
        owner_foreign_key("memory_memorysource", "memory_id", "memory_memory"),
        owner_foreign_key("memory_memorysource", "event_id", "memory_event"),
        owner_foreign_key("memory_memorysource", "part_id", "memory_eventpart"),
        owner_foreign_key("memory_memoryrevision", "memory_id", "memory_memory"),
        migrations.RunSQL(AUTHENTICATE_SQL, "DROP FUNCTION authenticate_owner_token(text, timestamptz)"),
        migrations.RunPython(_grant_authenticate, migrations.RunPython.noop),
    ]

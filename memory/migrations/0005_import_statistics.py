"""Planner statistics for a bulk import, taken inside the import's own transaction. Hand-written.

Why. Every owner table's foreign keys are owner-bound (``tenant_id, principal_id, id``), and
the import checks them statement by statement. Each check is ``WHERE tenant_id = $1 AND
principal_id = $2 AND id = $3``. While ``memory_memory`` has no statistics for the importing
owner — a new database, or a table whose statistics show only other owners — the planner
takes the owner's two columns for rare and serves the check from any index that starts with
them (``memory_status_expiry``), filtering on ``id``: every check reads every row the owner
has so far, and an import of 100,000 beliefs into a new database was still writing after
7.5 minutes when stopped (78 s with this function; measured with the recall load benchmark
and ``import_memory_bank``; ``perf`` showed the backend in ``heap_hot_search_buffer``,
``pg_stat_user_indexes`` two billion tuples read through ``memory_status_expiry`` and
``memory_recall_type_order``). After an ANALYZE that counts the rows written so far, the
same check is a primary-key probe.

An ANALYZE run by another connection cannot see the import's uncommitted rows, so the
importer calls this function after its first batch. ANALYZE counts rows inserted by its own
transaction as live; what it records is rolled back with a refused import.

The runtime role owns no table and may not ANALYZE one, so the function is SECURITY DEFINER,
owned by the migrating role (the pattern of ``recall_document_matches``). It takes no table
name: it analyses the four tables that foreign-key checks of an import read. It returns
whether it analysed: ANALYZE holds a SHARE UPDATE EXCLUSIVE lock until the import commits,
so a second concurrent import (or an operator's ANALYZE) would otherwise wait for the first;
past ``p_lock_timeout_ms`` it gives up and the import goes on with the statistics it has.
"""
from django.conf import settings
from django.db import migrations

SIGNATURE = "memory_import_analyze(integer)"

IMPORT_ANALYZE = """
CREATE FUNCTION memory_import_analyze(p_lock_timeout_ms integer)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = public, pg_temp SET lock_timeout = 0 AS $fn$
BEGIN
    -- The SET clause above restores the caller's lock_timeout on return.
    PERFORM set_config('lock_timeout', greatest(p_lock_timeout_ms, 1)::text, true);
    ANALYZE memory_session, memory_event, memory_eventpart, memory_memory;
    RETURN true;
EXCEPTION WHEN lock_not_available THEN
    RETURN false;
END
$fn$;
REVOKE ALL ON FUNCTION memory_import_analyze(integer) FROM PUBLIC;
"""


def _grant(apps, schema_editor):
    schema_editor.execute(f'GRANT EXECUTE ON FUNCTION {SIGNATURE} TO "{settings.VEETBOT_RUNTIME_ROLE}"')


class Migration(migrations.Migration):
    dependencies = [("memory", "0004_staff_directory")]

    operations = [
        migrations.RunSQL(IMPORT_ANALYZE, f"DROP FUNCTION {SIGNATURE}"),
        migrations.RunPython(_grant, migrations.RunPython.noop),
    ]

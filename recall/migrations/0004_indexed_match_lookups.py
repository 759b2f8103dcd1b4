"""Indexed lookups for current recall: full-text and entity matches through their GIN
indexes, and an index for the structured arm's newest-of-a-type anchors. Hand-written.

Why functions. Under forced row-level security the planner may not use a non-leakproof
operator (``tsvector @@ tsquery``, array ``&&``) as an index condition for the runtime
role, so the GIN indexes on ``memory_memory.recall_document`` and ``entity_ids``
(reconsolidation 0002) could never serve recall: every recall scanned the owner's whole
bank (≈ 90 ms at 100,000 beliefs). These two functions are SECURITY DEFINER, owned by the
migrating role — the pattern of ``reconsolidation_neighbours`` and
``authenticate_owner_token`` — and apply the RLS policies' own owner predicate from the same
transaction-local settings. They take no owner argument and return IDs (and, for text, the
match's store position and query-term coverage) only; they decide nothing about what may be
recalled. Every returned ID that becomes a candidate is first probed in
``recall.sql.permitted`` — RLS and every hard predicate — before any candidate LIMIT. Where the owning role is not a superuser the policies
still apply inside them: same rows, slower plan.

Only active, unerased originals are returned (only a current recall calls these, and it
recalls nothing else); every other predicate is the caller's. ``recall_entity_matches``
takes an optional bound: the expansion arm asks whether an entity is specific enough to
relate two beliefs, and needs no more than one row past its breadth bound to know (breadth
is counted over the owner's active originals, not over what one request may see).

PL/pgSQL ``EXECUTE ... USING`` plans each call for its own values: as SQL functions they
were planned once for any value, and that generic plan scanned the whole table (under a
LIMIT, a lexeme or entity of unknown frequency looks cheapest to find sequentially).

``memory_recall_type_order`` serves the structured arm's tier-1 anchors: the newest
permitted beliefs of one type, read in index order until the arm's limit is reached.
"""
from django.conf import settings
from django.db import migrations

_OWNER = """
              AND m.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid
              AND m.principal_id = NULLIF(current_setting('app.principal_id', true), '')::uuid
              AND m.erased_at IS NULL AND m.status = 'active'"""

DOCUMENT_MATCHES = f"""
CREATE FUNCTION recall_document_matches(p_query tsquery, p_lexemes text[])
RETURNS TABLE (memory_id uuid, store_position bigint, coverage integer)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
BEGIN
    RETURN QUERY EXECUTE $q$
        SELECT m.id, m.store_position,
               length(m.recall_document) - length(ts_delete(m.recall_document, $2))
        FROM memory_memory m
        WHERE m.recall_document @@ $1{_OWNER}
    $q$ USING p_query, p_lexemes;
END
$fn$;
REVOKE ALL ON FUNCTION recall_document_matches(tsquery, text[]) FROM PUBLIC;
"""

ENTITY_MATCHES = f"""
CREATE FUNCTION recall_entity_matches(p_entity_ids varchar[], p_limit integer DEFAULT NULL)
RETURNS TABLE (memory_id uuid)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
BEGIN
    RETURN QUERY EXECUTE $q$
        SELECT m.id FROM memory_memory m
        WHERE m.entity_ids && $1{_OWNER}
        LIMIT $2
    $q$ USING p_entity_ids, p_limit;
END
$fn$;
REVOKE ALL ON FUNCTION recall_entity_matches(varchar[], integer) FROM PUBLIC;
"""

FUNCTIONS = ("recall_document_matches(tsquery, text[])", "recall_entity_matches(varchar[], integer)")


def _grant(apps, schema_editor):
    for function in FUNCTIONS:
        schema_editor.execute(f'GRANT EXECUTE ON FUNCTION {function} TO "{settings.VEETBOT_RUNTIME_ROLE}"')


class Migration(migrations.Migration):
    dependencies = [
        ("recall", "0003_drop_lexical_gin"),
        ("reconsolidation", "0002_row_level_security"),  # the GIN indexes these functions use
    ]

    operations = [
        migrations.RunSQL(DOCUMENT_MATCHES, "DROP FUNCTION recall_document_matches(tsquery, text[])"),
        migrations.RunSQL(ENTITY_MATCHES, "DROP FUNCTION recall_entity_matches(varchar[], integer)"),
        migrations.RunPython(_grant, migrations.RunPython.noop),
        migrations.RunSQL(
            "CREATE INDEX memory_recall_type_order ON memory_memory"
            " (tenant_id, principal_id, belief_type, store_position)",
            "DROP INDEX memory_recall_type_order",
        ),
    ]

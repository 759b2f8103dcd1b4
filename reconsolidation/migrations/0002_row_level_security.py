"""Forced RLS on every reconsolidation table, owner-bound keys, the indexes the spec names,
the operation state guard and the neighbour lookup. Hand-written; additive.

* Content-free tables (jobs, groups, anchor receipts, operations, dependencies, members,
  spend, audit) carry the read-only staff policy. ``DerivedMemory`` (prose clauses) and
  ``ReconsolidationBlock`` (guessable claim hashes) do not.
* A partial unique index keeps a member in at most one active equivalence set.
* ``reconsolidation_operation_guard`` makes kind and input identities immutable and lets
  state move only proposed -> committed|rejected|stale and committed -> invalidated|undone.
* ``reconsolidation_neighbours`` is the indexed neighbour lookup (see reconsolidation/inventory/sql.py
  for why it is SECURITY DEFINER). Its SQL is frozen here on purpose.
* Three indexes on ``memory_memory`` serve that lookup: the normalised subject
  (``recall_subject_key``) in creation order, entity IDs (GIN) and the stored full-text
  document ``recall_document`` (GIN). The runtime role could never use the two GIN
  indexes under forced RLS (recall 0003 dropped its expression index for that reason);
  the SECURITY DEFINER lookup can, which is what keeps grouping an indexed probe per key.

Downgrade refuses, before changing anything, while the processing switch is on, while a
job holds a live lease, or while derived history exists: unapplying would lose operation
history, derived memories, undo blocks and the spend ledger, and it says so.
"""
from django.conf import settings
from django.db import migrations

from veetbot.migration_sql import owner_foreign_key, owner_key, owner_rls

TABLES = [
    "reconsolidation_reconsolidationjob", "reconsolidation_reconsolidationgroup",
    "reconsolidation_reconsolidationanchorreceipt", "reconsolidation_reconsolidationoperation",
    "reconsolidation_reconsolidationdependency", "reconsolidation_reconsolidationmember",
    "reconsolidation_derivedmemory", "reconsolidation_reconsolidationblock",
    "reconsolidation_reconsolidationspendday", "reconsolidation_reconsolidationspend",
    "reconsolidation_reconsolidationaudit",
]
NOT_STAFF_READABLE = {"reconsolidation_derivedmemory", "reconsolidation_reconsolidationblock"}
# Rows whose loss a downgrade must refuse: derived history, undo constraints, money.
HISTORY_TABLES = [
    "reconsolidation_reconsolidationoperation", "reconsolidation_reconsolidationdependency",
    "reconsolidation_reconsolidationmember", "reconsolidation_derivedmemory",
    "reconsolidation_reconsolidationblock", "reconsolidation_reconsolidationspend",
    "reconsolidation_reconsolidationspendday", "reconsolidation_reconsolidationaudit",
]

OPERATION_GUARD = """
CREATE FUNCTION reconsolidation_operation_guard() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
    IF NEW.tenant_id <> OLD.tenant_id OR NEW.principal_id <> OLD.principal_id
       OR NEW.kind <> OLD.kind OR NEW.policy <> OLD.policy OR NEW.group_id <> OLD.group_id
       OR NEW.input_digest <> OLD.input_digest OR NEW.input_ids <> OLD.input_ids
       OR NEW.input_revisions <> OLD.input_revisions OR NEW.created_at <> OLD.created_at THEN
        RAISE EXCEPTION 'reconsolidation operation identity is immutable' USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.state <> OLD.state AND NOT (
           (OLD.state = 'proposed' AND NEW.state IN ('committed', 'rejected', 'stale'))
        OR (OLD.state = 'committed' AND NEW.state IN ('invalidated', 'undone'))) THEN
        RAISE EXCEPTION 'reconsolidation operation state % cannot become %', OLD.state, NEW.state
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.revision < OLD.revision OR (NEW.state <> OLD.state AND NEW.revision <= OLD.revision) THEN
        RAISE EXCEPTION 'reconsolidation operation revision must increase with its state'
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER reconsolidation_operation_guard BEFORE UPDATE ON reconsolidation_reconsolidationoperation
    FOR EACH ROW EXECUTE FUNCTION reconsolidation_operation_guard();
"""
OPERATION_GUARD_REVERSE = """
DROP TRIGGER reconsolidation_operation_guard ON reconsolidation_reconsolidationoperation;
DROP FUNCTION reconsolidation_operation_guard();
"""

# The eligibility of a candidate ``x`` in scope ``{scope}`` of the calling owner ``o``:
# the policies' own owner predicate, lifecycle, erasure, expiry at p_now, direct
# derivation, sensitivity ceiling, scope (equal local scope, or user scope with every
# input portable) and owner user.message.created evidence that is neither excluded nor
# erased. It depends on the scope only, so probes are shared by a batch's anchors.
_ELIGIBLE = """
    x.tenant_id = o.tenant_id AND x.principal_id = o.principal_id
    AND x.erased_at IS NULL AND x.status = 'active'
    AND (x.expires_at IS NULL OR x.expires_at > p_now)
    AND x.derivation <> 'inferred'
    AND x.sensitivity = ANY(p_sensitivities)
    AND x.scope = {scope} AND (x.scope <> 'user' OR x.portable)
    AND EXISTS (
        SELECT 1 FROM memory_memorysource s
        CROSS JOIN LATERAL (
            SELECT 1 FROM memory_event e
            WHERE e.id = s.event_id AND e.kind = 'user.message.created' AND e.speaker = 'owner'
              AND NOT e.excluded AND e.erased_at IS NULL
            LIMIT 1
        ) e
        WHERE s.memory_id = x.id
    )
"""
# (Sources and events need no owner test: owner-bound foreign keys tie them to their
# original's owner.)
# The stored English full-text document of subject + statement (memory 0003).
_DOCUMENT = "{m}.recall_document"
# One lexeme as a tsquery, quoted so that no character of it is read as an operator.
_LEXEME_QUERY = r"""('''' || replace(replace(k.v, '\', '\\'), '''', '''''') || '''')::tsquery"""

# ``enable_seqscan = off`` inside the function only: every access here is meant to be an
# indexed probe, and without statistics (a fresh bulk import) the planner would otherwise
# happily read whole tables per key.
NEIGHBOURS_FUNCTION = f"""
CREATE FUNCTION reconsolidation_neighbours(
    p_anchor_ids uuid[], p_now timestamptz, p_sensitivities text[], p_start_key bigint,
    p_neighbours integer, p_channel_rows integer, p_max_lexemes integer, p_min_overlap integer
) RETURNS TABLE (anchor_id uuid, memory_id uuid, match_rank integer, overlap integer,
                 creation_sequence bigint, content_revision integer)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp SET enable_seqscan = off AS $fn$
    WITH o AS MATERIALIZED (
        SELECT NULLIF(current_setting('app.tenant_id', true), '')::uuid AS tenant_id,
               NULLIF(current_setting('app.principal_id', true), '')::uuid AS principal_id
    ), anchors AS MATERIALIZED (
        SELECT a.id, a.recall_subject_key AS subject, a.scope, (a.entity_ids)[1:16]::text[] AS entity_ids,
               (tsvector_to_array({_DOCUMENT.format(m="a")}))[1:p_max_lexemes] AS lexemes
        FROM o JOIN memory_memory a ON a.tenant_id = o.tenant_id AND a.principal_id = o.principal_id
        WHERE a.id = ANY(p_anchor_ids)
    ),
    -- Each distinct (scope, entity ID) and (scope, lexeme) of the batch is probed once
    -- through its GIN index: the key alone selects (behind OFFSET 0, so the planner cannot
    -- trade the GIN index for an owner-prefixed scan when statistics are missing), then the
    -- eligibility filters run on those rows before the bound. A key held by more than
    -- p_channel_rows eligible originals says nothing about relatedness and is dropped
    -- whole (never truncated: no arbitrary subset can enter a group).
    entity_hits AS MATERIALIZED (
        SELECT k.scope, k.v, p.ids
        FROM (SELECT DISTINCT a.scope, e.v FROM anchors a, unnest(a.entity_ids) AS e(v)) k
        CROSS JOIN o
        CROSS JOIN LATERAL (
            SELECT array_agg(y.id) AS ids, count(*) AS n FROM (
                SELECT x.id
                FROM (SELECT * FROM memory_memory WHERE entity_ids @> ARRAY[k.v]::varchar[] OFFSET 0) x
                WHERE {_ELIGIBLE.format(scope="k.scope")}
                LIMIT p_channel_rows + 1) y
        ) p
        WHERE p.n <= p_channel_rows
    ), lexeme_hits AS MATERIALIZED (
        SELECT k.scope, k.v, p.ids
        FROM (SELECT DISTINCT a.scope, l.v FROM anchors a, unnest(a.lexemes) AS l(v)) k
        CROSS JOIN o
        CROSS JOIN LATERAL (
            SELECT array_agg(y.id) AS ids, count(*) AS n FROM (
                SELECT x.id
                FROM (SELECT * FROM memory_memory x WHERE {_DOCUMENT.format(m="x")} @@ {_LEXEME_QUERY} OFFSET 0) x
                WHERE {_ELIGIBLE.format(scope="k.scope")}
                LIMIT p_channel_rows + 1) y
        ) p
        WHERE p.n <= p_channel_rows
    )
    SELECT a.id, c.id, c.match_rank, c.overlap, c.creation_sequence, c.content_revision
    FROM anchors a
    CROSS JOIN o
    CROSS JOIN LATERAL (
        SELECT scored.* FROM (
            SELECT m.id, m.creation_sequence, m.content_revision::integer AS content_revision,
                   ((a.subject <> '' AND m.recall_subject_key = a.subject)::integer
                    + (m.entity_ids::text[] && a.entity_ids)::integer) AS match_rank,
                   cardinality(ARRAY(
                       SELECT unnest(tsvector_to_array({_DOCUMENT.format(m="m")}))
                       INTERSECT SELECT unnest(a.lexemes)
                   )) AS overlap
            -- Candidates come only from the owner-filtered probes below, so each is looked
            -- up by primary key.
            FROM (
                SELECT DISTINCT u.id FROM (
                    -- exact subject, from the generation's rotating start key, then wrapped
                    (SELECT x.id FROM memory_memory x
                     WHERE a.subject <> '' AND x.recall_subject_key = a.subject AND x.creation_sequence >= p_start_key
                       AND {_ELIGIBLE.format(scope="a.scope")}
                     ORDER BY x.creation_sequence LIMIT p_channel_rows)
                    UNION ALL
                    (SELECT x.id FROM memory_memory x
                     WHERE a.subject <> '' AND x.recall_subject_key = a.subject AND x.creation_sequence < p_start_key
                       AND {_ELIGIBLE.format(scope="a.scope")}
                     ORDER BY x.creation_sequence LIMIT p_channel_rows)
                    UNION ALL
                    SELECT unnest(h.ids) FROM entity_hits h WHERE h.scope = a.scope AND h.v = ANY(a.entity_ids)
                    UNION ALL
                    SELECT unnest(h.ids) FROM lexeme_hits h WHERE h.scope = a.scope AND h.v = ANY(a.lexemes)
                ) AS u(id)
                WHERE u.id <> a.id
            ) candidate
            JOIN memory_memory m ON m.id = candidate.id
        ) scored
        -- a lexical-only neighbour must share at least p_min_overlap distinct lexemes
        WHERE scored.match_rank > 0 OR scored.overlap >= p_min_overlap
        ORDER BY scored.match_rank DESC, scored.overlap DESC, (scored.creation_sequence < p_start_key),
                 scored.creation_sequence, scored.id
        LIMIT p_neighbours
    ) c
$fn$;
REVOKE ALL ON FUNCTION reconsolidation_neighbours(uuid[], timestamptz, text[], bigint, integer, integer, integer, integer) FROM PUBLIC;
"""
NEIGHBOURS_FUNCTION_REVERSE = (
    "DROP FUNCTION reconsolidation_neighbours(uuid[], timestamptz, text[], bigint, integer, integer, integer, integer)"
)


def _grant_neighbours(apps, schema_editor):
    schema_editor.execute(
        "GRANT EXECUTE ON FUNCTION reconsolidation_neighbours(uuid[], timestamptz, text[], bigint, integer,"
        f' integer, integer, integer) TO "{settings.VEETBOT_RUNTIME_ROLE}"'
    )


def _refuse_losing_history(apps, schema_editor):
    """Reverse only: refuse before anything changes (the migration is one transaction)."""
    problems = []
    if getattr(settings, "AGENT_MEMORY_RECONSOLIDATION_ENABLED", False):
        problems.append("AGENT_MEMORY_RECONSOLIDATION_ENABLED is on")
    with schema_editor.connection.cursor() as cursor:
        # The migrating role owns these tables; without FORCE the owner sees every
        # owner's rows. A refusal rolls this back with everything else.
        for table in TABLES:
            cursor.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
        cursor.execute(
            "SELECT count(*) FROM reconsolidation_reconsolidationjob WHERE lease_expires_at > now()"
        )
        (leased,) = cursor.fetchone()
        if leased:
            problems.append(f"{leased} job(s) hold a live lease")
        for table in HISTORY_TABLES:
            cursor.execute(f"SELECT count(*) FROM {table}")
            (rows,) = cursor.fetchone()
            if rows:
                problems.append(f"{table} holds {rows} row(s)")
        for table in TABLES:
            cursor.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    if problems:
        raise RuntimeError(
            "Refusing to unapply reconsolidation: derived history would be lost (operation history,"
            " derived memories, undo blocks and the spend ledger cannot be restored). "
            + "; ".join(problems)
            + ". Turn processing off, let leases expire and remove that history deliberately first."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("reconsolidation", "0001_tables"),
        ("memory", "0003_search_columns"),  # recall_document and recall_subject_key
    ]

    operations = [
        *[owner_rls(table, staff_readable=table not in NOT_STAFF_READABLE) for table in TABLES],
        *[owner_key(t) for t in (
            "reconsolidation_reconsolidationjob", "reconsolidation_reconsolidationgroup",
            "reconsolidation_reconsolidationoperation",
        )],
        owner_foreign_key("reconsolidation_reconsolidationgroup", "job_id", "reconsolidation_reconsolidationjob", on_delete="NO ACTION"),
        owner_foreign_key("reconsolidation_reconsolidationanchorreceipt", "job_id", "reconsolidation_reconsolidationjob"),
        owner_foreign_key("reconsolidation_reconsolidationoperation", "group_id", "reconsolidation_reconsolidationgroup", on_delete="NO ACTION"),
        owner_foreign_key("reconsolidation_reconsolidationdependency", "operation_id", "reconsolidation_reconsolidationoperation"),
        owner_foreign_key("reconsolidation_reconsolidationdependency", "memory_id", "memory_memory", on_delete="NO ACTION"),
        owner_foreign_key("reconsolidation_reconsolidationdependency", "event_id", "memory_event", on_delete="NO ACTION"),
        owner_foreign_key("reconsolidation_reconsolidationmember", "operation_id", "reconsolidation_reconsolidationoperation"),
        owner_foreign_key("reconsolidation_reconsolidationmember", "canonical_id", "memory_memory", on_delete="NO ACTION"),
        owner_foreign_key("reconsolidation_reconsolidationmember", "member_id", "memory_memory", on_delete="NO ACTION"),
        owner_foreign_key("reconsolidation_derivedmemory", "operation_id", "reconsolidation_reconsolidationoperation"),
        owner_foreign_key("reconsolidation_reconsolidationspend", "job_id", "reconsolidation_reconsolidationjob", on_delete="NO ACTION"),
        migrations.RunSQL(
            "CREATE UNIQUE INDEX reconmember_one_active_set ON reconsolidation_reconsolidationmember"
            " (tenant_id, principal_id, member_id) WHERE active",
            "DROP INDEX reconmember_one_active_set",
        ),
        migrations.RunSQL(
            "CREATE INDEX recongroup_pending_by_age ON reconsolidation_reconsolidationgroup"
            " (tenant_id, principal_id, policy, created_at, id) WHERE state IN ('pending', 'leased')",
            "DROP INDEX recongroup_pending_by_age",
        ),
        migrations.RunSQL(
            "CREATE INDEX memory_recon_subject ON memory_memory"
            " (tenant_id, principal_id, recall_subject_key, creation_sequence)"
            " WHERE erased_at IS NULL AND status = 'active'",
            "DROP INDEX memory_recon_subject",
        ),
        migrations.RunSQL(
            "CREATE INDEX memory_recon_document ON memory_memory USING gin (recall_document)",
            "DROP INDEX memory_recon_document",
        ),
        migrations.RunSQL(
            "CREATE INDEX memory_recon_entities ON memory_memory USING gin (entity_ids)",
            "DROP INDEX memory_recon_entities",
        ),
        migrations.RunSQL(OPERATION_GUARD, OPERATION_GUARD_REVERSE),
        migrations.RunSQL(NEIGHBOURS_FUNCTION, NEIGHBOURS_FUNCTION_REVERSE),
        migrations.RunPython(_grant_neighbours, migrations.RunPython.noop),
        # Last, so that on reverse it runs first and refuses before anything is dropped.
        migrations.RunPython(migrations.RunPython.noop, _refuse_losing_history),
    ]

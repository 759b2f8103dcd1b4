"""The neighbour lookup reports the keys it found too common, and skips the ones it is told.

A key (a word or an entity ID, within a scope) held by more than ``p_channel_rows``
eligible originals is dropped whole: it says nothing about relatedness. Finding that out
is the lookup's dearest step — the GIN probe of a common word builds a bitmap of all its
holders before the eligibility checks stop at ``p_channel_rows + 1`` (at 100,000
originals, "owner" has 94,000 holders: about 14 ms a word). A slice looks anchors up in a
few statements (2, 4, 8 … anchors), and the same common words come back in each.

So the function now takes ``p_common_keys`` (keys the caller already knows are too
common: they are not probed) and returns, besides the neighbour rows, one row per key it
found too common (``common_key``; the other columns NULL). Within one slice's lookups the
bank is the same, so a skipped key is one the lookup would have dropped again.

A key is ``kind || chr(31) || scope || chr(31) || value`` (kind ``e`` for an entity ID,
``l`` for a lexeme; no scope contains chr(31), so the form is unambiguous).

The function is stated whole here rather than derived by string replacement from 0002,
0013 and 0015, so the current lookup reads in one place; 0002's eligibility predicate and
lexeme quoting are shared, as each earlier step shared them.
"""
import importlib

from django.conf import settings
from django.db import migrations

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")
_0015 = importlib.import_module("reconsolidation.migrations.0015_scope_qualified_local_keys")

_ELIGIBLE = _0002._ELIGIBLE
_OLD_SIGNATURE = "uuid[], timestamptz, text[], bigint, integer, integer, integer, integer"
_SIGNATURE = f"{_OLD_SIGNATURE}, text[]"

# ``enable_seqscan = off`` inside the function only: every access here is meant to be an
# indexed probe, and without statistics (a fresh bulk import) the planner would otherwise
# happily read whole tables per key.
FUNCTION = f"""
CREATE FUNCTION reconsolidation_neighbours(
    p_anchor_ids uuid[], p_now timestamptz, p_sensitivities text[], p_start_key bigint,
    p_neighbours integer, p_channel_rows integer, p_max_lexemes integer, p_min_overlap integer,
    p_common_keys text[]
) RETURNS TABLE (anchor_id uuid, memory_id uuid, match_rank integer, overlap integer,
                 creation_sequence bigint, content_revision integer, common_key text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp SET enable_seqscan = off AS $fn$
    WITH o AS MATERIALIZED (
        SELECT NULLIF(current_setting('app.tenant_id', true), '')::uuid AS tenant_id,
               NULLIF(current_setting('app.principal_id', true), '')::uuid AS principal_id
    ), anchors AS MATERIALIZED (
        SELECT a.id, a.recall_subject_key AS subject, a.scope, (a.entity_ids)[1:16]::text[] AS entity_ids,
               (tsvector_to_array(a.recall_document))[1:p_max_lexemes] AS lexemes
        FROM o JOIN memory_memory a ON a.tenant_id = o.tenant_id AND a.principal_id = o.principal_id
        WHERE a.id = ANY(p_anchor_ids)
    ),
    -- Each distinct key of the batch the caller does not already know to be too common.
    keys AS MATERIALIZED (
        SELECT k.kind, k.scope, k.v, k.kind || chr(31) || k.scope || chr(31) || k.v AS key
        FROM (SELECT DISTINCT 'e' AS kind, a.scope, e.v FROM anchors a, unnest(a.entity_ids) AS e(v)
              UNION
              SELECT DISTINCT 'l', a.scope, l.v FROM anchors a, unnest(a.lexemes) AS l(v)) k
        WHERE k.kind || chr(31) || k.scope || chr(31) || k.v <> ALL(p_common_keys)
    ),
    -- Each key is probed once through its GIN index: a shared-scope key in the whole index,
    -- a local one qualified by its scope (0015), so it reads that scope's holders alone. The
    -- key alone selects (behind OFFSET 0, so the planner cannot trade the GIN index for an
    -- owner-prefixed scan when statistics are missing); the branches not taken are one-time
    -- filters, never executed. Then the eligibility filters run before the bound: a key held
    -- by more than p_channel_rows eligible originals is common and contributes nothing
    -- (never truncated: no arbitrary subset can enter a group).
    hits AS MATERIALIZED (
        SELECT k.kind, k.scope, k.v, k.key, p.n > p_channel_rows AS common,
               CASE WHEN p.n <= p_channel_rows THEN p.ids END AS ids
        FROM keys k
        CROSS JOIN o
        CROSS JOIN LATERAL (
            SELECT array_agg(y.id) AS ids, count(*) AS n FROM (
                SELECT x.id
                FROM ((SELECT * FROM memory_memory x
                       WHERE k.kind = 'e' AND k.scope = 'user' AND x.entity_ids @> ARRAY[k.v]::varchar[] OFFSET 0)
                      UNION ALL
                      (SELECT * FROM memory_memory x
                       WHERE k.kind = 'e' AND k.scope <> 'user' AND x.scope <> 'user' AND x.scope = k.scope
                         AND reconsolidation_scoped_keys(x.scope, x.entity_ids::text[])
                             @> ARRAY[k.scope || chr(31) || k.v] OFFSET 0)
                      UNION ALL
                      (SELECT * FROM memory_memory x
                       WHERE k.kind = 'l' AND k.scope = 'user' AND x.recall_document @@ {_0002._LEXEME_QUERY} OFFSET 0)
                      UNION ALL
                      (SELECT * FROM memory_memory x
                       WHERE k.kind = 'l' AND k.scope <> 'user' AND x.scope <> 'user' AND x.scope = k.scope
                         AND reconsolidation_scoped_keys(x.scope, tsvector_to_array(x.recall_document))
                             @> ARRAY[k.scope || chr(31) || k.v] OFFSET 0)) x
                WHERE {_ELIGIBLE.format(scope="k.scope")}
                LIMIT p_channel_rows + 1) y
        ) p
    )
    SELECT a.id, c.id, c.match_rank, c.overlap, c.creation_sequence, c.content_revision, NULL::text
    FROM anchors a
    CROSS JOIN o
    CROSS JOIN LATERAL (
        SELECT scored.* FROM (
            SELECT m.id, m.creation_sequence, m.content_revision::integer AS content_revision,
                   ((a.subject <> '' AND m.recall_subject_key = a.subject)::integer
                    + (m.entity_ids::text[] && a.entity_ids)::integer) AS match_rank,
                   cardinality(ARRAY(
                       SELECT unnest(tsvector_to_array(m.recall_document))
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
                    SELECT unnest(h.ids) FROM hits h
                    WHERE NOT h.common AND h.scope = a.scope
                      AND ((h.kind = 'e' AND h.v = ANY(a.entity_ids)) OR (h.kind = 'l' AND h.v = ANY(a.lexemes)))
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
    UNION ALL
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, h.key FROM hits h WHERE h.common
$fn$;
REVOKE ALL ON FUNCTION reconsolidation_neighbours({_SIGNATURE}) FROM PUBLIC;
"""
PREVIOUS_FUNCTION = _0015.QUALIFIED_FUNCTION.replace("CREATE OR REPLACE FUNCTION", "CREATE FUNCTION", 1)


def _grant(signature: str):
    def grant(apps, schema_editor):
        schema_editor.execute(f"GRANT EXECUTE ON FUNCTION reconsolidation_neighbours({signature})"
                              f' TO "{settings.VEETBOT_RUNTIME_ROLE}"')
    return grant


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0015_scope_qualified_local_keys")]

    operations = [
        # (reverse: the old signature's grant comes back after its function does)
        migrations.RunPython(migrations.RunPython.noop, _grant(_OLD_SIGNATURE)),
        migrations.RunSQL(f"DROP FUNCTION reconsolidation_neighbours({_OLD_SIGNATURE})", PREVIOUS_FUNCTION),
        migrations.RunSQL(FUNCTION, f"DROP FUNCTION reconsolidation_neighbours({_SIGNATURE})"),
        migrations.RunPython(_grant(_SIGNATURE), migrations.RunPython.noop),
    ]

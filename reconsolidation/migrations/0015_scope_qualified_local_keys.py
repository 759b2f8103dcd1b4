"""A local-scope anchor's word and entity probes read its own scope's holders only.

0013 gave the local scopes' originals (every scope but the shared 'user') GIN indexes of
their own, so a local anchor no longer read the shared scope's holders of its words. But
those indexes hold every local scope together: at 100,000 originals in 1,600 sessions and
projects, a session anchor's probe of a common word ("owner" is in 94 % of originals)
still read the 6,000 local holders of every other session to keep its few — about 100 ms
an anchor, most of a neighbour statement's time whenever its batch held one.

Here the local keys are qualified by their scope inside the index: the GIN indexes are over
``reconsolidation_scoped_keys(scope, keys)`` (each key as ``scope || chr(31) || key``; no
scope contains chr(31)), partial on the local scopes as before, and the function probes a
local key as ``scope || chr(31) || key`` among the originals of that scope (so whichever
index the planner takes, the scope-qualified key or 0013's btree on owner and scope, it
reads that scope alone). A lexeme's containment in the array is its match in
the document (the probe's tsquery is the quoted lexeme alone), so the rows are the same.
0013's two local GIN indexes are dropped (its btree on owner and scope stays: the semantic
arm's in-scope search reads it).
"""
import importlib

from django.db import migrations

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")
_0013 = importlib.import_module("reconsolidation.migrations.0013_scoped_neighbour_probes")

_LOCAL = _0013._LOCAL
_SCOPED_KEYS = """
CREATE FUNCTION reconsolidation_scoped_keys(p_scope text, p_keys text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT array_agg(p_scope || chr(31) || k) FROM unnest(p_keys) AS k
$fn$;
"""
_DOCUMENT_KEYS = "reconsolidation_scoped_keys(scope, tsvector_to_array(recall_document))"
_ENTITY_KEYS = "reconsolidation_scoped_keys(scope, entity_ids::text[])"
_KEY = "ARRAY[k.scope || chr(31) || k.v]"

_PROBES = {
    f"k.scope <> 'user' AND x.{_LOCAL} AND x.entity_ids @> ARRAY[k.v]::varchar[]":
        f"k.scope <> 'user' AND x.{_LOCAL} AND x.scope = k.scope"
        f" AND reconsolidation_scoped_keys(x.scope, x.entity_ids::text[]) @> {_KEY}",
    f"k.scope <> 'user' AND x.{_LOCAL} AND x.recall_document @@ {_0002._LEXEME_QUERY}":
        f"k.scope <> 'user' AND x.{_LOCAL} AND x.scope = k.scope"
        f" AND reconsolidation_scoped_keys(x.scope, tsvector_to_array(x.recall_document)) @> {_KEY}",
}


def _qualified(function: str) -> str:
    for old, new in _PROBES.items():
        if function.count(old) != 1:
            raise RuntimeError(f"0013's neighbour function has changed; expected one local probe {old!r}")
        function = function.replace(old, new)
    return function


QUALIFIED_FUNCTION = _qualified(_0013.SCOPED_FUNCTION)


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0014_operation_state_and_slice_indexes")]

    operations = [
        migrations.RunSQL(_SCOPED_KEYS, "DROP FUNCTION reconsolidation_scoped_keys(text, text[])"),
        migrations.RunSQL(
            f"CREATE INDEX memory_recon_scoped_document ON memory_memory USING gin ({_DOCUMENT_KEYS}) WHERE {_LOCAL}",
            "DROP INDEX memory_recon_scoped_document",
        ),
        migrations.RunSQL(
            f"CREATE INDEX memory_recon_scoped_entities ON memory_memory USING gin ({_ENTITY_KEYS}) WHERE {_LOCAL}",
            "DROP INDEX memory_recon_scoped_entities",
        ),
        migrations.RunSQL(QUALIFIED_FUNCTION, _0013.SCOPED_FUNCTION),
        migrations.RunSQL(
            "DROP INDEX memory_recon_local_document",
            f"CREATE INDEX memory_recon_local_document ON memory_memory USING gin (recall_document) WHERE {_LOCAL}",
        ),
        migrations.RunSQL(
            "DROP INDEX memory_recon_local_entities",
            f"CREATE INDEX memory_recon_local_entities ON memory_memory USING gin (entity_ids) WHERE {_LOCAL}",
        ),
    ]

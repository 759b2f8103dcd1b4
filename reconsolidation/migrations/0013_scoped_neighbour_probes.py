"""Dreaming's neighbour probes read a local scope's originals apart from the shared scope's.

``reconsolidation_neighbours`` (0002) probes each distinct (scope, word) and (scope, entity
ID) of a batch through a GIN index over the key alone, then keeps the rows of the anchor's
scope. A common word is held by thousands of originals, most of them in the shared scope
('user'); an anchor in a local scope (a session, a project) keeps the few of its own. At
100,000 originals such a probe read about 4,100 rows to keep a handful.

Here the local scopes' originals get indexes of their own, partial on ``scope <> 'user'``
(a small share of a bank, so cheap to keep up): the word and entity GIN indexes, and a
btree on (owner, scope) with which ``grouping.semantic_neighbours`` compares an anchor of a
small local scope with its scope's originals only. The function probes a shared-scope key
as before and a local-scope key through the local index; the branch not taken is a
one-time filter, never run. Otherwise it is 0002's text: the same eligibility before every
bound, the same bounds and order, so the same neighbours.

(PostgreSQL's ``btree_gin``, which would put owner and scope in the GIN indexes themselves,
is not in the embedded server's build.)
"""
import importlib

from django.db import migrations

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")

# The shared scope ('user') against every local one (a session, a project): see above.
_LOCAL = "scope <> 'user'"


def _split(probe: str) -> str:
    """A key probe read from the whole index for a user-scope key, and from the local-scope
    index for a local one; the branch not taken is a one-time filter, never executed."""
    return (f"FROM ((SELECT * FROM memory_memory x WHERE k.scope = 'user' AND {probe} OFFSET 0)"
            f" UNION ALL (SELECT * FROM memory_memory x WHERE k.scope <> 'user' AND x.{_LOCAL} AND {probe}"
            " OFFSET 0)) x")


_PROBES = {
    "FROM (SELECT * FROM memory_memory WHERE entity_ids @> ARRAY[k.v]::varchar[] OFFSET 0) x":
        _split("x.entity_ids @> ARRAY[k.v]::varchar[]"),
    f"FROM (SELECT * FROM memory_memory x WHERE x.recall_document @@ {_0002._LEXEME_QUERY} OFFSET 0) x":
        _split(f"x.recall_document @@ {_0002._LEXEME_QUERY}"),
}


def _scoped(function: str) -> str:
    for old, new in _PROBES.items():
        if function.count(old) != 1:
            raise RuntimeError(f"0002's neighbour function has changed; expected one probe {old!r}")
        function = function.replace(old, new)
    return function.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


SCOPED_FUNCTION = _scoped(_0002.NEIGHBOURS_FUNCTION)
PREVIOUS_FUNCTION = _0002.NEIGHBOURS_FUNCTION.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0012_inlinable_equivalence_digest")]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX memory_recon_local_document ON memory_memory USING gin (recall_document) WHERE {_LOCAL}",
            "DROP INDEX memory_recon_local_document",
        ),
        migrations.RunSQL(
            f"CREATE INDEX memory_recon_local_entities ON memory_memory USING gin (entity_ids) WHERE {_LOCAL}",
            "DROP INDEX memory_recon_local_entities",
        ),
        migrations.RunSQL(
            f"CREATE INDEX memory_recon_local_scope ON memory_memory (tenant_id, principal_id, scope) WHERE {_LOCAL}",
            "DROP INDEX memory_recon_local_scope",
        ),
        migrations.RunSQL(SCOPED_FUNCTION, PREVIOUS_FUNCTION),
    ]

"""The neighbour lookup's key probes start from the owner and the anchor's scope.

``reconsolidation_neighbours`` (0002) probes each distinct (scope, lexeme) and (scope,
entity ID) of a batch through a GIN index over the key alone, then filters the rows it
read by owner, scope and eligibility. A common word is held by thousands of originals, of
every owner and scope; an anchor in a local scope (a session or a project) keeps the few of
its own scope. At 100,000 originals a probe read about 4,100 rows to keep about 40, and one
batch of eight anchors took about 370 ms: most of a slow dreaming checkpoint.

Here both GIN indexes also hold the owner and the scope (``btree_gin`` indexes the plain
columns), and each probe names them, so the index returns only the owner's rows of that
scope that hold the key. A multicolumn GIN index serves any subset of its columns as well as
all of them, so recall's own lookups (``recall_document_matches`` and
``recall_entity_matches``, which name the owner but not the scope) keep using these indexes.

The function is otherwise 0002's text: the same eligibility before every bound, the same
bounds, the same order, so the same neighbours. ``btree_gin`` ships with PostgreSQL and is a
trusted extension: a role with CREATE on the database may create it.
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
        migrations.RunSQL(SCOPED_FUNCTION, PREVIOUS_FUNCTION),
    ]

"""Rebuild the vector index as a denser graph: m 48, ef_construction 400 (was 16 / 64).

Recall's queries are questions, and a question lies away from the statements that answer it
in the encoder's space. A sparse graph navigates poorly there: over 100,000 memories the
diagnostic's questions found 86 % of their 160 exact neighbours through the m 16 / 64 graph
at ef_search 1,000, and rendered recall through the index was 10 points below exact search.
The same probe on m 48 / 400 found 96-97 % in one candidate list and all of them within
``RECALL_HNSW_SEARCH_DEPTH`` (2,000) permitted rows (evals/README.md, 2026-12-06). Statements
used as queries (dreaming's neighbour probes) were already found at 98.5 %; they lose nothing.

The cost is paid once, here: a parallel build of 100,000 vectors took 83 s on two cores
(46 s at m 32 / 200, which found 95 %), and each later insert walks the denser graph.
Reversible: the reverse migration rebuilds the former graph.
"""
from django.db import migrations

INDEX = "memoryvector_embedding_hnsw"


def rebuild(m: int, ef_construction: int) -> list[str]:
    # SET LOCAL: the build's memory is the migration's transaction alone; a graph larger than
    # maintenance_work_mem still builds, only slower.
    return [
        "SET LOCAL maintenance_work_mem = '1GB'",
        f"DROP INDEX {INDEX}",
        f"CREATE INDEX {INDEX} ON recall_memoryvector"
        f" USING hnsw (embedding vector_cosine_ops) WITH (m = {m}, ef_construction = {ef_construction})",
    ]


class Migration(migrations.Migration):
    dependencies = [("recall", "0011_trace_excerpt_digests")]

    operations = [migrations.RunSQL(rebuild(48, 400), rebuild(16, 64))]

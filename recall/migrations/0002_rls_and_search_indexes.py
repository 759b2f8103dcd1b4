"""Forced RLS on recall's tables, the owner-bound vector key, and the search indexes.

* HNSW (cosine) over vectors: m=16, ef_construction=64. Owner filtering happens after
  the index scan, so queries enable pgvector 0.8 iterative scans; an exact mode exists too.
* A GIN index over the English full-text vector of subject + statement for the lexical
  arm. Queries must use the identical expression (recall.sql.DOCUMENT_TSVECTOR).
"""
from django.db import migrations

from veetbot.migration_sql import owner_foreign_key, owner_rls

LEXICAL_INDEX = (
    "CREATE INDEX memory_lexical_gin ON memory_memory USING gin "
    "(to_tsvector('english'::regconfig, subject || ' ' || statement))"
)


class Migration(migrations.Migration):
    dependencies = [("recall", "0001_semantic_index_and_traces")]

    operations = [
        owner_rls("recall_memoryvector"),
        owner_rls("recall_recalltrace", staff_readable=True),
        owner_foreign_key("recall_memoryvector", "memory_id", "memory_memory"),
        migrations.RunSQL(
            "CREATE INDEX memoryvector_embedding_hnsw ON recall_memoryvector"
            " USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)",
            "DROP INDEX memoryvector_embedding_hnsw",
        ),
        migrations.RunSQL(
            "CREATE INDEX memoryvector_owner_space ON recall_memoryvector (tenant_id, principal_id, space)",
            "DROP INDEX memoryvector_owner_space",
        ),
        migrations.RunSQL(LEXICAL_INDEX, "DROP INDEX memory_lexical_gin"),
    ]

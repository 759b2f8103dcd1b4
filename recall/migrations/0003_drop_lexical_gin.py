"""Drop the expression GIN index from 0002: under forced RLS the runtime role can never
use it (``@@`` is not leakproof), so it only cost write time. Recall reads the stored
``recall_document`` column added by memory 0003 instead."""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("recall", "0002_rls_and_search_indexes"), ("memory", "0003_search_columns")]
    operations = [
        migrations.RunSQL(
            "DROP INDEX IF EXISTS memory_lexical_gin",
            "CREATE INDEX memory_lexical_gin ON memory_memory USING gin "
            "(to_tsvector('english'::regconfig, subject || ' ' || statement))",
        ),
    ]

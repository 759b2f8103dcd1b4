"""Stored search columns on the originals, computed once per content change.

Forced row-level security keeps the runtime role off expression GIN indexes (the
full-text ``@@`` operator is not leakproof), so a per-query ``to_tsvector`` would run on
every row. Readers that rank by terms (recall, reconsolidation grouping) use these.
"""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory", "0002_row_level_security")]
    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_memory ADD COLUMN recall_document tsvector GENERATED ALWAYS AS "
            "(to_tsvector('english'::regconfig, subject || ' ' || statement)) STORED",
            "ALTER TABLE memory_memory DROP COLUMN recall_document",
        ),
        migrations.RunSQL(
            "ALTER TABLE memory_memory ADD COLUMN recall_subject_key text GENERATED ALWAYS AS "
            "(btrim(regexp_replace(lower(subject), '[^[:alnum:]]+', ' ', 'g'))) STORED",
            "ALTER TABLE memory_memory DROP COLUMN recall_subject_key",
        ),
    ]

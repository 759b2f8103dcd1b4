"""``recall_recalltrace.excerpt_sha256``: the SHA-256 of each source excerpt a recall rendered
(``recall.excerpts``, off by default), never the text. Content-free; existing traces get an
empty list (no excerpt existed). Additive.

Downgrade refuses while any trace has recorded an excerpt digest: dropping the column would
destroy that part of the history.
"""
from django.contrib.postgres.fields import ArrayField
from django.db import migrations, models

from veetbot.migration_sql import count_rows


def refuse_while_recorded(apps, schema_editor):
    rows = count_rows(schema_editor, "recall_recalltrace", "cardinality(excerpt_sha256) > 0")
    if rows:
        raise RuntimeError(
            f"Refusing to drop recall_recalltrace.excerpt_sha256: {rows} trace(s) recorded rendered source excerpts."
        )


class Migration(migrations.Migration):
    dependencies = [("recall", "0010_context_snapshots")]

    operations = [
        # On reverse this runs last-to-first: the refusal runs before the column goes.
        migrations.AddField(model_name="recalltrace", name="excerpt_sha256",
                            field=ArrayField(models.CharField(max_length=64), default=list, db_default=[])),
        migrations.RunPython(migrations.RunPython.noop, refuse_while_recorded),
    ]

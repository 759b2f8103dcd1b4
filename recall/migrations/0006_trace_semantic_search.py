"""``recall_recalltrace.semantic_search``: how the semantic arm searched (exact, hnsw, or
hnsw_short_exact — HNSW came back short of the arm limit and the arm searched exactly).
Content-free; existing traces get "" (not recorded). Additive.

Downgrade refuses while any trace has recorded a value: dropping the column would destroy
that part of the history.
"""
from django.db import migrations, models

from veetbot.migration_sql import count_rows


def refuse_while_recorded(apps, schema_editor):
    rows = count_rows(schema_editor, "recall_recalltrace", "semantic_search <> ''")
    if rows:
        raise RuntimeError(
            f"Refusing to drop recall_recalltrace.semantic_search: {rows} trace(s) recorded how their semantic "
            "arm searched."
        )


class Migration(migrations.Migration):
    dependencies = [("recall", "0005_policy_tags_and_unbounded_names")]

    operations = [
        # On reverse this runs last-to-first: the refusal runs before the column goes.
        migrations.AddField(model_name="recalltrace", name="semantic_search",
                            field=models.CharField(blank=True, default="", db_default="", max_length=20)),
        migrations.RunPython(migrations.RunPython.noop, refuse_while_recorded),
    ]

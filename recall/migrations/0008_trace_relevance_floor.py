"""``recall_recalltrace.floor_min_similarity`` / ``floor_withheld``: the relevance floor in
force for a recall (``recall.floor``; null when none applied) and how many ranked
originals it withheld from rendering. Content-free; existing traces get null / 0 (no
floor existed). Additive.

Downgrade refuses while any trace has recorded a floor: dropping the columns would destroy
that part of the history.
"""
from django.db import migrations, models

from veetbot.migration_sql import count_rows


def refuse_while_recorded(apps, schema_editor):
    rows = count_rows(schema_editor, "recall_recalltrace", "floor_min_similarity IS NOT NULL")
    if rows:
        raise RuntimeError(
            f"Refusing to drop recall_recalltrace.floor_min_similarity / floor_withheld: {rows} trace(s) "
            "recorded the relevance floor in force."
        )


class Migration(migrations.Migration):
    dependencies = [("recall", "0007_encoder_spend")]

    operations = [
        # On reverse this runs last-to-first: the refusal runs before the columns go.
        migrations.AddField(model_name="recalltrace", name="floor_min_similarity",
                            field=models.FloatField(null=True)),
        migrations.AddField(model_name="recalltrace", name="floor_withheld",
                            field=models.PositiveIntegerField(default=0, db_default=0)),
        migrations.RunPython(migrations.RunPython.noop, refuse_while_recorded),
    ]

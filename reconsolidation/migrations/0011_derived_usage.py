"""``reconsolidation_derivedmemory.utility`` / ``last_used_at``: a derived projection's usage,
raised only by faithful, unambiguous citations (``recall.snapshots``); never content, never
its operation's revision or its supports' evidence. Existing projections start at 0.5.

Downgrade refuses while any projection has been cited: dropping the columns would forget it.
"""

from django.db import migrations, models

from veetbot.migration_sql import count_rows


def refuse_while_cited(apps, schema_editor):
    rows = count_rows(schema_editor, "reconsolidation_derivedmemory", "last_used_at IS NOT NULL")
    if rows:
        raise RuntimeError(f"Refusing to drop derived usage: {rows} projection(s) were cited.")


class Migration(migrations.Migration):

    dependencies = [
        ('reconsolidation', '0010_update_proposals'),
    ]

    operations = [
        migrations.AddField(
            model_name='derivedmemory',
            name='last_used_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='derivedmemory',
            name='utility',
            field=models.FloatField(db_default=0.5, default=0.5),
        ),
        migrations.AddConstraint(
            model_name='derivedmemory',
            constraint=models.CheckConstraint(condition=models.Q(('utility__gte', 0), ('utility__lte', 1)), name='reconderived_utility_range'),
        ),
        migrations.RunPython(migrations.RunPython.noop, refuse_while_cited),
    ]

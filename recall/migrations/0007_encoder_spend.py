"""``recall_encoderspendday``: a remote encoder's daily spend per owner (reserved before a
request, settled after), under forced RLS like every owner table. Additive; a downgrade
refuses while any spend is recorded, since dropping it would forget what was paid."""
import uuid

from django.db import migrations, models

from veetbot.migration_sql import count_rows, owner_rls


def refuse_while_recorded(apps, schema_editor):
    rows = count_rows(schema_editor, "recall_encoderspendday")
    if rows:
        raise RuntimeError(f"Refusing to drop recall_encoderspendday: {rows} day(s) of remote encoder spend recorded.")


class Migration(migrations.Migration):
    dependencies = [("recall", "0006_trace_semantic_search")]

    operations = [
        migrations.CreateModel(
            name="EncoderSpendDay",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("tenant_id", models.UUIDField()),
                ("principal_id", models.UUIDField()),
                ("day", models.DateField()),
                ("spent_usd", models.DecimalField(decimal_places=8, default=0, max_digits=14)),
                ("requests", models.PositiveIntegerField(default=0)),
                ("updated_at", models.DateTimeField()),
            ],
            options={"constraints": [
                models.UniqueConstraint(fields=("tenant_id", "principal_id", "day"), name="encoderspend_owner_day"),
                models.CheckConstraint(condition=models.Q(spent_usd__gte=0), name="encoderspend_not_negative"),
            ]},
        ),
        owner_rls("recall_encoderspendday"),
        migrations.RunPython(migrations.RunPython.noop, refuse_while_recorded),
    ]

"""Additive: ``reconsolidation_dreamingpause`` (the owner's durable pause of dreaming, forced
RLS) and a partial index on the audit's ``operation_committed`` events — the mark of an
operation committed without owner review (unattended mode), which recall hides while the
unattended evidence does not verify (``reconsolidation.read_paths``).

Downgrade refuses while derived history exists or processing is on (0002's refusal).
"""
import importlib
import uuid

from django.db import migrations, models

from veetbot.migration_sql import owner_rls

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")
AUTO_COMMIT_INDEX = (
    "CREATE INDEX reconaudit_auto_committed ON reconsolidation_reconsolidationaudit (operation_id)"
    " WHERE event = 'operation_committed'"
)


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0007_group_claimed_slice")]

    operations = [
        migrations.CreateModel(
            name="DreamingPause",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("tenant_id", models.UUIDField()),
                ("principal_id", models.UUIDField()),
                ("paused", models.BooleanField(default=False)),
                ("changed_at", models.DateTimeField()),
                ("revision", models.PositiveIntegerField(default=1)),
            ],
            options={"constraints": [models.UniqueConstraint(fields=("tenant_id", "principal_id"),
                                                             name="dreamingpause_one_per_owner")]},
        ),
        owner_rls("reconsolidation_dreamingpause", staff_readable=True),
        migrations.RunSQL(AUTO_COMMIT_INDEX, "DROP INDEX reconaudit_auto_committed"),
        migrations.RunPython(migrations.RunPython.noop, _0002._refuse_losing_history),
    ]

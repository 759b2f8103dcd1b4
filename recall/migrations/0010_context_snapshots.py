"""Conversation snapshots (``recall.snapshots``): the frozen prefix of a conversation, its
content-free turns and the assistant's citation reports.

Forced row-level security on all three (no staff policy: the snapshot holds the rendered
prefix, and turns/reports are only ever read by their owner); owner-bound keys so a turn or
a report can never point at another owner's snapshot, and a snapshot never at another
owner's session; a GIN index over ``frozen_ids`` for the erasure fence's ``&&`` lookup.

Downgrade refuses while any snapshot exists: dropping the tables would forget what a
conversation was told (and which citations were credited).
"""

import django.contrib.postgres.fields
import django.db.models.deletion
import uuid
from django.db import migrations, models

from veetbot.migration_sql import count_rows, owner_foreign_key, owner_key, owner_rls

TABLES = ("recall_contextsnapshot", "recall_contextturn", "recall_citationreport")


def refuse_while_recorded(apps, schema_editor):
    rows = count_rows(schema_editor, "recall_contextsnapshot")
    if rows:
        raise RuntimeError(f"Refusing to drop conversation snapshots: {rows} snapshot(s) recorded.")


class Migration(migrations.Migration):

    dependencies = [
        ('recall', '0009_encoder_spend_into_the_ledger'),
        ('memory', '0007_owner_model_name'),
    ]

    operations = [
        migrations.CreateModel(
            name='ContextSnapshot',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('tenant_id', models.UUIDField()),
                ('principal_id', models.UUIDField()),
                ('session_id', models.UUIDField()),
                ('created_at', models.DateTimeField()),
                ('prefix', models.TextField(blank=True)),
                ('prefix_sha256', models.CharField(max_length=64)),
                ('prefix_tokens', models.PositiveIntegerField()),
                ('withheld_at', models.DateTimeField(blank=True, null=True)),
                ('items', models.JSONField(default=list)),
                ('frozen_ids', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), default=list, size=None)),
                ('ceiling', models.CharField(max_length=12)),
                ('scope', models.CharField(max_length=150)),
                ('selection_mode', models.CharField(max_length=20)),
                ('belief_types', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=20), default=list, size=None)),
                ('turns', models.PositiveIntegerField(default=0)),
                ('trace_ids', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), default=list, size=None)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('tenant_id', 'principal_id', 'session_id'), name='contextsnapshot_one_per_session')],
            },
        ),
        migrations.CreateModel(
            name='ContextTurn',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('tenant_id', models.UUIDField()),
                ('principal_id', models.UUIDField()),
                ('turn', models.PositiveIntegerField()),
                ('created_at', models.DateTimeField()),
                ('items', models.JSONField(default=list)),
                ('corrections', models.JSONField(default=list)),
                ('context_sha256', models.CharField(max_length=64)),
                ('trace_ids', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), default=list, size=None)),
                ('snapshot', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='recall.contextsnapshot')),
            ],
        ),
        migrations.CreateModel(
            name='CitationReport',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('tenant_id', models.UUIDField()),
                ('principal_id', models.UUIDField()),
                ('created_at', models.DateTimeField()),
                ('outcomes', models.JSONField(default=list)),
                ('turn', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='recall.contextturn')),
            ],
        ),
        migrations.AddConstraint(
            model_name='contextturn',
            constraint=models.UniqueConstraint(fields=('snapshot', 'turn'), name='contextturn_unique'),
        ),
        *[owner_rls(table) for table in TABLES],
        owner_key("recall_contextsnapshot"),
        owner_key("recall_contextturn"),
        owner_foreign_key("recall_contextsnapshot", "session_id", "memory_session"),
        owner_foreign_key("recall_contextturn", "snapshot_id", "recall_contextsnapshot"),
        owner_foreign_key("recall_citationreport", "turn_id", "recall_contextturn"),
        migrations.RunSQL(
            "CREATE INDEX contextsnapshot_frozen_ids ON recall_contextsnapshot USING gin (frozen_ids)",
            "DROP INDEX contextsnapshot_frozen_ids",
        ),
        # On reverse this runs first: the refusal before anything goes.
        migrations.RunPython(migrations.RunPython.noop, refuse_while_recorded),
    ]

"""``memory_spendday``: the owner's daily spend ledger, one row per owner, purpose (``encoder``,
``dreaming``) and UTC day, under forced RLS; content free (amounts and counts), so staff may
read it. The encoder's and dreaming's former day tables move into it (recall 0009,
reconsolidation 0009)."""
import uuid

from django.db import migrations, models

from veetbot.migration_sql import owner_rls


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0005_import_statistics'),
    ]

    operations = [
        migrations.CreateModel(
            name='SpendDay',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('tenant_id', models.UUIDField()),
                ('principal_id', models.UUIDField()),
                ('purpose', models.CharField(choices=[('encoder', 'encoder'), ('dreaming', 'dreaming')], max_length=16)),
                ('day', models.DateField()),
                ('charged_usd', models.DecimalField(decimal_places=8, default=0, max_digits=14)),
                ('reservations', models.PositiveIntegerField(default=0)),
                ('updated_at', models.DateTimeField()),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('tenant_id', 'principal_id', 'purpose', 'day'), name='spendday_owner_day'), models.CheckConstraint(condition=models.Q(('charged_usd__gte', 0)), name='spendday_not_negative'), models.CheckConstraint(condition=models.Q(('purpose__in', ('encoder', 'dreaming'))), name='spendday_purpose_valid')],
            },
        ),
        owner_rls("memory_spendday", staff_readable=True),
    ]

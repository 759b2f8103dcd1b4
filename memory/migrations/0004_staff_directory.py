"""Content-free staff views of owners and their tokens.

Staff must see which owners exist and the metadata of their credentials (scopes, created,
revoked, last used) without the owner's display name, a token's label or its hash. Row-level
security cannot hide columns, so the two base tables stay without a staff policy and staff
read these views instead: they select only content-free columns and return rows only inside
the staff context (``app.staff = 'on'``), so an owner context sees nothing here either.

A view reads its base tables with its owner's (the migrating role's) rights. An embedded or
superuser owner bypasses RLS; for a non-superuser schema owner (``DATABASE_URL``), forced RLS
applies to it too, so a read-only policy scoped to that role alone (``TO CURRENT_USER``) lets
the views see the rows — the runtime role still has no such policy on the base tables.
"""
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import migrations, models

from veetbot.migration_sql import STAFF_PREDICATE

ROLE = settings.VEETBOT_RUNTIME_ROLE


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_search_columns")]
    operations = [
        migrations.RunSQL(
            [
                f"CREATE POLICY staff_directory ON memory_principal FOR SELECT TO CURRENT_USER USING ({STAFF_PREDICATE})",
                f"CREATE POLICY staff_directory ON memory_ownertoken FOR SELECT TO CURRENT_USER USING ({STAFF_PREDICATE})",
                "CREATE VIEW memory_staffownerdirectory WITH (security_barrier) AS"
                " SELECT id, tenant_id, principal_id, created_at FROM memory_principal"
                f" WHERE {STAFF_PREDICATE}",
                "CREATE VIEW memory_stafftokendirectory WITH (security_barrier) AS"
                " SELECT id, tenant_id, principal_id, scopes, created_at, revoked_at, last_used_at"
                f" FROM memory_ownertoken WHERE {STAFF_PREDICATE}",
                f'GRANT SELECT ON memory_staffownerdirectory, memory_stafftokendirectory TO "{ROLE}"',
            ],
            [
                "DROP VIEW memory_stafftokendirectory",
                "DROP VIEW memory_staffownerdirectory",
                "DROP POLICY staff_directory ON memory_ownertoken",
                "DROP POLICY staff_directory ON memory_principal",
            ],
        ),
        migrations.CreateModel(
            name="StaffOwnerDirectory",
            fields=[
                ("id", models.UUIDField(primary_key=True, serialize=False)),
                ("tenant_id", models.UUIDField()),
                ("principal_id", models.UUIDField()),
                ("created_at", models.DateTimeField()),
            ],
            options={"managed": False, "db_table": "memory_staffownerdirectory"},
        ),
        migrations.CreateModel(
            name="StaffTokenDirectory",
            fields=[
                ("id", models.UUIDField(primary_key=True, serialize=False)),
                ("tenant_id", models.UUIDField()),
                ("principal_id", models.UUIDField()),
                ("scopes", ArrayField(models.CharField(max_length=32))),
                ("created_at", models.DateTimeField()),
                ("revoked_at", models.DateTimeField(null=True)),
                ("last_used_at", models.DateTimeField(null=True)),
            ],
            options={"managed": False, "db_table": "memory_stafftokendirectory"},
        ),
    ]

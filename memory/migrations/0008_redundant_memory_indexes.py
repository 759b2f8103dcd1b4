"""Drop the two foreign-key indexes a unique constraint already serves.

``memory_memorysource.memory_id`` and ``memory_memoryrevision.memory_id`` each had a B-tree of
their own beside ``memorysource_unique (memory_id, part_id)`` and ``memoryrevision_unique
(memory_id, revision)``, which lead with the same column and answer every lookup by it. The
extra indexes only cost each written row: a bank import writes one source and one revision
per memory. Django's schema editor treats the change of ``db_index`` on these
constraint-less foreign keys as a no-op, so the indexes are dropped here by name.
"""
from django.db import migrations, models
import django.db.models.deletion

INDEXES = (
    ("memory_memorysource_memory_id_c95a25e3", "memory_memorysource"),
    ("memory_memoryrevision_memory_id_175fe81c", "memory_memoryrevision"),
)


class Migration(migrations.Migration):
    dependencies = [("memory", "0007_owner_model_name")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(f"DROP INDEX {name}", f"CREATE INDEX {name} ON {table} (memory_id)")
                for name, table in INDEXES
            ],
            state_operations=[
                migrations.AlterField(
                    model_name=model, name="memory",
                    field=models.ForeignKey(db_constraint=False, db_index=False,
                                            on_delete=django.db.models.deletion.DO_NOTHING,
                                            related_name=related, to="memory.memory"),
                )
                for model, related in (("memoryrevision", "revisions"), ("memorysource", "sources"))
            ],
        ),
    ]

"""Additive: the clause structure of a proposed summary, as source-ID lists (no prose).

A reviewed-mode summary is recorded ``proposed`` with no projection; approval rebuilds its
clauses from the sources at their exact revisions using this structure. The table keeps
its forced RLS and staff read policy (IDs only). The downgrade applies the same refusal as
0002 first (processing on, live leases, retained derived history), so it can never drop
the clause structure of history that 0002 would then refuse to remove.
"""
import importlib

from django.db import migrations, models

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0002_row_level_security")]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, _0002._refuse_losing_history),
        migrations.AddField(
            model_name="reconsolidationoperation", name="clause_sources",
            field=models.JSONField(blank=True, default=list),
        ),
    ]

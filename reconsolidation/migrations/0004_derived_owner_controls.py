"""Additive: the owner controls of a derived memory (reconsolidation.derived).

``reviewed_at`` / ``dismissed_at`` are review flags (mark reviewed, dismiss),
``restricted_at`` is the "not here" local-scope restriction overlaid on the immutable
projection, ``retired_at`` marks "not true". Instants only, no prose; the table keeps its
forced RLS. The downgrade applies 0002's refusal first, like 0003.
"""
import importlib

from django.db import migrations, models

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")


def _instant(name: str) -> migrations.AddField:
    return migrations.AddField(model_name="derivedmemory", name=name,
                               field=models.DateTimeField(blank=True, null=True))


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0003_operation_clause_sources")]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, _0002._refuse_losing_history),
        _instant("reviewed_at"),
        _instant("dismissed_at"),
        _instant("restricted_at"),
        _instant("retired_at"),
    ]

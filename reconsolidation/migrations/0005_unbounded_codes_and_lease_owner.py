"""Additive: reason codes, audit event names and the lease owner label become unbounded
``varchar``.

They are composed, not chosen from one list: ``f"group_{outcome}"``, ``f"derived_{reason}"``,
provider and admission failure reasons, an invalidation's change kind, and
``celery@<host>:<pid>`` / ``dream@<host>`` for the worker holding a lease. Their old
bounds (40; 200 for the lease owner) were kept by cutting the value (``reason[:40]``,
``...[:200]``), which can turn one code into another or drop the pid that tells two
workers apart. Widening a varchar rewrites nothing, keeps every index and leaves the
columns content-free (``varchar``, not ``text``: the staff admin refuses text columns).

Downgrade refuses, before changing anything, while derived history exists or processing
is on (0002's refusal, like 0003 and 0004), and while a recorded value is longer than its
old bound (recall migration 0005's ``refuse_narrowing``).
"""
import importlib

from django.db import migrations, models

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")
_recall_0005 = importlib.import_module("recall.migrations.0005_policy_tags_and_unbounded_names")

# (model, field, blank, the old bound)
WIDENED = [
    ("reconsolidationjob", "lease_owner", True, 200),
    ("reconsolidationgroup", "reason", True, 40),
    ("reconsolidationanchorreceipt", "reason", True, 40),
    ("reconsolidationoperation", "reason", True, 40),
    ("reconsolidationaudit", "event", False, 40),
    ("reconsolidationaudit", "reason", True, 40),
]


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0004_derived_owner_controls")]

    operations = [
        *[migrations.AlterField(model_name=model, name=name, field=models.CharField(blank=blank))
          for model, name, blank, _ in WIDENED],
        # Last, so that on reverse they run first and refuse before anything changes.
        _recall_0005.refuse_narrowing([(f"reconsolidation_{model}", name, bound) for model, name, _, bound in WIDENED]),
        migrations.RunPython(migrations.RunPython.noop, _0002._refuse_losing_history),
    ]

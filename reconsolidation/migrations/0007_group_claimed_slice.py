"""Additive: ``ReconsolidationGroup.claimed_slice_token``, the slice that last claimed a group.

A deferred or failed group returns to ``pending`` with its old age; without this column the
same slice claimed it again at once, so one provider outage spent every allowed attempt in
one slice and one group that could not be admitted took every claim. The claim now skips
groups whose ``claimed_slice_token`` is the claiming slice's lease token (content-free:
an opaque UUID, nullable, no backfill: a group never claimed has none).

Downgrade refuses while derived history exists or processing is on (0002's refusal, like
0003-0005), then drops only this column.

Dependency: this migration follows the latest reconsolidation migration before it. While
0006 (the equivalence pass and model lane) was written beside it and not yet committed, the
dependency is resolved from the files present — 0006 when it is there, else 0005 — so a
tree with or without 0006 has one leaf. Once 0006 is committed, pin it here.
"""
import importlib
from pathlib import Path

from django.db import migrations, models

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")


def _previous() -> str:
    here = Path(__file__).resolve().parent
    found = sorted(path.stem for path in here.glob("0006_*.py"))
    return found[0] if found else "0005_unbounded_codes_and_lease_owner"


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", _previous())]

    operations = [
        migrations.AddField(
            model_name="reconsolidationgroup", name="claimed_slice_token",
            field=models.UUIDField(null=True, blank=True),
        ),
        # Last, so that on reverse it runs first and refuses before anything changes.
        migrations.RunPython(migrations.RunPython.noop, _0002._refuse_losing_history),
    ]

"""Additive: ``ReconsolidationGroup.claimed_slice_token``, the slice that last claimed a group.

A deferred or failed group returns to ``pending`` with its old age; without this column the
same slice claimed it again at once, so one provider outage spent every allowed attempt in
one slice and one group that could not be admitted took every claim. The claim now skips
groups whose ``claimed_slice_token`` is the claiming slice's lease token (content-free:
an opaque UUID, nullable, no backfill: a group never claimed has none).

Downgrade refuses while derived history exists or processing is on (0002's refusal, like
0003-0006), then drops only this column.
"""
import importlib

from django.db import migrations, models

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0006_equivalence_digest_and_model_lane")]

    operations = [
        migrations.AddField(
            model_name="reconsolidationgroup", name="claimed_slice_token",
            field=models.UUIDField(null=True, blank=True),
        ),
        # Last, so that on reverse it runs first and refuses before anything changes.
        migrations.RunPython(migrations.RunPython.noop, _0002._refuse_losing_history),
    ]

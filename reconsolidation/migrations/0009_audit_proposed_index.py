"""Additive: a partial index on the audit's ``operation_proposed`` events by operation.

``writers.apply.needs_owner`` asks, for a similarity-only (paraphrase) merge, whether the
operation was ever recorded as a proposal — what tells an owner's approval from the
unattended recording itself — in one probe instead of a scan of the owner's audit.

Downgrade drops the index only; no data is touched.
"""
from django.db import migrations

PROPOSED_INDEX = (
    "CREATE INDEX reconaudit_operation_proposed ON reconsolidation_reconsolidationaudit (operation_id)"
    " WHERE event = 'operation_proposed'"
)


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0008_dreaming_pause_and_auto_commit_index")]

    operations = [migrations.RunSQL(PROPOSED_INDEX, "DROP INDEX reconaudit_operation_proposed")]

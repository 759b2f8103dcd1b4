"""Dreaming's daily spend totals move into the owner's spend ledger (``memory_spendday``,
purpose ``dreaming``) and ``reconsolidation_reconsolidationspendday`` goes; each reservation's
own row stays in ``reconsolidation_reconsolidationspend``. A downgrade refuses while dreaming
spend is recorded there."""
from django.db import migrations

from veetbot.migration_sql import spend_days_into_the_ledger


class Migration(migrations.Migration):
    dependencies = [("reconsolidation", "0008_dreaming_pause_and_auto_commit_index"), ("memory", "0006_spend_ledger")]

    operations = [
        *spend_days_into_the_ledger("reconsolidation_reconsolidationspendday", "dreaming", charged="charged_usd",
                                    count="reservations", staff_readable=True),
        migrations.DeleteModel(name="ReconsolidationSpendDay"),
    ]

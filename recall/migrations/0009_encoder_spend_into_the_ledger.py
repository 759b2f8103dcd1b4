"""A remote encoder's daily spend moves into the owner's spend ledger (``memory_spendday``,
purpose ``encoder``) and ``recall_encoderspendday`` goes. A downgrade refuses while encoder
spend is recorded there, since dropping it would forget what was paid."""
from django.db import migrations

from veetbot.migration_sql import spend_days_into_the_ledger


class Migration(migrations.Migration):
    dependencies = [("recall", "0008_trace_relevance_floor"), ("memory", "0006_spend_ledger")]

    operations = [
        *spend_days_into_the_ledger("recall_encoderspendday", "encoder", charged="spent_usd", count="requests"),
        migrations.DeleteModel(name="EncoderSpendDay"),
    ]

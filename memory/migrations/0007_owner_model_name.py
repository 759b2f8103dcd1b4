"""The owner's row is named ``Owner`` in code (``veetbot.identity.Principal`` is the value that
names who acts); its table keeps its first name, so nothing changes in the database."""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_spend_ledger")]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RenameModel("Principal", "Owner"),
            migrations.AlterModelTable("Owner", "memory_principal"),
        ]),
    ]

"""Update proposals. An operation may name the committed operation it replaces once approved
(a summary update): ``supersedes``, an opaque ID, content free. And a fifth kind,
``end_superseded``: a proposal that a later statement about the same holder ended an earlier
belief (approving it ends that belief's validity through the memory's own control). Widens the
kind constraint; a downgrade narrows it again only while no such operation exists (the
constraint would refuse the rows)."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('reconsolidation', '0009_dreaming_spend_into_the_ledger'),
    ]

    operations = [
        migrations.AddField(
            model_name='reconsolidationoperation',
            name='supersedes',
            field=models.UUIDField(blank=True, null=True),
        ),
        migrations.RemoveConstraint(
            model_name='reconsolidationoperation',
            name='reconop_kind_valid',
        ),
        migrations.AlterField(
            model_name='reconsolidationoperation',
            name='kind',
            field=models.CharField(choices=[('merge_equivalent', 'merge_equivalent'), ('summarize_related', 'summarize_related'), ('infer_connection', 'infer_connection'), ('flag_conflict', 'flag_conflict'), ('end_superseded', 'end_superseded')], max_length=20),
        ),
        migrations.AddConstraint(
            model_name='reconsolidationoperation',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ('merge_equivalent', 'summarize_related', 'infer_connection', 'flag_conflict', 'end_superseded'))), name='reconop_kind_valid'),
        ),
    ]

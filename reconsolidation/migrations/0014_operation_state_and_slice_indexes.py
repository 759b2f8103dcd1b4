"""Operations by state and by slice, so a commit does not scan the owner's history.

Every commit counts the proposals waiting for the owner (``state = 'proposed'``), looks up
the live summaries (``kind``, ``state``) and counts its own slice's operations
(``slice_token``); with only the list-order index each was a scan of every operation the
owner ever had, so a slice grew slower as the owner approved more.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('reconsolidation', '0013_scoped_neighbour_probes'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='reconsolidationoperation',
            index=models.Index(fields=['tenant_id', 'principal_id', 'state', 'kind'], name='reconop_by_state'),
        ),
        migrations.AddIndex(
            model_name='reconsolidationoperation',
            index=models.Index(fields=['tenant_id', 'principal_id', 'slice_token'], name='reconop_by_slice'),
        ),
    ]

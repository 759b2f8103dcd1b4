"""``migrate`` runs as the schema-owning role unless told otherwise.

The default alias is the runtime role, which may not change the schema; this keeps the
ordinary ``manage.py migrate`` working while ORM traffic stays on the runtime role.
"""
from django.core.management.commands.migrate import Command as DjangoMigrate


class Command(DjangoMigrate):
    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.set_defaults(database="owner")

"""Create (or reuse) an owner and print a new bearer token, once."""
import json
import uuid

from django.core.management.base import BaseCommand, CommandError

from memory import services
from memory.errors import Invalid
from veetbot.identity import ALL_SCOPES


class Command(BaseCommand):
    help = "Create (or reuse) an owner and issue a new owner token. The token is shown once."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", type=uuid.UUID, help="tenant UUID (default: a new one)")
        parser.add_argument("--principal", type=uuid.UUID, help="principal UUID (default: a new one)")
        parser.add_argument("--name", default="", help="display name of the owner")
        parser.add_argument("--scopes", default=",".join(ALL_SCOPES),
                            help="comma-separated token scopes (default: memory.read,memory.write)")
        parser.add_argument("--json", action="store_true", help='print {"tenant_id", "principal_id", "token"}')

    def handle(self, *args, **options):
        try:
            created = services.owner_create(
                tenant_id=options["tenant"], principal_id=options["principal"], display_name=options["name"],
                scopes=[s.strip() for s in options["scopes"].split(",") if s.strip()],
            )
        except Invalid as error:
            raise CommandError(str(error))
        if options["json"]:
            self.stdout.write(json.dumps({
                "tenant_id": str(created.tenant_id), "principal_id": str(created.principal_id), "token": created.token,
            }))
            return
        verb = "Created" if created.created_owner else "Reused"
        self.stdout.write(f"{verb} owner {created.tenant_id}/{created.principal_id}")
        self.stdout.write(f"Token (shown once, store it now): {created.token}")

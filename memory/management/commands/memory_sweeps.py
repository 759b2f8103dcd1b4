"""Run the expiry and decay sweeps now (Celery beat runs them when a broker is configured)."""
import json
from datetime import datetime

from django.core.management.base import BaseCommand, CommandError

from memory import services
from memory.management.commands._owner_option import parse_owner
from memory.services.sweeps import owners as all_owners
from veetbot.clock import require_aware, utcnow


class Command(BaseCommand):
    help = "Run the expiry sweep and/or the daily decay sweep for one owner or for every owner."

    def add_arguments(self, parser):
        parser.add_argument("sweep", choices=["expire", "decay", "all"], help="which sweep to run")
        parser.add_argument("--owner", help="TENANT_UUID/PRINCIPAL_UUID (default: every owner)")
        parser.add_argument("--now", help="ISO-8601 instant with a timezone to sweep as of (default: now)")
        parser.add_argument("--json", action="store_true", help='print {"expired", "decayed", "retired"}')

    def handle(self, *args, **options):
        try:
            now = require_aware(datetime.fromisoformat(options["now"])) if options["now"] else utcnow()
        except ValueError:
            raise CommandError("--now must be an ISO-8601 instant with a timezone")
        owners = [parse_owner(options["owner"])] if options["owner"] else all_owners()
        result = {"expired": 0, "decayed": 0, "retired": 0}
        for principal in owners:
            if options["sweep"] in ("expire", "all"):
                result["expired"] += services.memories_expire_due(principal=principal, now=now)
            if options["sweep"] in ("decay", "all"):
                decayed, retired = services.memories_decay_due(principal=principal, now=now)
                result["decayed"] += decayed
                result["retired"] += retired
        if options["json"]:
            self.stdout.write(json.dumps(result))
        else:
            self.stdout.write(f"{len(owners)} owner(s): {result['expired']} expired, "
                              f"{result['decayed']} decayed, {result['retired']} retired")

"""The quick start: embedded database, demo owner, demo bank, then the web server.

Idempotent: a second run reuses the database, owner and bank (the import is a no-op) and
issues a fresh token. It turns on AGENT_MEMORY_API_ENABLED and
AGENT_MEMORY_RECONSOLIDATION_API_ENABLED (the operation journal) for the server it starts, and
says so. After the import it turns on AGENT_MEMORY_RECONSOLIDATION_ENABLED in this process
(and says so) and runs one dreaming pass for the demo owner — slices until the scan
generation is complete and no group is pending — then prints what the pass did: slices,
groups and operations by kind/state (counts only, never content). A second run finds the
day's generation done and runs no slice.
"""
import json
import os
import time
import uuid
from io import StringIO
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from reconsolidation import passes
from veetbot.identity import Principal

DEMO_TENANT = uuid.UUID("00000000-0000-4000-8000-00000000d3e0")
DEMO_PRINCIPAL = uuid.UUID("00000000-0000-4000-8000-0000000000a1")
DEMO_BANK = Path(settings.BASE_DIR) / "evals" / "fixtures" / "demo-bank.json"
# Switched on for the server the quick start runs (production defaults are off).
SERVER_FLAGS = ("AGENT_MEMORY_API_ENABLED", "AGENT_MEMORY_RECONSOLIDATION_API_ENABLED",
                "AGENT_MEMORY_RECONSOLIDATION_ENABLED")


class Command(BaseCommand):
    help = "Set up the demo (migrate, demo owner, demo bank) and serve the API on 127.0.0.1."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000, help="port to serve on (default 8000)")
        parser.add_argument("--no-serve", action="store_true", help="set up, print the summary, do not serve")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args, **options):
        started = time.monotonic()
        call_command("migrate", verbosity=0, interactive=False)
        out = StringIO()
        call_command("create_owner", tenant=DEMO_TENANT, principal=DEMO_PRINCIPAL, name="Demo owner", json=True, stdout=out)
        owner = json.loads(out.getvalue())
        out = StringIO()
        call_command("import_memory_bank", str(DEMO_BANK), owner=f"{DEMO_TENANT}/{DEMO_PRINCIPAL}", json=True, stdout=out)
        imported = json.loads(out.getvalue())
        dreaming = self._dream(Principal(tenant_id=DEMO_TENANT, principal_id=DEMO_PRINCIPAL))
        url = f"http://127.0.0.1:{options['port']}/v1/memories?ceiling=restricted"
        review_url = f"http://127.0.0.1:{options['port']}/review/sign-in"
        summary = {
            "owner": f"{DEMO_TENANT}/{DEMO_PRINCIPAL}", "token": owner["token"], "url": url, "review_url": review_url,
            "imported": imported, "setup_seconds": round(time.monotonic() - started, 2),
            "dreaming": dreaming,
            "flags_enabled": list(SERVER_FLAGS),
        }
        if options["json"]:
            self.stdout.write(json.dumps(summary))
        else:
            self.stdout.write(
                f"Demo owner {summary['owner']}: imported {imported['memories']} new memories "
                f"({summary['setup_seconds']} s).\n"
                "Turned on in this process: AGENT_MEMORY_RECONSOLIDATION_ENABLED=true — one dreaming pass: "
                f"{self._describe(dreaming)}\n"
                f"Turned on for this server: {' '.join(flag + '=true' for flag in SERVER_FLAGS)}\n"
                f"Token (shown once): {owner['token']}\n"
                f"Try: curl -H 'Authorization: Bearer {owner['token']}' '{url}'\n"
                f"Review dashboard: {review_url} (paste the token once)\n"
            )
        if options["no_serve"]:
            return
        for flag in SERVER_FLAGS:
            os.environ[flag] = "true"
            setattr(settings, flag, True)
        self.stdout.write(f"Serving on http://127.0.0.1:{options['port']}/ (Ctrl-C to stop)")
        call_command("runserver", f"127.0.0.1:{options['port']}", use_reloader=False)

    @staticmethod
    def _dream(principal: Principal) -> dict:
        """One dreaming pass for the demo owner, processing switched on in-process for it."""
        previous = settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED
        settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
        try:
            started = time.monotonic()
            runs, stopped = passes.run_until_idle(principal, lease_owner="quickstart")
            return {**passes.pass_summary(runs, stopped), "seconds": round(time.monotonic() - started, 2)}
        finally:
            settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = previous

    @staticmethod
    def _describe(dreaming: dict) -> str:
        if not dreaming["slices"]:
            return "nothing due (today's generation is already complete)"
        operations = ", ".join(f"{count} {label}" for label, count in dreaming["operations"].items()) or "no operations"
        return (f"{dreaming['slices']} slices, {dreaming['anchors_scanned']} anchors scanned, "
                f"{dreaming['groups_processed']} groups processed; {operations}")

"""The quick start: embedded database, demo owner, demo bank, then the web server.

Idempotent: a second run reuses the database, owner, bank and vectors (the import and the
backfill are no-ops) and issues a fresh token. It turns on every flag the product needs
(``SERVER_FLAGS``: the API, the operation journal API, reconsolidation processing,
semantic recall and the MCP endpoint) for the server it starts, and says so. After the import it turns on
AGENT_MEMORY_RECONSOLIDATION_ENABLED in this process (and says so) and runs one dreaming
pass for the demo owner — slices until the scan generation is complete and no group is
pending — then prints what the pass did: slices, groups and operations by kind/state
(counts only, never content). A second run finds the day's generation done and runs no
slice.

Then it embeds the demo bank for semantic recall (``backfill_vectors`` with the configured
encoder, a progress bar on stderr when stderr is a terminal) and runs one sample search
(``recall``, surface "cli") with every server flag on, as the server will, printing the
rendered lines with their ``[m:<id>]`` citations and the channel. A search that fell back
(no vectors, no encoder) is printed with a note saying so, never hidden; an encoder that
fails stops neither the quick start nor the server. The encoder loads once per process:
the backfill, the sample search and the served API share it.
"""
import json
import os
import time
import uuid
from contextlib import contextmanager
from io import StringIO
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from memory import selectors
from reconsolidation import driver
from veetbot.identity import Principal
from veetbot.rls import owner_context

DEMO_TENANT = uuid.UUID("00000000-0000-4000-8000-00000000d3e0")
DEMO_PRINCIPAL = uuid.UUID("00000000-0000-4000-8000-0000000000a1")
DEMO_BANK = Path(settings.BASE_DIR) / "evals" / "fixtures" / "demo-bank.json"
# Switched on for the server the quick start runs (production defaults are off).
SERVER_FLAGS = ("AGENT_MEMORY_API_ENABLED", "AGENT_MEMORY_RECONSOLIDATION_API_ENABLED",
                "AGENT_MEMORY_RECONSOLIDATION_ENABLED", "AGENT_MEMORY_SEMANTIC_ENABLED", "AGENT_MEMORY_MCP_ENABLED")
# A task the demo bank answers by meaning more than by words. Hybrid recall brings the
# owner's diet (pescatarian, eats fish, no meat), cooking habits and the dinner-party plan;
# keyword recall alone finds one diet memory among Rosa's party, flights and cat cafes.
SAMPLE_QUERY = "Which dietary restrictions matter for the dinner party?"
SAMPLE_CEILING = "internal"
SAMPLE_MAX_ITEMS = 8


@contextmanager
def switched_on(*flags: str):
    """The named flags on in this process's settings for the block, then as they were."""
    previous = {flag: getattr(settings, flag) for flag in flags}
    for flag in flags:
        setattr(settings, flag, True)
    try:
        yield
    finally:
        for flag, value in previous.items():
            setattr(settings, flag, value)


class Command(BaseCommand):
    help = "Set up the demo (migrate, demo owner, demo bank) and serve the API on 127.0.0.1."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000, help="port to serve on (default 8000)")
        parser.add_argument("--no-serve", action="store_true", help="set up, print the summary, do not serve")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args, **options):
        started = time.monotonic()
        owner_label = f"{DEMO_TENANT}/{DEMO_PRINCIPAL}"
        call_command("migrate", verbosity=0, interactive=False)
        out = StringIO()
        call_command("create_owner", tenant=DEMO_TENANT, principal=DEMO_PRINCIPAL, name="Demo owner", json=True, stdout=out)
        owner = json.loads(out.getvalue())
        principal = Principal(tenant_id=DEMO_TENANT, principal_id=DEMO_PRINCIPAL)
        with owner_context(principal):
            started_before = selectors.memory_bank_started()
        if started_before:
            # The bank is the owner's now: what they erased or changed stays so (an import
            # would refuse to bring an erased belief back).
            imported = {"memories": 0, "events": 0, "sessions": 0, "people": 0, "seconds": 0.0, "reused": True}
        else:
            out = StringIO()
            call_command("import_memory_bank", str(DEMO_BANK), owner=owner_label, json=True, stdout=out,
                         stderr=self.stderr._out)
            imported = {**json.loads(out.getvalue()), "reused": False}
        dreaming = self._dream(principal)
        vectors = self._backfill(owner_label)
        with switched_on(*SERVER_FLAGS):  # the sample search sees what the server will
            sample = self._sample_search(owner_label)
        url = f"http://127.0.0.1:{options['port']}/v1/memories?ceiling=restricted"
        review_url = f"http://127.0.0.1:{options['port']}/review/sign-in"
        summary = {
            "owner": owner_label, "token": owner["token"], "url": url, "review_url": review_url,
            "imported": imported, "setup_seconds": round(time.monotonic() - started, 2),
            "dreaming": dreaming,
            "vectors": vectors,
            "sample_search": {key: sample[key] for key in ("query", "channel", "requested_channel", "fallback_reason")}
            | {"item_ids": [item["id"] for item in sample["items"]]},
            "flags_enabled": list(SERVER_FLAGS),
        }
        if options["json"]:
            self.stdout.write(json.dumps(summary))
        else:
            bank = ("its bank is reused as it stands (not imported again)" if imported["reused"] else
                    f"imported {imported['memories']} new memories ({imported['seconds']:.1f} s)")
            self.stdout.write(
                f"Demo owner {summary['owner']}: {bank}.\n"
                "Turned on in this process: AGENT_MEMORY_RECONSOLIDATION_ENABLED=true — one dreaming pass: "
                f"{self._describe(dreaming)}\n"
                f"Vectors for semantic recall (encoder {settings.RECALL_ENCODER}): {self._describe_vectors(vectors)}\n"
                f"{self._describe_search(sample)}"
                f"Set up in {summary['setup_seconds']} s.\n"
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

    def _backfill(self, owner_label: str) -> dict:
        """Vectors for every embeddable demo memory (none on a second run); an encoder
        failure is reported in ``stopped``, not raised: recall then falls back to keywords."""
        out = StringIO()
        try:
            call_command("backfill_vectors", owner=owner_label, json=True, stdout=out, stderr=self.stderr._out)
        except CommandError as error:
            report = json.loads(out.getvalue()) if out.getvalue() else {"embedded": 0}
            return {**report, "stopped": str(error)}
        return {**json.loads(out.getvalue()), "stopped": ""}

    @staticmethod
    def _sample_search(owner_label: str) -> dict:
        out = StringIO()
        call_command("recall", SAMPLE_QUERY, owner=owner_label, ceiling=SAMPLE_CEILING, max_items=SAMPLE_MAX_ITEMS,
                     json=True, stdout=out)
        return json.loads(out.getvalue())

    @staticmethod
    def _dream(principal: Principal) -> dict:
        """One dreaming pass for the demo owner, processing switched on in-process for it."""
        with switched_on("AGENT_MEMORY_RECONSOLIDATION_ENABLED"):
            started = time.monotonic()
            runs, stopped = driver.run_until_idle(principal, lease_owner="quickstart")
            return {**driver.pass_summary(runs, stopped), "seconds": round(time.monotonic() - started, 2)}

    @staticmethod
    def _describe(dreaming: dict) -> str:
        if not dreaming["slices"]:
            return "nothing due (today's generation is already complete)"
        operations = ", ".join(f"{count} {label}" for label, count in dreaming["operations"].items()) or "no operations"
        return (f"{dreaming['slices']} slices, {dreaming['anchors_scanned']} anchors scanned, "
                f"{dreaming['groups_processed']} groups processed; {operations}")

    @staticmethod
    def _describe_vectors(vectors: dict) -> str:
        if vectors["stopped"]:
            return f"embedded {vectors['embedded']}, then stopped ({vectors['stopped']})"
        if not vectors["embedded"]:
            return "nothing to embed (every memory already has its vector)"
        return f"embedded {vectors['embedded']} memories in {vectors['seconds']:.1f} s, {vectors['remaining']} remaining"

    @staticmethod
    def _describe_search(sample: dict) -> str:
        """The sample search's citation lines and channel; a fallback gets a note of its own."""
        lines = [line for line in sample["rendered"].splitlines() if line.startswith("[m:")]
        text = (f"Sample search (every server flag on, ceiling {SAMPLE_CEILING}): \"{sample['query']}\"\n"
                + "".join(f"  {line}\n" for line in lines or ["(nothing recalled)"])
                + f"  -- {len(sample['items'])} items, channel {sample['channel']}\n")
        if sample["fallback_reason"]:
            text += (f"Note: the sample search fell back from {sample['requested_channel']} to {sample['channel']} "
                     f"({sample['fallback_reason']}): keyword matches only, no semantic recall.\n")
        return text

"""``import_memory_bank FILE --owner T/P [--update] [--json]``: a thin wrapper over
``memory.bank.memory_bank_import``.

Refusals print one ``path: problem`` line per problem on stderr (nothing else) and exit
with status 1; nothing is written. After an import that wrote rows the originals' tables
are analysed (``veetbot.statistics``). A progress bar goes to stderr only when stderr is a
terminal, so pipes and logs stay clean.
"""
import json
import sys

from django.core.management.base import BaseCommand, CommandError

from memory.bank import memory_bank_import
from memory.errors import Invalid
from memory.management.commands._owner_option import parse_owner
from veetbot import statistics
from veetbot.progress import ProgressBar


class Command(BaseCommand):
    help = ("Import a memory-bank@1 document into one owner's store, all or nothing. "
            "Re-importing the same file is a no-op.")

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE", help='the memory-bank@1 JSON document, or "-" to read standard input')
        parser.add_argument("--owner", required=True, metavar="TENANT_UUID/PRINCIPAL_UUID",
                            help="the owner to import into (need not exist yet: import creates its lock row)")
        parser.add_argument("--update", action="store_true",
                            help="revise stored memories (and rename people) whose content differs, through the "
                                 "normal revision path; without it such differences refuse the import")
        parser.add_argument("--json", action="store_true",
                            help='print {"memories", "events", "sessions", "people", "seconds"}: rows created or '
                                 "updated by this run")

    def handle(self, *args, **options):
        principal = parse_owner(options["owner"])
        data = self.read(options["file"])
        bar = ProgressBar(self.stderr._out) if self.stderr.isatty() else None
        try:
            counts = memory_bank_import(principal=principal, data=data, update=options["update"], progress=bar)
        except Invalid as error:
            if bar:
                bar.close()
            for line in error.problems:
                self.stderr.write(line)
            raise
        if bar:
            bar.close()
        if counts.memories or counts.events:
            statistics.analyze(statistics.ORIGINALS)  # the next recall is planned for the new rows
        if options["json"]:
            self.stdout.write(json.dumps(counts.model_dump()))
        else:
            self.stdout.write(
                f"Imported into {principal.label}: {counts.memories} memories, {counts.events} events, "
                f"{counts.sessions} sessions, {counts.people} people created or updated in {counts.seconds:.2f} s"
            )

    def read(self, path: str) -> bytes:
        if path == "-":
            return sys.stdin.buffer.read()
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}")

    def run_from_argv(self, argv):
        # The problems are already on stderr; exit 1 without Django's "CommandError:" line.
        try:
            super().run_from_argv(argv)
        except Invalid:
            sys.exit(1)

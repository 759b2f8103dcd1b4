"""``export_memory_bank --owner T/P [--output FILE]``: a thin wrapper over
``memory.bank.memory_bank_export``. The document goes to stdout unless ``--output`` names a
file, which is written beside itself and renamed into place only when complete."""
import os
import sys

from django.core.management.base import BaseCommand, CommandError

from memory.bank import memory_bank_export
from memory.management.commands._owner_option import parse_owner


class _Verbatim:
    """A text stream over the command's stdout that writes chunks as given (no added newline)."""

    def __init__(self, wrapper) -> None:
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        self.wrapper.write(text, ending="")


class Command(BaseCommand):
    help = ("Export one owner's memory bank as memory-bank@1 (erased rows and deleted memories are "
            "left out). Importing it into a fresh owner (of another database: IDs are unique across "
            "owners) reproduces the same export; re-importing it into this owner is a no-op.")

    def add_arguments(self, parser):
        parser.add_argument("--owner", required=True, metavar="TENANT_UUID/PRINCIPAL_UUID", help="the owner to export")
        parser.add_argument("--output", metavar="FILE",
                            help="write the document to FILE (default: standard output)")

    def handle(self, *args, **options):
        principal = parse_owner(options["owner"])
        path = options["output"]
        if not path or path == "-":
            try:
                memory_bank_export(principal=principal, out=_Verbatim(self.stdout))
            except BrokenPipeError:
                # The reader went away (e.g. `| head`): stop quietly, as other CLI tools do.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                sys.exit(1)
            return
        partial = f"{path}.partial"
        try:
            with open(partial, "w", encoding="utf-8") as handle:
                counts = memory_bank_export(principal=principal, out=handle)
            os.replace(partial, path)
        except OSError as error:
            raise CommandError(f"cannot write {path}: {error.strerror}")
        finally:
            if os.path.exists(partial):
                os.remove(partial)
        self.stdout.write(f"Exported {principal.label} to {path}: {counts.memories} memories, {counts.events} events, "
                          f"{counts.sessions} sessions, {counts.people} people")

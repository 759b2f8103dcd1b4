"""``backfill_vectors --owner T/P [--json] [--batch N] [--limit N]``: a thin wrapper over
``recall.backfill.backfill_vectors``.

It always uses the configured encoder (settings.RECALL_ENCODER), whether or not
AGENT_MEMORY_SEMANTIC_ENABLED is on: an operator fills the index *before* turning
semantic recall on, and running this command is that explicit decision. (The scheduled
Celery task, by contrast, does nothing while semantic recall is off.)

A progress bar goes to stderr only when stderr is a terminal. If the encoder fails, the
batches already written stay written (and, like a finished run that embedded anything, are
analysed for the planner: ``veetbot.statistics``), the reason (content-free) goes to stderr and the
exit status is 1; running the command again continues with the oldest originals left.
"""
import json

from django.core.management.base import BaseCommand, CommandError

from memory.management.commands._owner_option import parse_owner
from recall.backfill import backfill_vectors
from recall.encoders import EncoderUnavailable, load_encoder
from veetbot import statistics
from veetbot.progress import ProgressBar


def positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = ("Embed one owner's live active originals that lack a vector for their current revision, oldest "
            "first, with the configured encoder (RECALL_ENCODER), even while semantic recall is off.")

    def add_arguments(self, parser):
        parser.add_argument("--owner", required=True, metavar="TENANT_UUID/PRINCIPAL_UUID",
                            help="the owner to backfill")
        parser.add_argument("--batch", type=positive, metavar="N",
                            help="originals per read/encode/write batch (default: RECALL_BACKFILL_BATCH_ITEMS)")
        parser.add_argument("--limit", type=positive, metavar="N", help="embed at most N originals in this run")
        parser.add_argument("--json", action="store_true",
                            help='print {"embedded", "skipped_stale", "remaining", "seconds", "space"}')

    def handle(self, *args, **options):
        principal = parse_owner(options["owner"])
        try:
            encoder = load_encoder()
        except EncoderUnavailable as error:
            raise CommandError(f"encoder unavailable: {error}")
        bar = ProgressBar(self.stderr._out) if self.stderr.isatty() else None
        try:
            report = backfill_vectors(principal=principal, encoder=encoder, batch_items=options["batch"],
                                      max_items=options["limit"], progress=bar)
        finally:
            if bar is not None:
                bar.close()
        if report.embedded:
            statistics.analyze(statistics.VECTORS)  # the next recall is planned for the new vectors
        if options["json"]:
            self.stdout.write(json.dumps(report.summary()))
        else:
            self.stdout.write(
                f"Embedded {report.embedded} originals of {principal.label} in {report.seconds:.1f} s "
                f"({report.skipped_stale} skipped as stale, {report.remaining} remaining); space {report.space}"
            )
        if report.stopped:
            raise CommandError(f"encoder unavailable: {report.stopped}; run again to continue")

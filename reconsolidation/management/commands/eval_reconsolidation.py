"""``eval_reconsolidation --arms original,merge,connections --repeats 3 --provider rules|scripted|openai
[--split development|holdout|both] [--corpus v1|v2] --output NEW_PATH``: the measured comparison of the frozen
reconsolidation corpus (``evals/reconsolidation/runner.py`` does the work).

Other tools rely on these names and options and on the report's top-level ``"gates"`` (``{name:
{"value", "threshold", "passed"}}``) and ``"arms"``: keep them exactly. The report is written
exclusively (an existing --output is refused before anything runs), with ``.summary.txt`` and
``.png`` beside it. Exit status 1 when any gate fails — the complete report is still written.

Each case runs in fresh scratch owners of the configured database (left in place, like the
recall evaluations), so point it at a scratch ``VEETBOT_DATA_DIR`` for a clean store.
"""
from __future__ import annotations

import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evals.reconsolidation import runner
from veetbot.progress import ProgressBar


class Command(BaseCommand):
    help = ("Run the frozen reconsolidation corpus through the original, merge and connections arms and "
            "write a scored report with gates (exit 1 when a gate fails).")

    def add_arguments(self, parser):
        parser.add_argument("--arms", default=",".join(runner.scorer.ARMS),
                            help="comma-separated arms (default: original,merge,connections)")
        parser.add_argument("--repeats", type=int, default=3, help="repeats per arm (default 3)")
        parser.add_argument("--provider", default="rules", help="rules | scripted | openai (default rules)")
        parser.add_argument("--split", default="both", choices=runner.SPLIT_CHOICES)
        parser.add_argument("--corpus", default=runner.DEFAULT_CORPUS, choices=tuple(runner.CORPORA),
                            help="corpus version and its manifest (default v2; v1 is the frozen original)")
        parser.add_argument("--output", required=True, help="a NEW path for the JSON report")
        parser.add_argument("--cases", default="", help="comma-separated case IDs (a reduced run)")
        parser.add_argument("--spend-ceiling-usd", default=str(runner.DEFAULT_SPEND_CEILING_USD),
                            help="total provider spend ceiling in USD (default 50)")
        parser.add_argument("--answers", action="store_true",
                            help="answer each probe with the configured OpenAI-compatible model (priced; counts"
                                 " toward the spend ceiling); without it probes are scored on rendered evidence")

    def handle(self, *args, **options):
        output = Path(options["output"])
        if output.exists() or output.with_suffix(".summary.txt").exists() or output.with_suffix(".png").exists():
            raise CommandError(f"--output {output}: exists; reports are never overwritten")
        try:
            ceiling = Decimal(options["spend_ceiling_usd"])
        except InvalidOperation:
            raise CommandError("--spend-ceiling-usd: a decimal amount")
        config = runner.Configuration(
            arms=tuple(a.strip() for a in options["arms"].split(",") if a.strip()),
            repeats=options["repeats"], provider=options["provider"], split=options["split"],
            case_ids=tuple(c.strip() for c in options["cases"].split(",") if c.strip()),
            spend_ceiling_usd=ceiling, answers=options["answers"], corpus=options["corpus"],
        )
        bar = ProgressBar(sys.stderr, label_width=28)
        try:
            report = runner.run(config, progress=bar)
        except runner.RunnerError as error:
            raise CommandError(str(error))
        finally:
            bar.close()
        paths = runner.write(report, output)
        self.stdout.write(runner.summary(report))
        self.stdout.write("wrote " + ", ".join(str(p) for p in paths))
        if not report["passed"]:
            sys.exit(1)

"""``python -m evals.reconsolidation.compare --arms original,merge,connections --repeats 3
--provider rules|scripted|openai [--split development|holdout|both] [--corpus v1|v2] --output NEW.json``:
the measured comparison of the frozen reconsolidation corpus (``runner`` does the work).

Other tools rely on these options and on the report's top-level ``"gates"`` (``{name: {"value",
"threshold", "passed"}}``) and ``"arms"``: keep them exactly. The report is written exclusively
(an existing --output is refused before anything runs), with ``.summary.txt`` and ``.png``
beside it. Exit status 1 when a gate fails (the complete report is still written), 2 when the
run is refused before it starts.

Each case runs in fresh scratch owners of the configured database (left in place, like the
recall evaluations), so point it at a scratch ``VEETBOT_DATA_DIR`` for a clean store.
"""
from __future__ import annotations

import argparse
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Optional

from evals.recall.report import setup_django
from evals.reconsolidation import runner
from veetbot.progress import ProgressBar


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m evals.reconsolidation.compare",
        description=("Run the frozen reconsolidation corpus through the original, merge and connections arms and "
                     "write a scored report with gates (exit 1 when a gate fails)."))
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
    return parser.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    options = parse_args(argv)
    output = Path(options.output)
    if output.exists() or output.with_suffix(".summary.txt").exists() or output.with_suffix(".png").exists():
        print(f"--output {output}: exists; reports are never overwritten", file=sys.stderr)
        return 2
    try:
        ceiling = Decimal(options.spend_ceiling_usd)
    except InvalidOperation:
        print("--spend-ceiling-usd: a decimal amount", file=sys.stderr)
        return 2
    config = runner.Configuration(
        arms=tuple(a.strip() for a in options.arms.split(",") if a.strip()),
        repeats=options.repeats, provider=options.provider, split=options.split,
        case_ids=tuple(c.strip() for c in options.cases.split(",") if c.strip()),
        spend_ceiling_usd=ceiling, answers=options.answers, corpus=options.corpus,
    )
    setup_django()
    bar = ProgressBar(sys.stderr, label_width=28)
    try:
        report = runner.run(config, progress=bar)
    except runner.RunnerError as error:
        print(str(error), file=sys.stderr)
        return 2
    finally:
        bar.close()
    paths = runner.write(report, output)
    print(runner.summary(report))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())

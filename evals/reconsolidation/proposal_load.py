"""How much review dreaming asks of an owner: proposals per 100 memories, by kind, after two
daily passes (``python -m evals.reconsolidation.proposal_load``).

Each source bank is imported into a fresh owner at a fixed instant, embedded with the
configured encoder (semantic recall on: the production configuration, so grouping's semantic
neighbour arm runs), then dreamt through two daily passes with the rules provider in reviewed
mode, each pass run until idle at its own day's clock. Nobody decides anything until the
review queue is full; then the owner approves everything waiting (``evals.reconsolidation.owner.owner_decides``) and
dreaming goes on. What the owner is asked to review is what was decided plus what waits at
the end. Sources: the demo bank the quick start imports, every case bank of the frozen
reconsolidation corpus's development or holdout split (each case its own owner; figures
summed per split), and ``generated-N``, bench_slice's synthetic bank of N memories.

Reported per source: memories; the proposals waiting for the owner at the end, by kind and
per 100 memories (the headline: what the owner is asked to review); every operation recorded
(a pending summary a revision replaced is recorded but no longer asked); the most ever pending
for one owner (against ``RECON_REVIEW_QUEUE_MAX``); redundant summary pairs (two pending or
active summaries of one owner whose support overlaps by a Jaccard index of 0.5 or more); and
the reasons operations were recorded with. A report (commit, dirty flag, configuration,
figures) is written to ``--report-dir``.
"""
from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from django.conf import settings
from django.test import override_settings

from evals.recall import report as rpt
from evals.recall.report import remapper
from evals.reconsolidation import case_inputs
from evals.reconsolidation.bench_slice import bank_document
from evals.reconsolidation.owner import owner_decides
from evals.reconsolidation.runner import redundant_summary_pairs
from memory.bank import memory_bank_import
from memory.services import owner_create
from recall.backfill import backfill_vectors
from recall.encoders import load_encoder
from reconsolidation import driver
from reconsolidation.evidence import pins
from reconsolidation.models import ReconsolidationOperation
from reconsolidation.selectors.review_queue import review_queue
from reconsolidation.store import ReconsolidationStore
from veetbot.identity import Principal
from veetbot.rls import owner_context

KIND = "reconsolidation-proposal-load"
DEMO_BANK = rpt.REPO / "evals" / "fixtures" / "demo-bank.json"
SOURCES = ("demo", "development", "holdout")
# "generated-N": bench_slice's synthetic bank of N memories (one owner, seeded)
GENERATED, GENERATED_SEED = "generated-", 11
PASSES = 2
MAX_SLICES_PER_PASS = 400
LEASE_OWNER = "proposal_load"
# The production configuration, in this process only.
PRODUCTION = {"AGENT_MEMORY_RECONSOLIDATION_ENABLED": True, "AGENT_MEMORY_SEMANTIC_ENABLED": True,
              "AGENT_MEMORY_RECONSOLIDATION_MODE": "reviewed", "AGENT_MEMORY_RECONSOLIDATION_PROVIDER": "rules"}


def _seed(data: str, instant: datetime, embed: bool) -> Principal:
    owner = owner_create(display_name="proposal load", now=instant)
    principal = Principal(tenant_id=owner.tenant_id, principal_id=owner.principal_id)
    memory_bank_import(principal=principal, data=data, now=instant)
    if embed:
        backfill_vectors(principal=principal, encoder=load_encoder())
    return principal


def _pending(principal: Principal) -> int:
    with owner_context(principal):
        return ReconsolidationOperation.objects.filter(state="proposed").count()


def _passes(principal: Principal, instant: datetime, memories: int) -> tuple[int, Counter]:
    """Two daily passes, each until idle. Whenever the review queue is full the owner decides
    what waits (``evals.reconsolidation.owner.owner_decides``) and dreaming goes on from its place; a bank that never
    fills the queue is never decided. Returns the most ever pending at a slice boundary and
    the kinds of the proposals the owner decided."""
    most, decided = 0, Counter()
    for day in range(PASSES):
        now = instant + timedelta(days=day)
        store = ReconsolidationStore(clock=lambda now=now: now)
        for _ in range(max(MAX_SLICES_PER_PASS, memories)):
            run = driver.run_slice(principal, lease_owner=LEASE_OWNER, store=store, now=now, monotonic=lambda: 0.0)
            most = max(most, _pending(principal))
            if run is None and review_queue(principal=principal).full:
                decided.update(owner_decides(principal, now))
                continue
            if run is None or driver.is_idle(run):
                break
        else:
            raise RuntimeError("a pass did not become idle")
    return most, decided


def _operations(principal: Principal) -> list[tuple[str, str, str, frozenset]]:
    with owner_context(principal):
        return [(kind, state, reason, frozenset(ids)) for kind, state, reason, ids in
                ReconsolidationOperation.objects.values_list("kind", "state", "reason", "input_ids")]




def _banks(source: str) -> list[tuple[str, str, int]]:
    """(name, memory-bank JSON, memories) of one source."""
    if source.startswith(GENERATED):
        memories = int(source[len(GENERATED):])
        # The generator's IDs are fixed, and IDs are unique across owners: fresh ones per source.
        remap_text, _new, _inverse = remapper(uuid.uuid5(uuid.NAMESPACE_URL, f"proposal-load/{source}"))
        return [(source, remap_text(bank_document(memories, GENERATED_SEED)), memories)]
    if source == "demo":
        data = DEMO_BANK.read_text()
        return [("demo", data, len(json.loads(data)["memories"]))]
    corpus = json.loads(pins.CORPORA[pins.DEFAULT_CORPUS][0].read_text())
    banks = []
    for case in corpus["cases"]:
        if case["split"] != source:
            continue
        bank = case_inputs.runtime_case_input(case)["bank"]
        if any(m["status"] == "deleted" for m in bank["memories"]):
            bank = {**bank, "memories": [m for m in bank["memories"] if m["status"] != "deleted"]}
        remap_text, _new, _inverse = remapper(uuid.uuid5(uuid.NAMESPACE_URL, f"proposal-load/{case['id']}"))
        data = remap_text(json.dumps(bank, ensure_ascii=False, separators=(",", ":")))
        banks.append((case["id"], data, len(bank["memories"])))
    return banks


def measure(source: str, *, instant: datetime, embed: bool, progress=None) -> dict:
    banks = _banks(source)
    kinds, recorded, reasons, memories, most, redundant, decided = Counter(), Counter(), Counter(), 0, 0, 0, Counter()
    for number, (_name, data, count) in enumerate(banks, start=1):
        principal = _seed(data, instant, embed)
        owner_most, owner_decided = _passes(principal, instant, count)
        most = max(most, owner_most)
        decided.update(owner_decided)
        kinds.update(owner_decided)
        operations = _operations(principal)
        kinds.update(kind for kind, state, _reason, _ids in operations if state == "proposed")
        recorded.update(kind for kind, *_ in operations)
        reasons.update(f"{kind}:{reason}" for kind, _state, reason, _ids in operations)
        redundant += redundant_summary_pairs(principal)
        memories += count
        if progress is not None:
            progress(source, number, len(banks))
    total = sum(kinds.values())
    return {
        "banks": len(banks), "memories": memories, "proposals": total, "recorded": dict(sorted(recorded.items())),
        "per_100_memories": round(100 * total / memories, 2) if memories else None,
        "by_kind": dict(sorted(kinds.items())),
        "by_kind_per_100_memories": {k: round(100 * v / memories, 2) for k, v in sorted(kinds.items())},
        "reasons": dict(sorted(reasons.items())),
        "most_pending_one_owner": most, "redundant_summary_pairs": redundant,
        "decided_when_queue_full": sum(decided.values()),
    }


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.reconsolidation.proposal_load",
                                     description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sources", default=",".join(SOURCES),
                        help="comma-separated: demo, development, holdout, generated-N (bench_slice's synthetic "
                             "bank of N memories)")
    parser.add_argument("--no-embed", dest="embed", action="store_false",
                        help="skip vectors (keyword-only grouping; not the production configuration)")
    parser.add_argument("--report-dir", type=Path, default=Path("evals/reports"))
    args = parser.parse_args(argv)
    unknown = {source for source in args.sources.split(",")
               if source not in SOURCES and not (source.startswith(GENERATED) and source[len(GENERATED):].isdigit())}
    if unknown:
        parser.error(f"--sources: unknown {', '.join(sorted(unknown))}")
    return args


def run(args: argparse.Namespace) -> dict:
    instant = datetime(2026, 10, 2, 4, 0, tzinfo=timezone.utc)
    code = rpt.code_identity()
    bar = rpt.Progress()
    results = {}
    with override_settings(**PRODUCTION):
        for source in args.sources.split(","):
            results[source] = measure(source, instant=instant, embed=args.embed,
                                      progress=lambda label, done, total: bar(f"{label} banks", done, total))
    bar.close()
    return {"kind": KIND, "code": code, "configuration": {
        "passes": PASSES, "embedded": args.embed, "provider": "rules", "mode": "reviewed",
        "review_queue_max": getattr(settings, "RECON_REVIEW_QUEUE_MAX", None),
        "summary_rules": {name: getattr(settings, name) for name in dir(settings) if name.startswith("RECON_SUMMARY_")},
    }, "sources": results}


def summary(report: dict) -> str:
    rows = [[name, r["memories"], r["proposals"], r["per_100_memories"],
             ", ".join(f"{k} {v}" for k, v in r["by_kind_per_100_memories"].items()),
             r["most_pending_one_owner"], r["redundant_summary_pairs"]] for name, r in report["sources"].items()]
    return rpt.table(["source", "memories", "proposals", "per 100", "by kind per 100", "most pending",
                      "redundant summaries"], rows)


def main(argv: Optional[list[str]] = None) -> int:
    rpt.run_command(KIND, parse_args, run, summary, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

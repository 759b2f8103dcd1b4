"""Exact-set benchmark: ``python -m evals.reconsolidation.bench_exact_sets [--memories 10000] [--sets 500]``.

Builds one owner's bank of N originals holding S exact-copy sets (2 to 4 copies each, the
spec's equivalence key equal across each set, copies spread over the whole creation order)
among look-alike fillers with heavy lexical and subject overlap: every filler shares a
set's subject and either repeats a set's very statement under another validity (so its
key differs) or changes only its case, punctuation, negation or a number — all of which
the key keeps significant. Then it runs whole leased slices (``pipeline.driver.run_slice``,
model work without a model: every group handed over is recorded ``no_change``) until every
set has a merge operation (``proposed``: reviewed mode) and the scan generation is complete.

Target: all S sets planned within one generation, in at most ceil(N/64) + ceil(S/8) slices
(the full lane's bound plus the slices the 8-operations-per-slice budget needs). Reported
with every number: slices to the last set, to the complete scan, the sets planned per slice,
merges that are not one of the sets (must be 0), slice wall time (median/p95), SQL
statements per slice, the backlog after each slice, the machine and its load.

The bank is built in a throw-away database beside the configured one (created, migrated
as production does and dropped afterwards; ``bench_slice.Database``), in a handful of
server-side statements as the runtime role under forced RLS. The report goes to
``evals/reports/reconsolidation-exact-sets-<UTC>-<commit>[-dirty].json``, never overwritten.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import random
import statistics
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.fixtures import bulk
from evals.recall import report as rpt
from evals.reconsolidation.bench_slice import (
    Database,
    bounds_configuration,
    machine,
    p95,
    server_version,
    start_bench,
    timed_slice,
)
from memory.claims import normalize_text
from memory.services import owner_create
from memory.services.owner_state import allocate, lock_owner
from reconsolidation import mode
from reconsolidation.models import ReconsolidationEquivalenceBacklog, ReconsolidationOperation
from reconsolidation.store import ReconsolidationStore
from veetbot.identity import Principal
from veetbot.rls import owner_context

KIND = "reconsolidation-exact-sets"
SEED = 13
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
BANK_AT = NOW - timedelta(days=30)
SUBJECTS = 50  # each subject holds S/50 sets and N/50 originals: heavy subject overlap
# Look-alikes of a set's statement; each keeps one meaning-bearing difference.
FILLER_VARIANTS = (
    "{statement}",  # the very statement, under another validity: another key
    "{lower}",
    "{bare}",
    "{bare}!",
    "The owner does not keep the spare key {s} in drawer {d}.",
    "The owner keeps the spare key {s}{s} in drawer {d}.",
    "The owner keeps the spare key {s} in drawer {d}{d}.",
)

# bulk.py's column list; only the row source differs: per-row subject, statement, validity.
_MEMORY_ROWS = """
    SELECT md5(%(tag)s || 'm' || (u.n - 1))::uuid, %(tenant_id)s, %(principal_id)s, u.subject, u.statement,
           'fact', 'claim', 'affirmed', 'explicit', 'owner', 'USER', 'internal', 'user', true, 0.9,
           %(at)s, u.valid_from, NULL, '{}', 'active', %(at)s + (u.n - 1) * interval '1 second',
           %(at)s + (u.n - 1) * interval '1 second', 1, %(first)s + u.n - 1, %(first_position)s + u.n - 1,
           1.0, false, u.claim
    FROM unnest(%(subjects)s::text[], %(statements)s::text[], %(valid_froms)s::timestamptz[], %(claims)s::text[])
         WITH ORDINALITY AS u(subject, statement, valid_from, claim, n)
"""


def plan_bank(memories: int, sets: int, seed: int) -> tuple[list[tuple[str, str, datetime]], list[list[int]]]:
    """The rows (subject, statement, valid_from) in creation order, and each set's row
    positions. Deterministic for (memories, sets, seed)."""
    rng = random.Random(seed)
    rows: list[tuple[str, str, datetime, int]] = []  # the last item: the set, or -1 for a filler
    for s in range(sets):
        statement = f"The owner keeps the spare key {s} in drawer {s % 7}."
        for _ in range(2 + s % 3):
            rows.append((f"spare key {s % SUBJECTS}", statement, BANK_AT + timedelta(minutes=s), s))
    if len(rows) > memories:
        raise ValueError(f"{sets} sets need {len(rows)} memories; --memories is {memories}")
    for i in range(memories - len(rows)):
        s = rng.randrange(sets)
        statement = f"The owner keeps the spare key {s} in drawer {s % 7}."
        variant = FILLER_VARIANTS[i % len(FILLER_VARIANTS)]
        text = variant.format(statement=statement, lower=statement.lower(), bare=statement[:-1], s=s, d=s % 7)
        # Every filler has its own validity, so no two fillers (and no filler and set) share a key.
        rows.append((f"spare key {s % SUBJECTS}", text, BANK_AT + timedelta(days=1, seconds=i), -1))
    rng.shuffle(rows)  # copies lie far apart in creation order: old and recent, across sessions
    members: list[list[int]] = [[] for _ in range(sets)]
    for position, row in enumerate(rows):
        if row[3] >= 0:
            members[row[3]].append(position)
    return [row[:3] for row in rows], members


def build_owner(memories: int, sets: int, seed: int) -> tuple[object, list[frozenset], dict]:
    """A new owner with the planned bank; returns (principal, each set's memory IDs, corpus)."""
    from django.db import connection, connections


    created = owner_create(display_name=f"exact sets bench {memories}", now=BANK_AT)
    principal = Principal(tenant_id=created.tenant_id, principal_id=created.principal_id)
    rows, members = plan_bank(memories, sets, seed)
    digest = hashlib.sha256(repr(rows).encode()).hexdigest()
    tag = uuid.uuid4().hex
    began = time.perf_counter()
    with owner_context(principal):
        lock_owner(principal)
        block = allocate(principal, creations=len(rows), positions=len(rows))
        params = {
            "tag": tag, "tenant_id": principal.tenant_id, "principal_id": principal.principal_id, "at": BANK_AT,
            "count": len(rows), "sessions": -(-len(rows) // bulk.SESSION_SIZE), "session_size": bulk.SESSION_SIZE,
            "first": block.creation_sequence, "first_position": block.store_position,
            "subjects": [r[0] for r in rows], "statements": [r[1] for r in rows], "valid_froms": [r[2] for r in rows],
            "claims": [hashlib.sha256(normalize_text(r[1]).encode()).hexdigest() for r in rows],
        }
        with connection.cursor() as cursor:
            memories = bulk._MEMORIES.split("SELECT", 1)[0] + _MEMORY_ROWS
            for statement in (bulk._SESSIONS, bulk._EVENTS, bulk._PARTS, memories, bulk._SOURCES):
                cursor.execute(statement, params)
            cursor.execute(bulk._IDS, params)
            ids = [row[0] for row in cursor.fetchall()]
    built = time.perf_counter() - began
    with connections["owner"].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memory_memory, memory_memorysource, memory_event, memory_eventpart")
    expected = [frozenset(ids[position] for position in positions) for positions in members]
    corpus = {"memories": len(rows), "sets": sets, "copies": sum(len(m) for m in members),
              "fillers": len(rows) - sum(len(m) for m in members), "subjects": SUBJECTS, "seed": seed,
              "filler_variants": len(FILLER_VARIANTS), "sha256": digest, "build_seconds": round(built, 2)}
    return principal, expected, corpus


def merge_sets(principal) -> list[frozenset]:

    with owner_context(principal):
        return [frozenset(ids) for ids in ReconsolidationOperation.objects.filter(kind="merge_equivalent")
                .values_list("input_ids", flat=True)]


def backlog_size(principal) -> int:

    with owner_context(principal):
        return ReconsolidationEquivalenceBacklog.objects.count()


def measure(principal, expected: list[frozenset], memories: int, *, max_slices: int, progress) -> dict:
    """Slices until every set is planned and the scan is complete (or ``max_slices``)."""

    store, now, wanted = ReconsolidationStore(), NOW, set(expected)
    durations, statements, planned, backlog, full = [], [], [], [], []
    all_planned_at = scan_complete_at = None
    found: set[frozenset] = set()
    while len(durations) < max_slices and (all_planned_at is None or scan_complete_at is None):
        run = timed_slice(principal, store, now, durations, statements)
        if run is None:
            raise RuntimeError("nothing was due: the job completed before every set was planned")
        merges = merge_sets(principal)
        found = set(merges)
        planned.append(len(found & wanted))
        backlog.append(backlog_size(principal))
        full.append(run.report.full_anchors)
        if all_planned_at is None and wanted <= found:
            all_planned_at = len(durations)
        if scan_complete_at is None and run.generation_complete:
            scan_complete_at = len(durations)
        progress("slices", planned[-1], len(wanted))
        now += timedelta(seconds=2)
    progress.close()
    merges = merge_sets(principal)
    bound = math.ceil(memories / 64) + math.ceil(len(expected) / 8)
    return {
        "slices_run": len(durations), "slices_to_every_set_planned": all_planned_at,
        "slices_to_scan_complete": scan_complete_at, "slices_bound": bound,
        "slices_bound_formula": "ceil(N/64) + ceil(S/8)",
        "within_bound": all_planned_at is not None and all_planned_at <= bound,
        "sets_planned": len(set(merges) & wanted), "sets": len(wanted),
        "merges_not_a_set": sum(1 for m in merges if m not in wanted), "merges_total": len(merges),
        "max_sets_planned_in_one_slice": max(b - a for a, b in zip([0] + planned, planned)),
        "slice_ms": {"median": round(statistics.median(durations), 2), "p95": round(p95(durations), 2),
                     "max": round(max(durations), 2), "mean": round(statistics.fmean(durations), 2)},
        "statements_per_slice": {"median": statistics.median(statements), "max": max(statements),
                                 "min": min(statements)},
        "backlog_max": max(backlog),
        "samples": {"slice_ms": [round(d, 3) for d in durations], "statements": statements,
                    "sets_planned_cumulative": planned, "backlog": backlog, "full_anchors": full},
    }


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.reconsolidation.bench_exact_sets",
                                     description=__doc__.split("\n", 1)[0])
    parser.add_argument("--memories", type=int, default=10_000, help="N, memories of the one owner (default 10000)")
    parser.add_argument("--sets", type=int, default=500, help="S, exact-copy sets among them (default 500)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--max-slices", type=int, default=0, help="stop after this many slices (default: 2x the bound)")
    parser.add_argument("--report-dir", type=Path, default=Path("evals/reports"))
    args = parser.parse_args(argv)
    if args.sets < 1 or args.memories < 4 * args.sets:
        parser.error("--sets must be positive and --memories at least 4 x --sets")
    return args


def run(args: argparse.Namespace) -> dict:
    code, started, load_at_start, progress = start_bench()

    bound = math.ceil(args.memories / 64) + math.ceil(args.sets / 8)
    with Database():
        server = server_version()
        principal, expected, corpus = build_owner(args.memories, args.sets, args.seed)
        rpt.note(f"N={corpus['memories']}, S={args.sets}: built in {corpus['build_seconds']} s")
        result = measure(principal, expected, corpus["memories"], max_slices=args.max_slices or 2 * bound,
                         progress=progress)
    return {
        "kind": KIND, "started_at": started.isoformat(), "code": code,
        "configuration": {
            "memories": args.memories, "sets": args.sets, "seed": args.seed, "slice_clock_start": NOW.isoformat(),
            "processor": "no_provider (every group no_change)", "mode": mode.current_mode(),
            "bounds": bounds_configuration(), "machine": machine(load_at_start, server),
        },
        "corpus": corpus,
        "result": {k: v for k, v in result.items() if k != "samples"},
        "targets": {"every_set_planned": result["sets_planned"] == result["sets"],
                    "no_other_merge": result["merges_not_a_set"] == 0,
                    "slices_at_most": bound, "slices_met": result["within_bound"]},
        "samples": result["samples"],
        "finished_at": datetime.now(timezone.utc).isoformat(),
    }


def summary(report: dict) -> str:
    result, targets = report["result"], report["targets"]
    return "\n".join([
        f"N={report['corpus']['memories']} with S={result['sets']} exact-copy sets "
        f"({report['corpus']['copies']} copies, {report['corpus']['fillers']} look-alike fillers):",
        f"  sets planned: {result['sets_planned']}/{result['sets']}; merges that are no set: {result['merges_not_a_set']}",
        f"  slices to every set planned: {result['slices_to_every_set_planned']} "
        f"(bound {result['slices_bound_formula']} = {result['slices_bound']}: "
        f"{'met' if targets['slices_met'] else 'NOT met'}); to the complete scan: {result['slices_to_scan_complete']}",
        f"  slice median {result['slice_ms']['median']} ms, p95 {result['slice_ms']['p95']} ms; SQL statements per "
        f"slice median {result['statements_per_slice']['median']}, max {result['statements_per_slice']['max']}; "
        f"backlog max {result['backlog_max']}",
    ])


def main(argv: Optional[list[str]] = None) -> int:
    rpt.run_command(KIND, parse_args, run, summary, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

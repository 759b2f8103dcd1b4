"""Slice benchmark: ``python -m evals.reconsolidation.bench_slice [--memories 100000]``.

Measures the whole leased slice (``reconsolidation.driver.run_slice``: claim, plan,
neighbour lookups, checkpoint, group claims and outcomes, release) at N memories for one
owner. Two processors:

* ``--processor none`` (default): no provider work — every group given is recorded
  ``no_change``, so what is timed is the pipeline and the database, not a model; it runs
  until the scan generation is complete;
* ``--processor rules``: the product's default provider on its real batch path (one
  reservation per slice, proposals committed in reviewed mode), run until the day's job is
  idle (``driver.is_idle``: scan, model lane and equivalence backlog done): what it costs
  for the model lane to reach every groupable anchor;
* ``--processor scripted``: the same batch path with the offline scripted model
  (``evals.reconsolidation.responder.HeuristicResponder``: a proposal and a verification
  request per batch, answered from the request's own bytes) — the model lane's coverage and
  its chat requests per slice (the spec allows 2).

Reported:

* median and p95 slice wall time (target: p95 <= 1 s);
* SQL statements per slice, at N and at a small reference bank (bounded, independent of N);
* slices to a complete scan generation, against the bound ceil(N/64);
* model coverage at the end (groupable anchors whose group the model processed ÷
  groupable anchors found), reservations per slice, chat requests per slice (scripted),
  operations recorded.

The bank is ``evals/generate_bank.py``'s synthetic memory-bank@1 document (seeded),
imported through ``memory.bank.memory_bank_import`` into a throw-away database created and
migrated beside the configured one (dropped afterwards). By default every original then gets
its vector (``recall.backfill.backfill_vectors`` with the local encoder behind
``--vector-cache``, so a rerun does not spend its time encoding) and semantic recall is on in
this process: the production configuration, in which grouping's semantic neighbour arm runs
(through the HNSW index above ``RECALL_EXACT_SEARCH_MAX_VECTORS``). The report counts the
neighbours only that arm found; ``--no-vectors`` measures the lexical probe alone. With ``--busy-changes`` (default)
the changed lane is kept busy while the generation runs — every 4th slice revises the 400
newest originals — so the full lane gets only its reservation and the ceil(N/64) bound is
exercised rather than flattered. Touches happen between slices, outside the timings.

The report (``evals/reports/reconsolidation-slice-<UTC>-<commit>[-dirty].json``, never
overwritten) holds the code identity, the corpus digest, the configuration and every
sample. Numbers depend on the machine and its load: the report records CPU count and load.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import math
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.fixtures.bulk import bulk_touch
from evals.generate_bank import Plan, write
from evals.recall import report as rpt
from evals.vector_cache import CachedEncoder, load_vector_cache, save_vector_cache
from evals.reconsolidation.owner import owner_decides
from evals.reconsolidation.responder import HeuristicResponder
from memory.bank import memory_bank_import
from memory.models import Memory
from memory.services import owner_create
from recall.backfill import backfill_vectors
from recall.encoders import load_encoder
from reconsolidation import bounds, driver, grouping
from reconsolidation.models import ReconsolidationGroup, ReconsolidationSpend
from reconsolidation.selectors.review_queue import review_queue
from reconsolidation.store import ReconsolidationStore
from veetbot.identity import Principal
from veetbot.rls import owner_context

KIND = "reconsolidation-slice"
NAMESPACE = uuid.UUID("6f1c2b7e-4d3a-5b8c-9e0f-1a2b3c4d5e6f")
SEED = 11
PER_SESSION = 50
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)  # after every generated session
TOUCH_EVERY_SLICES = 4
TOUCH_NEWEST = 400
PROCESSORS = {"none": "no_provider (every group no_change)",
              "rules": "rules (the default provider's batch path, reviewed mode)",
              "scripted": "scripted (the offline HeuristicResponder on the batch path, reviewed mode)"}


def bank_document(memories: int, seed: int) -> str:

    with tempfile.TemporaryDirectory() as spool:
        handle = io.StringIO()
        write(Plan(memories, seed, PER_SESSION), handle, Path(spool))
    return handle.getvalue()


def no_provider(store, principal, group_lease, *, now):
    """Model work without a model: every group given is recorded ``no_change``."""
    store.finish_group(principal, group_lease, outcome="no_change", reason="benchmark", now=now)
    return ()


class TimedStore:
    """Wraps a store's methods and ``grouping.select_groups`` to attribute each slice's wall
    time to its phases (claim, plan, grouping, checkpoint, group claims/outcomes, release)."""

    PHASES = ("claim_due", "plan_slice", "select_groups", "checkpoint", "claim_group", "finish_group", "renew",
              "release")

    def __init__(self, store) -> None:

        self.spent: dict[str, float] = {}
        self._grouping, self._select = grouping, grouping.select_groups
        for name in self.PHASES:
            if name != "select_groups":
                setattr(store, name, self._timed(name, getattr(store, name)))
        grouping.select_groups = self._timed("select_groups", grouping.select_groups)

    def _timed(self, name, function):
        def timed(*args, **kwargs):
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[name] = self.spent.get(name, 0.0) + (time.perf_counter() - began) * 1000

        return timed

    def take(self) -> dict[str, float]:
        spent, self.spent = self.spent, {}
        return spent

    def close(self) -> None:
        self._grouping.select_groups = self._select


class SemanticShare:
    """Counts what grouping's semantic arm adds: neighbours found only by vector distance
    (not by the lexical probe) and the anchors whose candidate group holds one. Wraps
    ``grouping.neighbours`` and ``grouping.semantic_neighbours``; a semantic row that the
    merge kept is the same tuple object the arm returned."""

    def __init__(self) -> None:
        self.anchors, self.members, self.returned = 0, 0, 0
        self._neighbours, self._semantic = grouping.neighbours, grouping.semantic_neighbours
        returned: list[dict] = []

        def semantic(*args, **kwargs):
            found = self._semantic(*args, **kwargs)
            returned.append(found)
            self.returned += sum(len(rows) for rows in found.values())
            return found

        def neighbours(*args, **kwargs):
            returned.clear()
            merged = self._neighbours(*args, **kwargs)
            semantic_rows = {id(row) for found in returned for rows in found.values() for row in rows}
            for rows in merged.values():
                added = sum(1 for row in rows if id(row) in semantic_rows)
                self.members += added
                self.anchors += bool(added)
            return merged

        grouping.semantic_neighbours, grouping.neighbours = semantic, neighbours

    def close(self) -> None:
        grouping.semantic_neighbours, grouping.neighbours = self._semantic, self._neighbours


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


class Database:
    """A throw-away database beside the configured one, migrated as production does."""

    def __init__(self) -> None:
        self.name = f"bench_slice_{os.getpid()}"

    def __enter__(self) -> "Database":
        from django.conf import settings
        from django.core.management import call_command
        from django.db import connections

        with connections["owner"]._nodb_cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{self.name}"')
        for alias in ("default", "owner"):
            connections[alias].close()
            settings.DATABASES[alias]["NAME"] = self.name
            connections[alias].settings_dict["NAME"] = self.name
        call_command("migrate", database="owner", verbosity=0, interactive=False)
        return self

    def __exit__(self, *exc) -> None:
        from django.db import connections

        for alias in ("default", "owner"):
            connections[alias].close()
        with connections["owner"]._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def build_owner(memories: int, seed: int, progress, encoder=None) -> tuple[object, dict, list]:
    """A new owner with the generated bank imported and, given an ``encoder``, a vector for
    every original (the production configuration: grouping's semantic arm reads them);
    returns (principal, corpus, ids by creation)."""
    from django.db import connections


    created = owner_create(display_name=f"slice bench {memories}", now=NOW)
    principal = Principal(tenant_id=created.tenant_id, principal_id=created.principal_id)
    began = time.perf_counter()
    text = bank_document(memories, seed)
    generated = time.perf_counter() - began
    digest = hashlib.sha256(text.encode()).hexdigest()  # of the generated corpus, before the per-owner remap
    remap_text, _, _ = rpt.remapper(uuid.uuid5(NAMESPACE, f"run:{principal.principal_id}"))
    text = remap_text(text)  # IDs are unique across owners: fresh ones for each imported copy
    counts = memory_bank_import(principal=principal, data=text.encode(), now=NOW,
                                progress=lambda s, d, t: progress(f"{memories} import {s}", d, t))
    progress.close()
    del text
    vectors = None
    if encoder is not None:
        began_vectors = time.perf_counter()
        vectors = backfill_vectors(principal=principal, encoder=encoder,
                                   progress=lambda s, d, t: progress(f"{memories} vectors", d, t)).summary()
        progress.close()
        vectors["seconds"] = round(time.perf_counter() - began_vectors, 2)
    with connections["owner"].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memory_memory, memory_memorysource, memory_event, memory_changejournal,"
                       " recall_memoryvector")
    with owner_context(principal):
        ids = list(Memory.objects.order_by("creation_sequence").values_list("id", flat=True))
    corpus = {"generator": "evals/generate_bank.py", "memories": memories, "seed": seed, "per_session": PER_SESSION,
              "sha256": digest, "generate_seconds": round(generated, 2), "import": counts.model_dump(mode="json"),
              "vectors": vectors}
    return principal, corpus, ids


def timed_slice(principal, store, now, durations: list, statements: list, processor: str = "none",
                provider=None):
    """One whole slice (``driver.run_slice``; ``processor`` none: model work without a model,
    rules: the configured rules batch, scripted: ``provider``'s batch); its wall time and SQL
    statement count are appended to ``durations`` and ``statements``."""
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext


    reset_queries()  # the query log is a bounded deque: start each slice's count from empty
    with CaptureQueriesContext(connection) as captured:
        began = time.perf_counter()
        run = driver.run_slice(principal, lease_owner="bench", store=store, now=now,
                               process=no_provider if processor == "none" else None, provider=provider)
        durations.append((time.perf_counter() - began) * 1000)
    statements.append(len(captured.captured_queries))
    return run


def group_outcomes(principal) -> dict[str, int]:
    """Groups by final state and reason (``"no_change request_too_large": 133``)."""
    from django.db.models import Count


    with owner_context(principal):
        rows = ReconsolidationGroup.objects.values("state", "reason").annotate(n=Count("id")).order_by("-n")
        return {" ".join(filter(None, (row["state"], row["reason"]))): row["n"] for row in rows}


def reservations_of(principal, lease_token) -> int:
    """Provider calls reserved under one slice's lease (the rules batch reserves once)."""

    with owner_context(principal):
        return ReconsolidationSpend.objects.filter(slice_token=lease_token).count()


def measure(principal, ids: list, *, busy: bool, progress, label: str, max_slices: Optional[int] = None,
            processor: str = "none", owner_keeps_up: bool = False) -> dict:
    """Slices until the generation's scan is complete (``processor`` none) or the job is
    idle (rules, scripted), or ``max_slices``; every sample kept."""

    store, now = ReconsolidationStore(), NOW
    decided: Counter = Counter()
    timer = TimedStore(store)
    semantic = SemanticShare()
    durations, statements, full, changed, groups, calls, operations, requests = [], [], [], [], [], [], [], []
    provider = None
    if processor == "scripted":
        provider = HeuristicResponder()
    scan_slices, run, last = None, None, None
    phases: dict[str, list[float]] = {name: [] for name in TimedStore.PHASES}
    complete, bound, stopped = False, math.ceil(len(ids) / 64), ""
    while not complete and (max_slices is None or len(durations) < max_slices):
        if busy and len(durations) % TOUCH_EVERY_SLICES == 0:
            bulk_touch(principal, ids[-TOUCH_NEWEST:], at=now)  # recent memories keep changing
        timer.take()  # the touch is not the slice's
        sent = provider.requests if provider is not None else 0
        run = timed_slice(principal, store, now, durations, statements, processor, provider)
        if run is None:
            if last is not None and last.report.job_completed:
                # The day's job completed; the pending groups a busy touch just made stale
                # were invalidated with it, and the new changes wait for the next day.
                durations.pop(), statements.pop()
                complete = True
                break
            if review_queue(principal=principal).full:
                durations.pop(), statements.pop()
                if owner_keeps_up:
                    # The owner decides what waits (outside the timings) and dreaming goes on.
                    decided.update(owner_decides(principal, now))
                    continue
                # As many proposals wait as the owner reviews at once and nobody approves
                # here: dreaming keeps its place, which is where this measurement ends.
                stopped = "review_queue_full"
                break
            raise RuntimeError("nothing was due: the benchmark expects a fresh owner")
        last = run
        spent = timer.take()
        for name in TimedStore.PHASES:
            phases[name].append(round(spent.get(name, 0.0), 3))
        full.append(run.report.full_anchors)
        changed.append(run.report.changed_anchors)
        groups.append(run.groups_processed)
        calls.append(reservations_of(principal, run.report.lease_token))
        operations.append(len(run.operations))
        requests.append((provider.requests if provider is not None else 0) - sent)
        if scan_slices is None and run.generation_complete:
            scan_slices = len(durations)
        complete = run.generation_complete if processor == "none" else driver.is_idle(run)
        progress(f"{label} slices", run.coverage.full_cursor, run.coverage.generation_size)
        now += timedelta(seconds=2)
    progress.close()
    timer.close()
    semantic.close()
    coverage = driver.coverage_after(last)  # the job's model counts, read once after the slices
    outcomes = group_outcomes(principal)
    return {
        "slices": len(durations), "generation_complete": complete, "slices_bound_ceil_n_over_64": bound,
        "scan_slices": scan_slices, "within_bound": scan_slices is not None and scan_slices <= bound,
        "stopped": stopped or ("complete" if complete else "max_slices"),
        "review_queue": {"waiting": review_queue(principal=principal).waiting, "bound": bounds.RECON_REVIEW_QUEUE_MAX,
                         "owner_keeps_up": owner_keeps_up, "decided_by_owner": dict(sorted(decided.items()))},
        "model": {"processor": processor, "idle": processor != "none" and complete,
                  "groupable_anchors": coverage.groupable_anchors, "groupable_processed": coverage.groupable_processed,
                  "model_coverage": coverage.model_coverage, "groups_failed": coverage.groups_failed,
                  # model reach: groups whose evidence a sent proposal request carried ÷ groups formed
                  "groups_formed": coverage.groups_formed, "groups_sent": coverage.groups_sent,
                  "model_reach": coverage.model_reach,
                  "reservations_per_slice_max": max(calls), "reservations_total": sum(calls),
                  "chat_requests_per_slice_max": max(requests) if provider is not None else None,
                  "chat_requests_total": sum(requests) if provider is not None else None,
                  "operations_recorded": sum(operations),
                  # how each group ended: "completed"/"no_change provider_no_change" reached the
                  # provider; the other reasons were refused before any call
                  "group_outcomes": outcomes},
        "slice_ms": {"median": round(statistics.median(durations), 2), "p95": round(p95(durations), 2),
                     "max": round(max(durations), 2), "mean": round(statistics.fmean(durations), 2)},
        "statements_per_slice": {"median": statistics.median(statements), "max": max(statements),
                                 "min": min(statements)},
        "anchors_per_slice": {"full_median": statistics.median(full), "changed_median": statistics.median(changed),
                              "full_min_while_scanning": min(full[:-1] or full)},
        "groups_processed": sum(groups),
        # candidate groups (one per anchor planned) holding a neighbour only the semantic arm found
        "semantic_arm": {"neighbours_returned": semantic.returned,
                         "anchors_with_semantic_neighbours": semantic.anchors,
                         "semantic_only_neighbours": semantic.members},
        "phase_ms": {name: {"median": round(statistics.median(v), 2), "p95": round(p95(v), 2)}
                     for name, v in phases.items()},
        "samples": {"phase_ms": phases, "slice_ms": [round(d, 3) for d in durations], "statements": statements,
                    "full_anchors": full, "changed_anchors": changed, "groups": groups,
                    "reservations": calls, "requests": requests, "operations": operations},
    }


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.reconsolidation.bench_slice",
                                     description=__doc__.split("\n", 1)[0])
    parser.add_argument("--memories", type=int, default=100_000, help="N, memories of the one owner (default 100000)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--reference", type=int, default=1000,
                        help="a small bank measured the same way, to show statements do not grow with N (0: skip)")
    parser.add_argument("--quiet-changes", dest="busy", action="store_false",
                        help="leave the changed lane empty (the full lane then borrows all 128 anchors)")
    parser.add_argument("--processor", choices=PROCESSORS, default="none",
                        help="none: every group no_change (pipeline only); rules: the default provider's real "
                             "batch path, until the job is idle; scripted: that path with the offline scripted "
                             "model (two chat requests a batch)")
    parser.add_argument("--owner-decides", action="store_true",
                        help="whenever the review queue is full the owner approves everything waiting (outside the "
                             "timings) and dreaming goes on, so the model lane can reach the whole generation")
    parser.add_argument("--no-vectors", dest="vectors", action="store_false",
                        help="no vectors and semantic recall off: grouping's lexical probe only (not the production "
                             "configuration)")
    parser.add_argument("--vector-cache", type=Path, default=None,
                        help="a .npz text -> vector cache for the local encoder (read, then extended), so a rerun "
                             "does not spend its time encoding")
    parser.add_argument("--max-slices", type=int, default=None,
                        help="stop the N-memory owner's run after this many slices (the reference runs to its "
                             "end): a bounded sample of a run that would take hours, reported as stopped at max_slices")
    parser.add_argument("--report-dir", type=Path, default=Path("evals/reports"))
    args = parser.parse_args(argv)
    if args.memories < 2 or args.reference < 0:
        parser.error("--memories must be at least 2 and --reference non-negative")
    if args.max_slices is not None and args.max_slices < 1:
        parser.error("--max-slices must be positive")
    return args


def start_bench() -> tuple[dict, datetime, tuple, object]:
    """What a slice benchmark does first: Django, the code identity, processing switched on
    in-process (it runs slices), the start instant and load average, a progress bar."""
    rpt.setup_django()
    code = rpt.code_identity()
    from django.conf import settings

    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    return code, datetime.now(timezone.utc), os.getloadavg(), rpt.Progress()


def server_version() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        return cursor.fetchone()[0]


def machine(load_at_start: tuple, server: str) -> dict:
    return {"cpus": os.cpu_count(), "load_average_at_start": load_at_start, "load_average_at_end": os.getloadavg(),
            "python": platform.python_version(), "postgresql": server}


def bounds_configuration() -> dict:

    return {name: str(getattr(bounds, name)) for name in dir(bounds) if name.startswith("RECON_")}


def run(args: argparse.Namespace) -> dict:
    code, started, load_at_start, progress = start_bench()
    if args.processor == "scripted":
        from django.conf import settings

        settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True  # this process only: the offline model
    encoder, cache, space = None, {}, None
    if args.vectors:
        from django.conf import settings

        settings.AGENT_MEMORY_SEMANTIC_ENABLED = True  # this process only: the production configuration
        minilm = load_encoder()
        space = minilm.tuple.space
        cache = load_vector_cache(args.vector_cache, space)
        encoder = CachedEncoder(minilm, cache)
    cached_at_start = len(cache)
    with Database():
        server = server_version()
        reference = None
        if args.reference:
            principal, corpus_ref, ids = build_owner(args.reference, args.seed, progress, encoder)
            reference = {"corpus": corpus_ref, **measure(principal, ids, busy=args.busy, progress=progress,
                                                          label=str(args.reference), processor=args.processor,
                                                          owner_keeps_up=args.owner_decides)}
            rpt.note(f"reference N={args.reference}: {reference['slices']} slices, statements per slice "
                     f"median {reference['statements_per_slice']['median']} max {reference['statements_per_slice']['max']}")
        principal, corpus, ids = build_owner(args.memories, args.seed, progress, encoder)
        save_vector_cache(args.vector_cache, space, cache)
        rpt.note(f"N={args.memories}: imported in {corpus['import']['seconds']} s")
        main = measure(principal, ids, busy=args.busy, progress=progress, label=str(args.memories),
                       processor=args.processor, owner_keeps_up=args.owner_decides, max_slices=args.max_slices)
    return {
        "kind": KIND, "started_at": started.isoformat(), "code": code,
        "configuration": {
            "memories": args.memories, "seed": args.seed, "reference_memories": args.reference,
            "max_slices": args.max_slices,
            "busy_changes": args.busy, "touch_every_slices": TOUCH_EVERY_SLICES, "touch_newest": TOUCH_NEWEST,
            "vectors": args.vectors, "semantic_recall": args.vectors, "encoder_space": space,
            "vector_cache": str(args.vector_cache) if args.vector_cache else None,
            "vector_cache_entries_at_start": cached_at_start,
            "texts_encoded": encoder.encoded if encoder is not None else 0,
            "slice_clock_start": NOW.isoformat(),
            "processor": PROCESSORS[args.processor],
            "bounds": bounds_configuration(), "machine": machine(load_at_start, server),
        },
        "corpus": corpus,
        "result": {k: v for k, v in main.items() if k != "samples"},
        "reference": None if reference is None else {k: v for k, v in reference.items() if k != "samples"},
        "targets": {"slice_p95_ms_at_most": 1000, "slices_at_most": math.ceil(args.memories / 64),
                    "p95_met": main["slice_ms"]["p95"] <= 1000, "slices_met": main["within_bound"]},
        "samples": {"main": main["samples"], "reference": None if reference is None else reference["samples"]},
        "finished_at": datetime.now(timezone.utc).isoformat(),
    }


def summary(report: dict) -> str:
    result, ref = report["result"], report["reference"]
    lines = [
        f"N={report['configuration']['memories']} (busy changed lane: {report['configuration']['busy_changes']}):",
        f"  slice median {result['slice_ms']['median']} ms, p95 {result['slice_ms']['p95']} ms "
        f"(target p95 <= 1000 ms: {'met' if report['targets']['p95_met'] else 'NOT met'})",
        "  phases (median ms): " + ", ".join(f"{k} {v['median']}" for k, v in result["phase_ms"].items()),
        f"  SQL statements per slice: median {result['statements_per_slice']['median']}, "
        f"max {result['statements_per_slice']['max']}",
        f"  semantic arm ({'on' if report['configuration'].get('vectors') else 'off'}): "
        f"{result['semantic_arm']['anchors_with_semantic_neighbours']} anchors' groups hold "
        f"{result['semantic_arm']['semantic_only_neighbours']} neighbours only it found (it returned "
        f"{result['semantic_arm']['neighbours_returned']} within its distance bound)",
        f"  slices to a complete generation: {result['scan_slices']} (bound ceil(N/64) = "
        f"{result['slices_bound_ceil_n_over_64']}: {'met' if report['targets']['slices_met'] else 'NOT met'})",
    ]
    model = result["model"]
    if model["processor"] != "none":
        queue = result["review_queue"]
        if queue.get("owner_keeps_up"):
            lines.append(f"  the owner decided {sum(queue['decided_by_owner'].values())} proposals whenever the review "
                         f"queue was full ({', '.join(f'{k} {v}' for k, v in queue['decided_by_owner'].items())})")
        if result["stopped"] == "review_queue_full":
            lines.append(f"  stopped after {result['slices']} slices: the review queue is full "
                         f"({queue['waiting']} proposals wait, bound {queue['bound']}); dreaming keeps its place")
        lines.append(f"  {model['processor']}: {result['slices']} slices to idle ({'reached' if model['idle'] else 'NOT reached'}); "
                     f"model coverage {model['groupable_processed']}/{model['groupable_anchors']} groupable anchors; "
                     f"model reach {model['groups_sent']}/{model['groups_formed']} groups sent; "
                     f"at most {model['reservations_per_slice_max']} reservation(s) a slice; "
                     + ("" if model.get("chat_requests_per_slice_max") is None else
                        f"at most {model['chat_requests_per_slice_max']} chat request(s) a slice "
                        f"({model['chat_requests_total']} in all); ") +
                     f"{model['operations_recorded']} operations recorded")
        lines.append("  groups by outcome: " + ", ".join(f"{k} {v}" for k, v in model["group_outcomes"].items()))
    if ref:
        lines.append(f"  reference N={report['configuration']['reference_memories']}: statements per slice median "
                     f"{ref['statements_per_slice']['median']}, max {ref['statements_per_slice']['max']}; "
                     f"slice p95 {ref['slice_ms']['p95']} ms")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    rpt.run_command(KIND, parse_args, run, summary, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where dreaming's semantic neighbour arm should stop scanning and use the index:
``python -m evals.reconsolidation.bench_neighbours --sizes 1000,5000,20000,100000``.

For each size N, a fresh owner (in a throw-away database, as ``bench_slice`` builds it) gets
``evals/generate_bank.py``'s bank of N memories and a vector for every original (the local
encoder behind ``--vector-cache``). Then ``--rounds`` times, a slice's worth of anchors
(``RECON_SLICE_MAX_ANCHORS``, drawn with a fixed seed) is given to
``reconsolidation.grouping.semantic_neighbours`` in batches of
``RECON_NEIGHBOUR_BATCH_ANCHORS``, as grouping asks, once with the exact scan and once through
the HNSW index (``RECALL_EXACT_SEARCH_MAX_VECTORS`` overridden in this process so the product
code picks each way itself), each timed with its SQL statements counted, after one untimed
warm-up call per mode. Agreement = neighbours both ways found ÷ neighbours the exact scan
found, summed over anchors (the index is approximate; an index probe that comes back short
is searched exactly by the arm itself).

The crossover is the smallest N at which the index's median is below the exact scan's. The
report (commit, corpus digests, configuration, machine load, every sample) is written to
``--report-dir``.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Optional

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from evals.recall import report as rpt
from evals.vector_cache import CachedEncoder, load_vector_cache, save_vector_cache
from evals.reconsolidation.bench_slice import NOW, SEED, Database, build_owner, machine, p95, server_version
from reconsolidation import bounds, grouping
from recall.encoders import load_encoder
from veetbot.rls import owner_context

KIND = "reconsolidation-neighbours"
MODES = {"exact": 10 ** 9, "index": 0}  # RECALL_EXACT_SEARCH_MAX_VECTORS forcing each way


def _call(principal, anchors: list, mode: str) -> tuple[float, int, dict]:
    with override_settings(RECALL_EXACT_SEARCH_MAX_VECTORS=MODES[mode]), owner_context(principal):
        with CaptureQueriesContext(connection) as captured:
            began = time.perf_counter()
            found = {}
            batch = bounds.RECON_NEIGHBOUR_BATCH_ANCHORS  # as grouping asks: a slice's anchors in batches
            for start in range(0, len(anchors), batch):
                found.update(grouping.semantic_neighbours(principal, anchors[start:start + batch], now=NOW))
            elapsed = (time.perf_counter() - began) * 1000
    return elapsed, len(captured.captured_queries), found


def measure_size(principal, ids: list, *, rounds: int, seed: int) -> dict:
    draw = random.Random(seed)
    anchors_per_call = min(bounds.RECON_SLICE_MAX_ANCHORS, len(ids))
    samples = {mode: {"ms": [], "statements": []} for mode in MODES}
    shared = exact_total = 0
    for mode in MODES:  # warm-up: the vector count, plans and pages
        _call(principal, draw.sample(ids, anchors_per_call), mode)
    for _ in range(rounds):
        anchors = draw.sample(ids, anchors_per_call)
        results = {}
        for mode in MODES:
            ms, statements, found = _call(principal, anchors, mode)
            samples[mode]["ms"].append(round(ms, 3))
            samples[mode]["statements"].append(statements)
            results[mode] = found
        for anchor in anchors:
            exact = {row[0] for row in results["exact"].get(anchor, [])}
            shared += len(exact & {row[0] for row in results["index"].get(anchor, [])})
            exact_total += len(exact)
    return {
        "anchors_per_call": anchors_per_call, "rounds": rounds,
        **{mode: {"median_ms": round(statistics.median(s["ms"]), 2), "p95_ms": round(p95(s["ms"]), 2),
                  "statements_max": max(s["statements"])} for mode, s in samples.items()},
        "agreement": round(shared / exact_total, 4) if exact_total else None,
        "exact_neighbours": exact_total, "samples": samples,
    }


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.reconsolidation.bench_neighbours",
                                     description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1000,5000,20000,100000", help="comma-separated N (memories per owner)")
    parser.add_argument("--rounds", type=int, default=10, help="timed calls per mode and size (default 10)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--vector-cache", type=Path, default=None, help="a .npz text -> vector cache (read, extended)")
    parser.add_argument("--report-dir", type=Path, default=Path("evals/reports"))
    args = parser.parse_args(argv)
    try:
        args.sizes = [int(n) for n in args.sizes.split(",")]
    except ValueError:
        parser.error("--sizes must be comma-separated integers")
    if any(n < 2 for n in args.sizes) or args.rounds < 1:
        parser.error("every size must be at least 2 and --rounds at least 1")
    return args


def run(args: argparse.Namespace) -> dict:
    import os
    from django.conf import settings

    code, load_at_start, progress = rpt.code_identity(), os.getloadavg(), rpt.Progress()
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True  # this process only: the arm runs only with it on
    minilm = load_encoder()
    cache = load_vector_cache(args.vector_cache, minilm.tuple.space)
    encoder = CachedEncoder(minilm, cache)
    sizes, corpora = {}, {}
    with Database():
        server = server_version()
        for n in args.sizes:
            principal, corpora[str(n)], ids = build_owner(n, args.seed, progress, encoder)
            save_vector_cache(args.vector_cache, minilm.tuple.space, cache)
            sizes[str(n)] = measure_size(principal, ids, rounds=args.rounds, seed=args.seed)
            rpt.note(f"N={n}: exact median {sizes[str(n)]['exact']['median_ms']} ms, index median "
                     f"{sizes[str(n)]['index']['median_ms']} ms, agreement {sizes[str(n)]['agreement']}")
    crossover = next((int(n) for n, r in sizes.items() if r["index"]["median_ms"] < r["exact"]["median_ms"]), None)
    return {"kind": KIND, "code": code, "configuration": {
        "sizes": args.sizes, "rounds": args.rounds, "seed": args.seed, "encoder_space": minilm.tuple.space,
        "recall_exact_search_max_vectors": settings.RECALL_EXACT_SEARCH_MAX_VECTORS,
        "neighbour_bound": bounds.RECON_GROUP_MAX_MEMBERS - 1,
        "max_distance": str(bounds.RECON_SEMANTIC_NEIGHBOUR_MAX_DISTANCE),
        "machine": machine(load_at_start, server), "texts_encoded": encoder.encoded},
        "corpora": corpora, "sizes": sizes, "crossover_memories": crossover}


def summary(report: dict) -> str:
    rows = [[n, r["anchors_per_call"], r["exact"]["median_ms"], r["exact"]["p95_ms"], r["index"]["median_ms"],
             r["index"]["p95_ms"], r["exact"]["statements_max"], r["index"]["statements_max"], r["agreement"]]
            for n, r in report["sizes"].items()]
    return (rpt.table(["N", "anchors", "exact median ms", "exact p95", "index median ms", "index p95",
                       "exact statements", "index statements", "agreement"], rows)
            + f"\ncrossover (index faster from): {report['crossover_memories']} memories; the product switches "
              f"above {report['configuration']['recall_exact_search_max_vectors']} vectors\n")


def main(argv: Optional[list[str]] = None) -> int:
    rpt.run_command(KIND, parse_args, run, summary, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

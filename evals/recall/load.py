"""Recall latency and exact-vs-HNSW agreement at 100 … 100,000 competing memories per owner.

``python -m evals.recall.load --sizes 100,1000,10000[,100000] --report-dir evals/reports
[--queries 60] [--other-owner-cap 10000] [--vector-cache FILE.npz]``

For each size N:

1. a fresh owner with N memories from ``evals/generate_bank.py`` (seed ``LOAD_SEED``) and a
   second fresh owner with min(N, cap) memories of another seed, so the tables (and the
   HNSW index, which filters owners after the scan) hold other owners' rows; both imported
   through ``memory.bank.memory_bank_import`` (IDs remapped per run);
2. vectors for both through ``recall.backfill.backfill_vectors`` with the real minilm
   encoder behind a content cache: the generator's memory k says the same thing at every
   size, so each distinct memory text is encoded once per run (or once ever with
   ``--vector-cache``) and the stored vectors are the encoder's own; then ANALYZE of the
   tables recall reads, as the import and backfill commands do (``veetbot.statistics``);
3. ``--queries`` deterministic queries (≥ 50) built from the generator's vocabulary, each
   timed once per mode through ``recall.retriever.recall`` at 20 items / 2,000 tokens:
   ``sparse``; ``dense`` and ``hybrid`` *with* query encoding (the query-vector cache is
   cleared before every call, so each call encodes) and *without* (the same calls with
   vectors encoded beforehand); one untimed warm-up pass first; the statements one recall
   sends per channel are counted; then automatic context assembly (``recall.context``) for a
   turn made of each query and for ``REFERENCE_TURNS`` more that name someone by role ("Where
   does my running buddy live now?": round two also searches the reference), each timed with
   its query vectors already in the query-vector cache (an untimed assembly of the same turn
   just before), so encoding is excluded: rounds, searches per assembly and searches by
   purpose are recorded beside its latency;
4. then, in a second pass (its exact scans read every owner vector and would evict the
   originals from the buffer cache between timed recalls), exact vs HNSW top-20, twice: (a) through the retriever with its search mode forced
   (``RECALL_EXACT_SEARCH_MAX_VECTORS`` overridden in this process only) — but the planner
   may still serve its "HNSW mode" without the index (it did at 10,000 per owner), so
   (b) directly in SQL over the owner's ``recall_memoryvector`` rows: exact with
   ``SET LOCAL enable_indexscan = off``, HNSW with the retriever's iterative-scan settings
   and sorts/sequential/bitmap scans disabled so only the HNSW index can supply the order
   (the plan is checked and recorded). Agreement = shared IDs / exact IDs, summed over queries.

The machine's load average is recorded before and after each size: latency on a shared
2-core machine means little without it.
"""
from __future__ import annotations

import argparse
import io
import os
import random
import re
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional, Sequence

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.generate_bank import Plan, Slots, write
from evals.recall import report as rpt
from evals.vector_cache import CachedEncoder, load_vector_cache, save_vector_cache
from memory.bank import memory_bank_import
from memory.services import owner_create
from recall import encoders, query_cache, query_text, retriever
from recall.arms.permitted import arm_limit
from recall.arms.semantic import search_depth
from recall.backfill import backfill_vectors
from recall.context import planner
from recall.context.former import ContextNeed
from recall.domain import RecallRequest
from veetbot import statistics
from veetbot.identity import Principal
from veetbot.rls import owner_context

KIND = "recall-load"
# bench_slice's seed and session size: the same generated bank, so one --vector-cache serves
# both benchmarks (the main owner's 100,000 texts are encoded once).
LOAD_SEED = 11
OTHER_SEED = 12
PER_SESSION = 50
MAX_ITEMS = 20
MAX_TOKENS = 2000
CEILING = "restricted"
TOP_K = 20
NAMESPACE = uuid.UUID("a5d4f3c2-1b0a-5e9f-8d7c-6b5a4f3e2d1c")
RECALL_NOW = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)  # after every generated session
QUERY_TEMPLATES = (
    "What do I like to drink {drink_context}?",
    "Where do I go for {dish}?",
    "Which food should never be in my {dishtype}?",
    "What app do I use for {task}?",
    "When do I {exercise_1p}?",
    "Who do I call on {weekday}s?",
    "How much can I spend on {purchase}?",
    "Where is my {document}?",
    "What is my {language} level?",
    "What did we decide for {project}?",
    "When is the deadline for {project}?",
    "How do I know {person}?",
    "Where does {person} live now?",
    "What am I allergic to?",
    "When is my next {appointment_short}?",
    "How long is my commute?",
    "What subscription do I pay for {service}?",
    "What am I saving money for?",
    "What trips do I have planned to {city}?",
    "When did I buy the {appliance}?",
)
EXTRA_SLOTS = {"appointment_short": ("dentist appointment", "haircut", "physio session", "eye test", "blood test")}
# Turns that name someone by role, as the generator's relationship beliefs do ("{person} is
# the owner's {relation}"): context assembly also searches such a reference on its own, so
# these turns time its longest assemblies (round one, a reference search, the entity search).
# Timed for context assembly only, after a turn per query above.
REFERENCE_TEMPLATES = (
    "What does my {relation} do for a living?",
    "Where does my {relation} live now?",
    "When did I last see my {relation}?",
    "What did I borrow from my {relation}?",
)
REFERENCE_TURNS = 20


class PreEncoded:
    """Vectors computed before timing: encoding costs nothing inside the timed call."""

    def __init__(self, tuple_, vectors: dict[str, list[float]]) -> None:
        self.tuple = tuple_
        self.vectors = vectors

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(self.vectors[t]) for t in texts]


DIRECT_TOP_K = """
    WITH nearest AS MATERIALIZED (
        SELECT memory_id, embedding <=> %(vector)s::vector AS distance
        FROM recall_memoryvector
        WHERE tenant_id = %(tenant_id)s AND principal_id = %(principal_id)s AND space = %(space)s
        ORDER BY embedding <=> %(vector)s::vector
        LIMIT %(k)s
    )
    SELECT memory_id, distance FROM nearest ORDER BY distance + 0, memory_id
"""  # "+ 0": an iterative (relaxed-order) HNSW scan's rows must really be re-sorted (recall.arms.semantic)
TIE_EPSILON = 1e-6  # cosine distance: HNSW results this close to the exact 20th count as ties
HNSW_INDEX = "memoryvector_embedding_hnsw"


def direct_top_k(principal, space: str, vector: Sequence[float], *, hnsw: bool, depth: int = TOP_K,
                 explain: bool = False):
    """(top-20 (ID, distance) pairs, milliseconds, plan text or None) of the owner's nearest
    vectors, exact or HNSW only, searched ``depth`` deep (as the retriever searches its arm
    limit deep, then sorts)."""
    from django.conf import settings
    from django.db import connection


    params = {"vector": "[" + ",".join(repr(float(x)) for x in vector) + "]", "tenant_id": principal.tenant_id,
              "principal_id": principal.principal_id, "space": space, "k": depth}
    with owner_context(principal):
        with connection.cursor() as cursor:
            if hnsw:
                cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                cursor.execute(f"SET LOCAL hnsw.ef_search = {int(settings.RECALL_HNSW_EF_SEARCH)}")
                cursor.execute(f"SET LOCAL hnsw.max_scan_tuples = {int(settings.RECALL_HNSW_MAX_SCAN_TUPLES)}")
                for switch in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
                    cursor.execute(f"SET LOCAL {switch} = off")
            else:
                cursor.execute("SET LOCAL enable_indexscan = off")
            plan = None
            if explain:
                cursor.execute("EXPLAIN " + DIRECT_TOP_K, params)
                plan = "\n".join(re.sub(r"'\[[-0-9.e,]+\]'", "'[query vector]'", row[0]) for row in cursor.fetchall())
            began = time.perf_counter()
            cursor.execute(DIRECT_TOP_K, params)
            ids = [(str(row[0]), float(row[1])) for row in cursor.fetchall()][:TOP_K]
            elapsed = (time.perf_counter() - began) * 1000
    return ids, elapsed, plan


def statements_per_recall(call) -> int:
    """How many SQL statements one call sends (round trips besides BEGIN/COMMIT)."""
    from django.db import connection

    sent = []
    with connection.execute_wrapper(lambda execute, *args: sent.append(1) or execute(*args)):
        call()
    return len(sent)


def make_queries(count: int, seed: int = LOAD_SEED, templates: Sequence[str] = QUERY_TEMPLATES) -> list[str]:

    rng = random.Random(seed)
    queries: list[str] = []
    attempts = 0
    while len(queries) < count and attempts < count * 50:
        template = templates[attempts % len(templates)]
        attempts += 1
        slots = Slots(rng)
        for name, values in EXTRA_SLOTS.items():
            slots[name] = rng.choice(values)
        query = template.format_map(slots)
        if query not in queries:
            queries.append(query)
    return queries


def bank_document(memories: int, seed: int) -> str:

    with tempfile.TemporaryDirectory() as spool:
        handle = io.StringIO()
        write(Plan(memories, seed, PER_SESSION), handle, Path(spool))
    return handle.getvalue()


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.recall.load", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--report-dir", type=Path, default=Path("evals/reports"))
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--other-owner-cap", type=int, default=10000,
                        help="memories of the second owner: min(size, cap)")
    parser.add_argument("--vector-cache", type=Path, default=None,
                        help="an .npz of memory-text vectors to reuse across runs (read and extended)")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch intra-op threads for the local encoder (default: torch's own choice)")
    args = parser.parse_args(argv)
    try:
        args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error("--sizes must be comma-separated integers")
    if not args.sizes or min(args.sizes) < 1:
        parser.error("--sizes must be positive")
    if args.queries < 50:
        parser.error("--queries must be at least 50")
    return args


def run(args: argparse.Namespace) -> dict:
    rpt.setup_django()
    threads = rpt.torch_threads(args.torch_threads)
    code = rpt.code_identity()
    rpt.enable_semantic()
    from django.conf import settings


    started_at = datetime.now(timezone.utc)
    minilm = encoders.load_encoder("minilm")
    space = minilm.tuple.space
    cache = load_vector_cache(args.vector_cache, space)
    cached_at_start = len(cache)
    encoder = CachedEncoder(minilm, cache)
    queries = make_queries(args.queries)
    began = time.perf_counter()
    texts = sorted({text for q in queries for text in query_text.texts(q)})
    query_vectors = dict(zip(texts, minilm.encode(texts)))
    batch_query_encode_ms = (time.perf_counter() - began) * 1000
    pre = PreEncoded(minilm.tuple, query_vectors)
    # The vector each query is recalled with (recall.query_text), for the direct SQL comparison.
    recall_vectors = {q: query_text.combine([query_vectors[t] for t in query_text.texts(q)]) for q in queries}
    progress = rpt.Progress()
    cache_obj = query_cache.default_cache()

    def owner(label: str, memories: int, seed: int) -> tuple[Principal, dict]:
        created = owner_create(display_name=f"recall load {label} {started_at:%Y-%m-%dT%H:%M:%SZ}", now=RECALL_NOW)
        principal = Principal(tenant_id=created.tenant_id, principal_id=created.principal_id)
        remap_text, _, _ = rpt.remapper(uuid.uuid5(NAMESPACE, f"run:{principal.principal_id}"))
        t0 = time.perf_counter()
        text = remap_text(bank_document(memories, seed))
        generate_s = time.perf_counter() - t0
        counts = memory_bank_import(principal=principal, data=text.encode(), now=RECALL_NOW,
                                    progress=lambda s, d, t: progress(f"{label} import {s}", d, t))
        progress.close()
        del text
        encoded_before = encoder.encoded
        report = backfill_vectors(principal=principal, encoder=encoder,
                                  progress=lambda s, d, t: progress(f"{label} backfill", d, t))
        progress.close()
        rpt.note(f"{label}: owner {principal.label}, {counts.memories} memories imported in {counts.seconds:.1f} s, "
                 f"{report.embedded} vectors in {report.seconds:.1f} s ({encoder.encoded - encoded_before} encoded)")
        return principal, {"owner": principal.label, "memories": memories, "seed": seed,
                           "generate_seconds": round(generate_s, 2), "import": counts.model_dump(),
                           "backfill": report.summary(), "texts_encoded": encoder.encoded - encoded_before}

    def timed(principal, query: str, channel: str, enc, *, max_vectors: Optional[int] = None):
        saved = settings.RECALL_EXACT_SEARCH_MAX_VECTORS
        if max_vectors is not None:
            settings.RECALL_EXACT_SEARCH_MAX_VECTORS = max_vectors
        try:
            cache_obj.clear()  # every call prepares its own query vector (encoding or lookup)
            request = RecallRequest(query=query, ceiling=CEILING, max_items=MAX_ITEMS, max_tokens=MAX_TOKENS,
                                    channel=channel)
            t0 = time.perf_counter()
            result = retriever.recall(principal=principal, request=request, surface="eval", encoder=enc,
                                      now=RECALL_NOW)
            elapsed = (time.perf_counter() - t0) * 1000
        finally:
            settings.RECALL_EXACT_SEARCH_MAX_VECTORS = saved
        if result.channel != channel:
            raise RuntimeError(f"{channel} fell back to {result.channel} ({result.fallback_reason})")
        return elapsed, result

    sizes = []
    for size in args.sizes:
        load_before = os.getloadavg()
        principal, main_owner = owner(f"{size}", size, LOAD_SEED)
        _, other_owner = owner(f"{size}-other", min(size, args.other_owner_cap), OTHER_SEED)
        analyzed_s = statistics.analyze(statistics.ORIGINALS + statistics.VECTORS)  # steady state, as after an import
        modes = {"sparse": [], "dense+encode": [], "dense": [], "hybrid+encode": [], "hybrid": [],
                 "dense exact": [], "dense hnsw": [], "sql exact": [], "sql hnsw": [], "sql hnsw deep": []}
        agreement_hits = agreement_total = 0
        per_query_agreement = []
        direct_hits = direct_total = deep_hits = within_hits = 0
        direct_per_query = []
        depth = search_depth(arm_limit(MAX_ITEMS))  # as deep as the retriever's index search walks
        _, _, exact_plan = direct_top_k(principal, space, recall_vectors[queries[0]], hnsw=False, explain=True)
        _, _, hnsw_plan = direct_top_k(principal, space, recall_vectors[queries[0]], hnsw=True, explain=True)
        for query in queries[:5]:  # warm-up, untimed
            timed(principal, query, "sparse", pre)
            timed(principal, query, "hybrid", pre)
        # Pass 1, the production modes only. The comparisons of pass 2 scan every owner
        # vector (exact search): interleaved, they evicted the originals from PostgreSQL's
        # buffer cache before each timed recall, a cost no production recall pays.
        for n, query in enumerate(queries):
            modes["sparse"].append(timed(principal, query, "sparse", pre)[0])
            modes["dense+encode"].append(timed(principal, query, "dense", minilm)[0])
            modes["dense"].append(timed(principal, query, "dense", pre)[0])
            modes["hybrid+encode"].append(timed(principal, query, "hybrid", minilm)[0])
            modes["hybrid"].append(timed(principal, query, "hybrid", pre)[0])
            progress(f"{size} timed queries", n + 1, len(queries))
        progress.close()
        statements = {channel: statements_per_recall(lambda: timed(principal, queries[0], channel, pre))
                      for channel in ("sparse", "dense", "hybrid")}
        modes["context"], context_rounds, context_searches, purposes = [], [], [], {}
        turns = queries + make_queries(REFERENCE_TURNS, templates=REFERENCE_TEMPLATES)
        for n, query in enumerate(turns):
            need = ContextNeed(current_message=query)
            assemble = lambda: planner.assemble(principal, need, filters={"ceiling": CEILING}, max_items=MAX_ITEMS,
                                                max_tokens=MAX_TOKENS, now=RECALL_NOW, encoder=minilm)  # noqa: E731
            assemble()  # warms the query-vector cache with every query this turn forms
            t0 = time.perf_counter()
            assembled = assemble()
            modes["context"].append((time.perf_counter() - t0) * 1000)
            context_rounds.append(assembled.rounds)
            context_searches.append(len(assembled.searches))
            for search in assembled.searches:
                purposes[search.purpose] = purposes.get(search.purpose, 0) + 1
            progress(f"{size} context assembly", n + 1, len(turns))
        progress.close()
        # Pass 2, exact vs HNSW.
        for n, query in enumerate(queries):
            exact_ms, exact = timed(principal, query, "dense", pre, max_vectors=10 ** 9)
            hnsw_ms, hnsw = timed(principal, query, "dense", pre, max_vectors=0)
            modes["dense exact"].append(exact_ms)
            modes["dense hnsw"].append(hnsw_ms)
            top_exact, top_hnsw = exact.stages.dense_ids[:TOP_K], hnsw.stages.dense_ids[:TOP_K]
            hits = len(set(top_exact) & set(top_hnsw))
            agreement_hits += hits
            agreement_total += len(top_exact)
            per_query_agreement.append(hits / len(top_exact) if top_exact else None)
            exact_found, exact_sql_ms, _ = direct_top_k(principal, space, recall_vectors[query], hnsw=False)
            hnsw_found, hnsw_sql_ms, _ = direct_top_k(principal, space, recall_vectors[query], hnsw=True)
            exact_ids, hnsw_ids = [i for i, _ in exact_found], [i for i, _ in hnsw_found]
            radius = exact_found[-1][1] + TIE_EPSILON if exact_found else None
            within_hits += sum(1 for _, d in hnsw_found if radius is not None and d <= radius)
            modes["sql exact"].append(exact_sql_ms)
            modes["sql hnsw"].append(hnsw_sql_ms)
            deep_found, deep_ms, _ = direct_top_k(principal, space, recall_vectors[query], hnsw=True, depth=depth)
            modes["sql hnsw deep"].append(deep_ms)
            deep_hits += len(set(exact_ids) & {i for i, _ in deep_found})
            shared = len(set(exact_ids) & set(hnsw_ids))
            direct_hits += shared
            direct_total += len(exact_ids)
            direct_per_query.append(shared / len(exact_ids) if exact_ids else None)
            progress(f"{size} exact vs hnsw", n + 1, len(queries))
        progress.close()
        sizes.append({
            "size": size,
            "owner": main_owner,
            "other_owner": other_owner,
            "default_semantic_search": "exact" if main_owner["backfill"]["embedded"] <= settings.RECALL_EXACT_SEARCH_MAX_VECTORS
            else "hnsw",
            "latency_ms": {mode: rpt.latency_stats(values) for mode, values in modes.items()},
            "statements_per_recall": statements,
            "context_assembly": {"two_round_assemblies": sum(1 for r in context_rounds if r == 2),
                                 "reference_turns": REFERENCE_TURNS, "searches_by_purpose": purposes,
                                 "assemblies": len(context_rounds),
                                 "searches_per_assembly": rpt.latency_stats([float(x) for x in context_searches]),
                                 # the same timings split by how many rounds the assembly ran
                                 "latency_ms_by_rounds": {
                                     str(rounds): rpt.latency_stats([ms for ms, r in zip(modes["context"], context_rounds)
                                                                     if r == rounds])
                                     for rounds in sorted(set(context_rounds))}},
            "analyze_seconds": analyzed_s,
            "exact_vs_hnsw": {
                "top_k": TOP_K,
                "retriever_modes": {
                    "agreement": rpt_ratio(agreement_hits, agreement_total),
                    "shared": agreement_hits, "compared": agreement_total,
                    "queries_below_0.9": sum(1 for a in per_query_agreement if a is not None and a < 0.9),
                    "min": min((a for a in per_query_agreement if a is not None), default=None),
                },
                "direct_sql": {
                    "agreement": rpt_ratio(direct_hits, direct_total),
                    "shared": direct_hits, "compared": direct_total,
                    "queries_below_0.9": sum(1 for a in direct_per_query if a is not None and a < 0.9),
                    "min": min((a for a in direct_per_query if a is not None), default=None),
                    "depth_agreement": rpt_ratio(deep_hits, direct_total),
                    # Synthetic banks repeat near-identical statements: an HNSW result at the
                    # exact 20th distance or nearer is as good as the exact one it replaced.
                    "within_exact_radius": rpt_ratio(within_hits, direct_total),
                    "depth": depth,
                    "hnsw_plan_uses_index": HNSW_INDEX in (hnsw_plan or ""),
                    "exact_plan_uses_hnsw_index": HNSW_INDEX in (exact_plan or ""),
                    "hnsw_plan": hnsw_plan, "exact_plan": exact_plan,
                },
            },
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        })
        save_vector_cache(args.vector_cache, space, cache)

    return {
        "kind": KIND,
        "created_at": started_at.isoformat(),
        "code": code,
        "command": "python -m evals.recall.load " + " ".join(sys.argv[1:]),
        "configuration": {
            "sizes": args.sizes, "queries": len(queries), "other_owner_cap": args.other_owner_cap,
            "generator": "evals/generate_bank.py", "seeds": [LOAD_SEED, OTHER_SEED], "per_session": PER_SESSION,
            "max_items": MAX_ITEMS, "max_tokens": MAX_TOKENS, "ceiling": CEILING, **rpt.fusion_configuration(),
            "encoder": minilm.tuple.model_dump() | {"space": space},
            "exact_search_max_vectors": settings.RECALL_EXACT_SEARCH_MAX_VECTORS,
            "hnsw_ef_search": settings.RECALL_HNSW_EF_SEARCH, "hnsw_search_depth": settings.RECALL_HNSW_SEARCH_DEPTH,
            "hnsw_max_scan_tuples": settings.RECALL_HNSW_MAX_SCAN_TUPLES,
            "vector_cache": str(args.vector_cache) if args.vector_cache else None,
            "vector_cache_entries_at_start": cached_at_start,
            "cpu_count": os.cpu_count(),
            "torch_threads": threads,
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "queries": queries,
        "batch_query_encode_ms": round(batch_query_encode_ms, 1),
        "sizes": sizes,
    }


def rpt_ratio(a: int, b: int) -> Optional[float]:
    return None if b == 0 else round(a / b, 4)


def summary(report: dict) -> str:
    rows = []
    for entry in report["sizes"]:
        lat = entry["latency_ms"]
        modes = entry["exact_vs_hnsw"]["retriever_modes"]["agreement"]
        direct = entry["exact_vs_hnsw"]["direct_sql"]
        rows.append([entry["size"], entry["other_owner"]["memories"], entry["default_semantic_search"],
                     *(f"{lat[m]['p50']}/{lat[m]['p95']}" for m in
                       ("sparse", "dense", "dense+encode", "hybrid", "hybrid+encode", "dense exact", "dense hnsw",
                        "sql exact", "sql hnsw")),
                     "—" if modes is None else f"{100 * modes:.1f}",
                     "—" if direct["agreement"] is None else f"{100 * direct['agreement']:.1f}"
                     + ("" if direct["hnsw_plan_uses_index"] else " (no index!)"),
                     "—" if direct.get("depth_agreement") is None else f"{100 * direct['depth_agreement']:.1f}",
                     "—" if direct.get("within_exact_radius") is None else f"{100 * direct['within_exact_radius']:.1f}",
                     "/".join(str(entry.get("statements_per_recall", {}).get(c, "—")) for c in ("sparse", "dense", "hybrid")),
                     "/".join(f"{x:.1f}" for x in entry["load_average_before"][:1] + entry["load_average_after"][:1])])
    return ("recall latency p50/p95 ms (20 items / 2,000 tokens), "
            f"{report['configuration']['queries']} queries per size; dense/hybrid without +enc use pre-encoded "
            "queries; 'dense exact/hnsw' = retriever with its search mode forced; 'sql' = direct top-20\n" + rpt.table(
                ["size", "other", "default", "sparse", "dense", "dense+enc", "hybrid", "hybrid+enc", "dense exact",
                 "dense hnsw", "sql exact", "sql hnsw", "modes ∩@20 %", "sql ∩@20 %", "sql ∩@20 (160 deep) %",
                 "hnsw ≤ exact r20 %", "statements s/d/h", "load"], rows) + "".join(_context_lines(report)))


def _context_lines(report: dict) -> list[str]:
    """Per size: how many context assemblies ran two rounds, and their latency by rounds."""
    lines = []
    for entry in report["sizes"]:
        assembly = entry.get("context_assembly")
        if not assembly:
            continue
        by_rounds = assembly.get("latency_ms_by_rounds", {})
        lines.append(f"\ncontext assembly at {entry['size']}: {assembly['two_round_assemblies']}/{assembly['assemblies']} "
                     "ran two rounds; p50/p95 ms without encoding by rounds: "
                     + (", ".join(f"{r} round{'s' if r != '1' else ''} {v['p50']}/{v['p95']} (n {v['n']})"
                                  for r, v in by_rounds.items()) or "—"))
    return lines


def main(argv: Optional[list[str]] = None) -> int:
    rpt.run_command(KIND, parse_args, run, summary, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

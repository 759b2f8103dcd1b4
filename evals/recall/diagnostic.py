"""Run the recall diagnostic corpus through the real import, backfill and retriever; score stages.

``python -m evals.recall.diagnostic --noise 1000 --split development|holdout|all
--channels sparse,dense,hybrid,context,context-task,context-sparse [--source-excerpts] --report-dir evals/reports``

1. A fresh scratch owner in the configured database (its ID is printed; it is left in place
   unless ``--erase-after``).
2. The committed ``diagnostic/bank.json`` plus ``--noise N`` memories from
   ``evals/generate_bank.py`` (generated now, never stored), every UUID remapped per run
   (IDs are primary keys across owners), imported through ``memory.bank.memory_bank_import``
   at the corpus clock (``RECALL_NOW``).
3. Vectors backfilled with the real minilm encoder (``recall.backfill.backfill_vectors``),
   when a semantic channel is asked for; AGENT_MEMORY_SEMANTIC_ENABLED is switched on in
   this process only.
4. Every need of the split through ``recall.retriever.recall`` once per channel (and once
   more per ``--floor-sweep`` value of RECALL_RELEVANCE_SIMILARITY_MARGIN), forcing the
   channel with ``RecallRequest.channel``, at the same budget (default 20 items / 2,000
   tokens). The retriever gets the query text, the ceiling and ``as_of`` — nothing else.
   ``context`` answers the need the other way: its task-context form (current message, task,
   active entities) through ``recall.context.planner.assemble`` — at most 4 searches in 2
   rounds under the deadline and the same shared allowance — scored on the union of its
   searches' candidates and ranked originals and on what it rendered.
   ``--source-excerpts`` runs every asked channel twice: as configured and as
   ``<channel>+excerpts`` with RECALL_SOURCE_EXCERPTS_ENABLED on (``recall.excerpts``; the
   ceiling here is restricted, so current needs may carry the owner's own words, historical
   ones never), in the same process over the same bank, so the two are paired.
5. ``evals.recall.scoring`` over the observed ``RecallResult.stages`` — recall per stage,
   and rendered precision with unrelated rendered items beside it; a JSON report (never
   overwriting) and a summary table on stdout.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.recall import make_diagnostic as corpus
from evals.recall import report as rpt
from evals.vector_cache import CachedEncoder, load_vector_cache, save_vector_cache
from evals.recall.scoring import TOP_K, NeedLabel, Observation, need_outcome, score
from memory.bank import memory_bank_import
from memory.services import owner_create, principal_erase
from recall import encoders, policy, retriever
from recall.arms import permitted
from recall.backfill import backfill_vectors
from recall.context import planner
from recall.context.former import ContextNeed
from recall.domain import RecallRequest
from reconsolidation import bounds, driver
from reconsolidation.errors import Conflict, StaleInputs
from reconsolidation.models import ReconsolidationOperation
from reconsolidation.services.operations import operation_approve, operation_reject
from reconsolidation.store import ReconsolidationStore
from veetbot.identity import Principal
from veetbot.rls import owner_context

# "context": automatic context assembly (recall.context.planner) from the need's task-context
# form, on the configured channel (hybrid with semantic recall on), scored like a channel;
# "context-task": the same with ADR-0193's default-off task-context query switched on;
# "context-sparse": the same keyword-only, as a deployment without semantic recall assembles.
# arm -> (RECALL_CONTEXT_TASK_QUERY, the channel every search is given; None: the configured)
CONTEXT_ARMS = {"context": (False, None), "context-task": (True, None), "context-sparse": (False, "sparse")}
CHANNELS = ("sparse", "dense", "hybrid", *CONTEXT_ARMS)
EXCERPT_ARM = "+excerpts"  # the suffix of a channel's twin run with source excerpts on (--source-excerpts)


def base_channel(arm: str) -> str:
    """The channel an arm runs (``hybrid+excerpts`` runs hybrid)."""
    return arm.removesuffix(EXCERPT_ARM)
SPLITS = ("development", "holdout", "all")
CEILING = "restricted"
KIND = "recall-diagnostic"


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.recall.diagnostic", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--noise", type=int, default=1000, help="generated distractor memories to add (default 1000)")
    parser.add_argument("--split", choices=SPLITS, default="all")
    parser.add_argument("--channels", default="sparse,dense,hybrid,context",
                        help="comma-separated subset of sparse,dense,hybrid,context,context-task,context-sparse "
                             "(context: automatic context assembly from each need's task-context form; "
                             "context-task: the same with the task-context query on; context-sparse: the same "
                             "keyword-only)")
    parser.add_argument("--report-dir", type=Path, default=Path("evals/reports"))
    parser.add_argument("--max-items", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=2000)
    parser.add_argument("--needs-per-family", type=int, default=None,
                        help="only the first N needs of each family (a quick smoke run; not a result)")
    parser.add_argument("--erase-after", action="store_true",
                        help="erase the scratch owner's bank when done (its IDs stay tombstoned)")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch intra-op threads for the local encoder (default: torch's own choice)")
    parser.add_argument("--floor-sweep", default="",
                        help="comma-separated RECALL_RELEVANCE_SIMILARITY_MARGIN values: every need is recalled "
                             "once per value (the main run uses the configured value) and the report adds the "
                             "curve (calibration; run it on the development split only)")
    parser.add_argument("--vector-cache", type=Path, default=None,
                        help="a .npz text -> vector cache for the bank's vectors (read, then extended), so a run "
                             "with a large --noise does not spend its time encoding; queries are always encoded")
    parser.add_argument("--source-excerpts", action="store_true",
                        help="also run every channel as <channel>+excerpts with RECALL_SOURCE_EXCERPTS_ENABLED on "
                             "(rendered recall and rendered tokens are reported per arm and split)")
    parser.add_argument("--approved-updates", action="store_true",
                        help="before recalling, dream over the bank (rules provider, reviewed mode) and decide "
                             "every update it proposes (end_superseded: a later statement ended an earlier one) as "
                             "an owner who knows their own life: approved when the corpus says it is a real update, "
                             "rejected otherwise; nothing else is decided")
    args = parser.parse_args(argv)
    try:
        args.floor_sweep = [float(v) for v in args.floor_sweep.split(",") if v.strip()]
    except ValueError:
        parser.error("--floor-sweep must be comma-separated numbers")
    channels = [c.strip() for c in args.channels.split(",") if c.strip()]
    if not channels or any(c not in CHANNELS for c in channels) or len(set(channels)) != len(channels):
        parser.error("--channels must be a comma-separated subset of " + ",".join(CHANNELS))
    if args.noise < 0:
        parser.error("--noise must not be negative")
    args.channels = channels + ([c + EXCERPT_ARM for c in channels] if args.source_excerpts else [])
    return args


def load_needs(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode().splitlines() if line.strip()]


def corpus_digest(bank: bytes, needs: bytes, noise: dict) -> str:
    digest = hashlib.sha256()
    for part in (bank, needs, json.dumps(noise, sort_keys=True).encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def noise_parameters(count: int) -> dict:
    generator = rpt.REPO / "evals" / "generate_bank.py"
    return {"count": count, "seed": corpus.NOISE_SEED, "per_session": corpus.NOISE_PER_SESSION,
            "generator": "evals/generate_bank.py",
            "generator_sha256": hashlib.sha256(generator.read_bytes()).hexdigest()}


def merged_document(bank: bytes, noise_count: int) -> dict:
    document = json.loads(bank)
    if noise_count:
        noise = corpus.noise_document(noise_count)
        for name in ("people", "sessions", "events", "memories"):
            document[name].extend(noise[name])
    return document


def lexical_overlap(needs: list[dict], memories: dict[str, dict]) -> dict[str, str]:
    """Per need: does any query lexeme (PostgreSQL 'english', as the lexical arm sees it) occur
    in its evidence text? "none" needs can only be found by meaning."""
    from django.db import connection

    tags: dict[str, str] = {}
    with connection.cursor() as cursor:
        for need in needs:
            if not need["required_evidence"]:
                tags[need["id"]] = "unanswerable"
                continue
            text = " ".join(f"{memories[i]['subject']} {memories[i]['statement']}" for i in need["required_evidence"])
            cursor.execute(
                "SELECT tsvector_to_array(to_tsvector('english', %s)) && tsvector_to_array(to_tsvector('english', %s))",
                [need["query"], text])
            tags[need["id"]] = "some" if cursor.fetchone()[0] else "none"
    return tags


def true_updates(needs: list[dict], new_id) -> set[tuple[str, str]]:
    """(earlier belief, the statement that ended it) pairs the corpus says are real updates:
    a need whose required evidence is the newer statement and whose invalid evidence is the
    older one, as stored (``new_id`` maps corpus IDs to this run's)."""
    return {(str(new_id(old)), str(new_id(current))) for n in needs
            for old in n["invalid"] for current in n["required_evidence"]}


def approve_updates(principal: Principal, now: datetime, correct: set[tuple[str, str]]) -> dict:
    """Dream until idle at ``now`` and decide every update proposed as an owner who knows
    their own life: approve it when the corpus says the later statement really ended the
    earlier one (``correct``), reject it otherwise — the diagnostic bank holds several
    parallel lineages of one holder ("my job now" six times over), so the rules also pair
    statements of different lineages, which an owner would refuse. Repeated while a pass
    decides something (an approval changes a belief, which can invalidate other pending
    updates of it; the next pass proposes again what still applies). The queue bound is
    lifted for this run only: the question here is what approved updates do to recall."""
    from django.test import override_settings

    dreaming = {"AGENT_MEMORY_RECONSOLIDATION_ENABLED": True, "AGENT_MEMORY_RECONSOLIDATION_MODE": "reviewed",
                "AGENT_MEMORY_RECONSOLIDATION_PROVIDER": "rules"}
    decided = {"approved": 0, "rejected": 0, "invalidated_before_decision": 0}
    passes, kept_bound = 0, bounds.RECON_REVIEW_QUEUE_MAX
    bounds.RECON_REVIEW_QUEUE_MAX = 10 ** 6
    try:
        with override_settings(**dreaming):
            while True:
                passes += 1
                driver.run_until_idle(principal, lease_owner="diagnostic", store=ReconsolidationStore(clock=lambda: now),
                                      now=now, monotonic=lambda: 0.0)
                with owner_context(principal):
                    pending = list(ReconsolidationOperation.objects.filter(kind="end_superseded", state="proposed")
                                   .values_list("id", "revision", "clause_sources"))
                before = decided["approved"] + decided["rejected"]
                for operation_id, revision, (old_ids, (new_id,)) in pending:
                    real = all((str(old), str(new_id)) in correct for old in old_ids)
                    act = operation_approve if real else operation_reject
                    try:
                        act(principal=principal, operation_id=operation_id, expected_revision=revision,
                            idempotency_key=f"diagnostic-update-{operation_id}", now=now)
                    except (Conflict, StaleInputs):
                        # a decision just before changed one of this update's inputs, which
                        # invalidated it; the next pass proposes again what still applies
                        decided["invalidated_before_decision"] += 1
                        continue
                    decided["approved" if real else "rejected"] += 1
                if decided["approved"] + decided["rejected"] == before:  # nothing more to decide
                    break
    finally:
        bounds.RECON_REVIEW_QUEUE_MAX = kept_bound
    return {**decided, "dream_passes": passes}


def run(args: argparse.Namespace) -> dict:
    rpt.setup_django()
    threads = rpt.torch_threads(args.torch_threads)
    code = rpt.code_identity()
    from django.conf import settings
    from django.test import override_settings


    semantic = any(base_channel(c) not in ("sparse", "context-sparse") for c in args.channels)
    if semantic:
        rpt.enable_semantic()
    configured_floor = settings.RECALL_RELEVANCE_SIMILARITY_MARGIN

    bank_bytes, needs_bytes = corpus.BANK_PATH.read_bytes(), corpus.NEEDS_PATH.read_bytes()
    fresh_bank, fresh_needs = corpus.render()
    noise = noise_parameters(args.noise)
    all_needs = load_needs(needs_bytes)
    needs = [n for n in all_needs if args.split == "all" or n["split"] == args.split]
    if args.needs_per_family:
        kept: list[dict] = []
        for family in corpus.FAMILIES:
            kept += [n for n in needs if n["family"] == family][: args.needs_per_family]
        needs = kept
    started_at = datetime.now(timezone.utc)

    owner = owner_create(display_name=f"recall diagnostic {started_at:%Y-%m-%dT%H:%M:%SZ}", now=corpus.RECALL_NOW)
    principal = Principal(tenant_id=owner.tenant_id, principal_id=owner.principal_id)
    rpt.note(f"scratch owner {principal.label}")

    remap_text, new_id, inverse = rpt.remapper(uuid.uuid5(corpus.NAMESPACE, f"run:{principal.principal_id}"))
    document = merged_document(bank_bytes, args.noise)
    memories_by_id = {m["id"]: m for m in document["memories"]}
    data = remap_text(json.dumps(document, ensure_ascii=False, separators=(",", ":"))).encode()
    progress = rpt.Progress()
    counts = memory_bank_import(principal=principal, data=data, now=corpus.RECALL_NOW,
                                progress=lambda stage, done, total: progress(f"import {stage}", done, total))
    progress.close()
    rpt.note(f"imported {counts.memories} memories ({counts.events} events) in {counts.seconds:.1f} s")

    encoder = None
    backfill = None
    if semantic:
        encoder = encoders.load_encoder("minilm")
        # The bank's vectors may come from --vector-cache (the encoder's own vectors, stored);
        # queries are always encoded by the encoder itself, so latency with encoding stays true.
        cache = load_vector_cache(args.vector_cache, encoder.tuple.space)
        report = backfill_vectors(principal=principal, encoder=CachedEncoder(encoder, cache),
                                  progress=lambda stage, done, total: progress("backfill", done, total))
        progress.close()
        save_vector_cache(args.vector_cache, encoder.tuple.space, cache)
        backfill = report.summary()
        rpt.note(f"backfilled {report.embedded} vectors in {report.seconds:.1f} s")

    updates = (approve_updates(principal, corpus.RECALL_NOW, true_updates(all_needs, new_id))
               if args.approved_updates else None)

    overlap = lexical_overlap(needs, memories_by_id)
    labels = [NeedLabel(
        id=n["id"], required=tuple(n["required_evidence"]), distractors=tuple(n["distractors"]),
        invalid=tuple(n["invalid"]),
        tags={"family": n["family"], "split": n["split"], "kind": n["kind"], "lexical_overlap": overlap[n["id"]],
              "family_split": f"{n['family']} / {n['split']}"},
    ) for n in needs]
    label_by_id = {label.id: label for label in labels}

    def back(ids) -> tuple[str, ...]:
        return tuple(inverse.get(str(i), str(i)) for i in ids)

    rounds: dict[str, int] = {}  # context assemblies by rounds run and what stopped them
    # arm -> per need: (split, rendered tokens, excerpts rendered, items carrying one)
    rendering: dict[str, list[tuple[str, int, int, int]]] = {}

    search_encoder = encoder if encoder is not None else retriever.DEFAULT_ENCODER

    def as_of_of(need: dict) -> Optional[datetime]:
        return datetime.fromisoformat(need["as_of"]) if need.get("as_of") else None

    def assemble(need: dict, arm: str) -> tuple[Observation, float]:
        form = need["context"]
        context_need = ContextNeed(current_message=form["current_message"], task=form.get("task"),
                                   active_entities=tuple(remap_text(e) for e in form.get("active_entities", ())))
        began = time.perf_counter()
        task_query, channel = CONTEXT_ARMS[base_channel(arm)]
        filters = {"ceiling": CEILING, "as_of": as_of_of(need), **({"channel": channel} if channel else {})}
        with override_settings(RECALL_CONTEXT_TASK_QUERY=task_query):
            result = planner.assemble(principal, context_need, filters=filters,
                                      max_items=args.max_items, max_tokens=args.max_tokens, now=corpus.RECALL_NOW,
                                      encoder=search_encoder)
        elapsed = (time.perf_counter() - began) * 1000
        record_rendering(arm, need, result.tokens, result.items)
        key = f"{arm}: {result.rounds} round(s)" + (f", stopped by {result.stopped}" if result.stopped else "")
        rounds[key] = rounds.get(key, 0) + 1
        fell_back = next((s for s in result.searches if s.fallback_reason), None)
        return Observation(
            need_id=need["id"], channel=arm, effective_channel=fell_back.channel if fell_back else arm,
            fallback_reason=fell_back.fallback_reason if fell_back else "", candidate_ids=back(result.candidate_ids),
            ranked_ids=back(result.ranked_ids), rendered_ids=back(item.id for item in result.items),
        ), elapsed

    def search(need: dict, channel: str) -> tuple[Observation, float]:
        request = RecallRequest(
            query=need["query"], ceiling=CEILING, max_items=args.max_items, max_tokens=args.max_tokens,
            as_of=as_of_of(need), channel=base_channel(channel),
        )
        began = time.perf_counter()
        result = retriever.recall(principal=principal, request=request, surface="eval",
                                  encoder=search_encoder,
                                  now=corpus.RECALL_NOW)
        elapsed = (time.perf_counter() - began) * 1000
        record_rendering(channel, need, result.rendered_tokens, result.items)
        stages = result.stages
        return Observation(
            need_id=need["id"], channel=channel,
            effective_channel=channel if result.channel == base_channel(channel) else result.channel,
            fallback_reason=result.fallback_reason, candidate_ids=back(stages.candidate_ids),
            ranked_ids=back(stages.ranked_ids), rendered_ids=back(stages.rendered_ids),
            dense_ids=back(stages.dense_ids), lexical_ids=back(getattr(stages, "lexical_ids", ())),
            structured_ids=back(getattr(stages, "structured_ids", ())),
            below_floor_ids=back(stages.below_floor_ids),
        ), elapsed

    def record_rendering(arm: str, need: dict, tokens: int, items) -> None:
        rendering.setdefault(arm, []).append((need["split"], tokens, sum(len(i.excerpts) for i in items),
                                              sum(1 for i in items if i.excerpts)))

    def recall_all(label: str) -> tuple[list[Observation], list[dict], dict[str, list[float]]]:
        observations: list[Observation] = []
        outcomes: list[dict] = []
        latency: dict[str, list[float]] = {c: [] for c in args.channels}
        total = len(needs) * len(args.channels)
        done = 0
        rounds.clear()  # the last pass's assemblies are the ones reported
        rendering.clear()
        for channel in args.channels:
            for need in needs:
                with override_settings(RECALL_SOURCE_EXCERPTS_ENABLED=channel.endswith(EXCERPT_ARM)):
                    observation, elapsed = (assemble(need, channel) if base_channel(channel) in CONTEXT_ARMS
                                            else search(need, channel))
                latency[channel].append(elapsed)
                observations.append(observation)
                outcomes.append(need_outcome(label_by_id[need["id"]], observation))
                done += 1
                progress(f"recall {channel}{label}", done, total)
        progress.close()
        return observations, outcomes, latency

    group_by = ("family", "split", "kind", "lexical_overlap", "family_split")
    sweep = []
    for value in args.floor_sweep:
        settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = value
        swept, _, _ = recall_all(f" floor {value:g}")
        sweep.append({"similarity_margin": value, "scores": sweep_row(score(labels, swept, group_by=group_by))})
    settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = configured_floor
    observations, outcomes, latency = recall_all("")

    scores = score(labels, observations, group_by=group_by)
    erased = None
    if args.erase_after:
        erased = principal_erase(principal=principal)

    return {
        "kind": KIND,
        "created_at": started_at.isoformat(),
        "code": code,
        "command": "python -m evals.recall.diagnostic " + " ".join(sys.argv[1:]),
        "corpus": {
            "version": corpus.CORPUS_VERSION,
            "bank": str(corpus.BANK_PATH.relative_to(rpt.REPO)),
            "needs": str(corpus.NEEDS_PATH.relative_to(rpt.REPO)),
            "bank_sha256": hashlib.sha256(bank_bytes).hexdigest(),
            "needs_sha256": hashlib.sha256(needs_bytes).hexdigest(),
            "noise": noise,
            "digest": corpus_digest(bank_bytes, needs_bytes, noise),
            "matches_generator": fresh_bank == bank_bytes and fresh_needs == needs_bytes,
            "split": args.split,
            "needs_total": len(all_needs),
            "needs_run": len(needs),
            "needs_answerable": sum(1 for n in needs if n["required_evidence"]),
            "needs_per_family_limit": args.needs_per_family,
            "lexical_overlap": {k: sum(1 for v in overlap.values() if v == k) for k in ("none", "some", "unanswerable")},
        },
        "configuration": {
            "channels": args.channels,
            "max_items": args.max_items,
            "max_tokens": args.max_tokens,
            "top_k": TOP_K,
            "ceiling": CEILING,
            "scope": "user",
            "selection_mode": "relevance",
            **rpt.fusion_configuration(),
            "arm_limit": permitted.arm_limit(args.max_items),
            "policy": retriever.POLICY,
            "semantic_policy": retriever.SEMANTIC_POLICY if semantic else None,
            "expansion_policy": policy.EXPANSION if "hybrid" in args.channels else None,
            "context": {"max_searches": settings.RECALL_CONTEXT_MAX_SEARCHES,
                        "max_rounds": settings.RECALL_CONTEXT_MAX_ROUNDS,
                        "deadline_seconds": settings.RECALL_CONTEXT_DEADLINE_SECONDS,
                        "query_max_bytes": settings.RECALL_CONTEXT_QUERY_MAX_BYTES,
                        "arms": {arm: {"task_query": task_query, "channel": channel or "configured"}
                                 for arm, (task_query, channel) in CONTEXT_ARMS.items()}}
            if set(CONTEXT_ARMS) & {base_channel(c) for c in args.channels} else None,
            "source_excerpts": {name: getattr(settings, name) for name in (
                "RECALL_SOURCE_EXCERPT_MAX_CHARS", "RECALL_SOURCE_EXCERPTS_MAX_PER_ITEM",
                "RECALL_SOURCE_EXCERPTS_MAX_PER_RECALL", "RECALL_SOURCE_EXCERPTS_MAX_CHARS_PER_RECALL")}
            | {"arms": [c for c in args.channels if c.endswith(EXCERPT_ARM)]} if args.source_excerpts else None,
            "semantic_enabled_in_process": bool(settings.AGENT_MEMORY_SEMANTIC_ENABLED),
            "encoder": encoder.tuple.model_dump() | {"space": encoder.tuple.space} if encoder is not None else None,
            "exact_search_max_vectors": settings.RECALL_EXACT_SEARCH_MAX_VECTORS,
            "hnsw_ef_search": settings.RECALL_HNSW_EF_SEARCH, "hnsw_search_depth": settings.RECALL_HNSW_SEARCH_DEPTH,
            "recall_now": corpus.RECALL_NOW.isoformat(),
            "import_now": corpus.RECALL_NOW.isoformat(),
            "torch_threads": threads,
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "owner": principal.label,
        "owner_erased_after": erased,
        "import": counts.model_dump(),
        "backfill": backfill,
        "approved_updates": updates,
        "latency_ms": {c: rpt.latency_stats(v) for c, v in latency.items()},
        "rendering": rendering_report(rendering),
        "context_assemblies": dict(sorted(rounds.items())) if rounds else None,
        "scores": scores,
        "floor_sweep": sweep,
        "outcomes": outcomes,
    }


def rendering_report(rendering: dict[str, list[tuple[str, int, int, int]]]) -> dict:
    """Per arm, overall and per split: rendered tokens (n, p50, p95, mean over needs), the
    excerpts rendered and the items that carried one (totals and per need)."""
    def block(rows) -> dict:
        n = len(rows)
        return {"tokens": rpt.latency_stats([float(t) for _, t, _, _ in rows]),
                "excerpts": sum(e for _, _, e, _ in rows), "items_with_excerpts": sum(i for _, _, _, i in rows),
                "excerpts_per_need": round(sum(e for _, _, e, _ in rows) / n, 2) if n else None}

    out = {}
    for arm, rows in rendering.items():
        splits = sorted({split for split, *_ in rows})
        out[arm] = {"overall": block(rows), "by_split": {s: block([r for r in rows if r[0] == s]) for s in splits}}
    return out


def sweep_row(scores: dict) -> dict:
    """What the floor calibration compares, per channel: rendered and ranked@20 recall,
    rendered precision and unrelated rendered items, overall and per family."""
    out = {}
    for channel, s in scores.items():
        stages, precision = s["stages"], s["precision"]
        out[channel] = {
            "rendered_recall": stages["rendered"]["overall"]["recall"],
            f"ranked@{TOP_K}_recall": stages[f"ranked@{TOP_K}"]["overall"]["recall"],
            "precision": precision["overall"],
            "unanswerable_rendered_items": s["unanswerable"]["rendered_items"],
            "by_family": {f: {"rendered_recall": stages["rendered"]["by_family"][f]["recall"],
                              "precision": precision["by_family"][f]["precision"],
                              "unrelated_rendered": precision["by_family"][f]["unrelated_rendered"]}
                          for f in stages["rendered"]["by_family"]},
        }
    return out


def summary(report: dict) -> str:
    scores = report["scores"]
    channels = list(scores)
    out = []
    corpus_info = report["corpus"]
    out.append(f"recall diagnostic — split {corpus_info['split']}, {corpus_info['needs_run']} needs "
               f"({corpus_info['needs_answerable']} answerable), noise {corpus_info['noise']['count']}, "
               f"budget {report['configuration']['max_items']} items / {report['configuration']['max_tokens']} tokens")
    for stage in ("candidate", f"ranked@{TOP_K}", "rendered"):
        present = next(iter(scores.values()))["stages"][stage]["by_family"]
        families = [f for f in corpus.FAMILIES if f in present] + [f for f in present if f not in corpus.FAMILIES]
        rows = []
        for family in families:
            cells = [scores[c]["stages"][stage]["by_family"][family] for c in channels]
            rows.append([family, cells[0]["needs"], *(rpt.fmt(cell["recall"]) for cell in cells)])
        for key in ("split", "lexical_overlap"):
            for group in next(iter(scores.values()))["stages"][stage][f"by_{key}"]:
                cells = [scores[c]["stages"][stage][f"by_{key}"][group] for c in channels]
                if not any(cell["needs"] for cell in cells):
                    continue  # e.g. the overlap tag of needs with nothing required
                rows.append([f"[{key}] {group}", cells[0]["needs"], *(rpt.fmt(cell["recall"]) for cell in cells)])
        cells = [scores[c]["stages"][stage]["overall"] for c in channels]
        rows.append(["OVERALL", cells[0]["needs"], *(rpt.fmt(cell["recall"]) for cell in cells)])
        out.append("")
        out.append(f"{stage} recall of required evidence (%)")
        out.append(rpt.table(["family", "needs", *channels], rows))
    # The targets are per family; tuning happens on development only, so each family's
    # development and holdout figures are shown apart (ranked top-K, the target's stage).
    stage = f"ranked@{TOP_K}"
    groups = next(iter(scores.values()))["stages"][stage].get("by_family_split", {})
    rows = []
    for family in corpus.FAMILIES:
        for split in ("development", "holdout"):
            cells = [scores[c]["stages"][stage]["by_family_split"].get(f"{family} / {split}") for c in channels]
            if f"{family} / {split}" in groups and any(cell and cell["needs"] for cell in cells):
                rows.append([family, split, cells[0]["needs"], *(rpt.fmt(cell["recall"]) for cell in cells)])
    if rows:
        out.append("")
        out.append(f"{stage} recall of required evidence by family and split (%)")
        out.append(rpt.table(["family", "split", "needs", *channels], rows))
    out.append("")
    out.append("rendered precision (required rendered / rendered, %) and unrelated rendered items")
    rows = []
    present = next(iter(scores.values()))["precision"]["by_family"]
    families = [f for f in corpus.FAMILIES if f in present]
    for family in [*families, *(f"[split] {g}" for g in next(iter(scores.values()))["precision"]["by_split"]), "OVERALL"]:
        if family == "OVERALL":
            cells = [scores[c]["precision"]["overall"] for c in channels]
        elif family.startswith("[split] "):
            cells = [scores[c]["precision"]["by_split"][family[8:]] for c in channels]
        else:
            cells = [scores[c]["precision"]["by_family"][family] for c in channels]
        if not cells[0]["needs"]:
            continue
        rows.append([family, cells[0]["needs"],
                     *(f"{rpt.fmt(cell['precision'])} / {cell['unrelated_rendered']}" for cell in cells)])
    out.append(rpt.table(["family", "needs", *(f"{c} prec / unrel" for c in channels)], rows))
    out += rpt.floor_sweep_lines(
        report, "relevance floor sweep (RECALL_RELEVANCE_SIMILARITY_MARGIN), recall and precision in %",
        ["rendered", f"ranked@{TOP_K}", "precision", "unrelated", "rendered items", "withheld required"],
        lambda cell: [rpt.fmt(cell["rendered_recall"]), rpt.fmt(cell[f"ranked@{TOP_K}_recall"]),
                      rpt.fmt(cell["precision"]["precision"]), cell["precision"]["unrelated_rendered"],
                      cell["precision"]["rendered"], cell["precision"]["withheld_required"]])
    out.append("")
    rows = []
    for c in channels:
        s = scores[c]
        u, leaks, d = s["unanswerable"], s["invalid_leaks"], s["distractors"]
        lat = report["latency_ms"][c]
        rows.append([c, s["fallbacks"], f"{u['distractor_rendered']}/{u['needs']}",
                     f"{leaks['invalid_rendered']}/{leaks['needs_with_invalid_labels']}",
                     f"{d['distractor_ranked_above_all_evidence']}/{d['needs_with_distractors']}",
                     lat["p50"], lat["p95"]])
    out.append(rpt.table(["channel", "fallbacks", "unknown: trap rendered", "invalid rendered",
                          "distractor above evidence", "p50 ms", "p95 ms"], rows))
    if report.get("rendering"):
        out.append("")
        out.append("rendered recall (%), rendered tokens (mean / p95) and source excerpts per need, by split")
        rows = []
        for c in channels:
            rendered = scores[c]["stages"]["rendered"]
            cells = report["rendering"].get(c, {})
            for split, block in [*cells.get("by_split", {}).items(), ("all", cells.get("overall"))]:
                if not block:
                    continue
                recall = rendered["overall"] if split == "all" else rendered["by_split"].get(split, {})
                rows.append([c, split, rpt.fmt(recall.get("recall")), block["tokens"]["mean"], block["tokens"]["p95"],
                             block["excerpts_per_need"]])
        out.append(rpt.table(["arm", "split", "rendered", "tokens mean", "tokens p95", "excerpts/need"], rows))
    if report.get("context_assemblies"):
        out.append("context assemblies: " + ", ".join(f"{n} with {k}" for k, n in report["context_assemblies"].items()))
    return "\n".join(out)


def main(argv: Optional[list[str]] = None) -> int:
    report, _ = rpt.run_command(KIND, parse_args, run, summary, argv)
    print(f"scratch owner: {report['owner']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

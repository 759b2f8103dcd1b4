"""The measured comparison runner of the frozen reconsolidation corpus (issue 4, part 3).

For every selected case, arm and repeat it seeds a *fresh* owner with the case's bank (IDs
remapped, because IDs are primary keys across owners), runs the arm at the corpus's fixed
evaluation instant, collects observations from store and recall state only, and scores them
with ``reconsolidation-scorer@1``:

* ``original`` — existing maintenance only (the expiry sweep): the control.
* ``merge`` — dreaming, with only ``merge_equivalent`` proposals approved.
* ``connections`` — dreaming, with every proposal kind approved (merges, summaries,
  connections, conflicts).

Dreaming runs in reviewed mode, so every proposal is recorded ``proposed`` first; the runner
then approves the arm's kinds through the owner's own approval service — exactly what an owner
approving everything would do. Runtime code sees only ``runtime_case_input(case)``: the bank
and the probe questions. Labels stay here and in the scorer.

Offline (no answer model) each probe is scored on the evidence recall renders for its
question (20 items / 2,000 tokens), labelled ``rendered_evidence`` in the report. A case that
raises is kept as ``failed`` (never dropped). The report binds the code commit and dirty flag,
the corpus, scorer, F1 and manifest digests, the provider and model, spend and every number;
it is written exclusively (an existing path is never replaced), with a summary table and a
PNG chart next to it.
"""
from __future__ import annotations

import json
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from itertools import combinations
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.recall.report import code_identity, remapper, table
from evals.reconsolidation import case_inputs
from evals.reconsolidation.answers import AnswerStage
from evals.reconsolidation.responder import MODEL as RESPONDER_MODEL
from evals.reconsolidation.responder import HeuristicResponder, ObservedProvider
from memory.bank import memory_bank_import
from memory.models import Memory
from memory.services import memory_erase, owner_create
from memory.services.sweeps import memories_expire_due
from recall.backfill import backfill_vectors
from recall.domain import RecallRequest
from recall.encoders import load_encoder
from recall.retriever import recall
from reconsolidation import driver
from reconsolidation.errors import Conflict, StaleInputs
from reconsolidation.evidence import admission, pins, scorer
from reconsolidation.evidence.pins import Configuration, sha256_file
from reconsolidation.evidence.verify import BOOKKEEPING_KEYS, code_manifest
from reconsolidation.models import (
    DerivedMemory,
    ReconsolidationDependency,
    ReconsolidationGroup,
    ReconsolidationOperation,
    ReconsolidationSpend,
)
from reconsolidation.providers.openai import OpenAIProvider, openai_config
from reconsolidation.providers.selection import readiness
from reconsolidation.services.operations import operation_approve
from reconsolidation.store import ReconsolidationStore
from veetbot.identity import Principal
from veetbot.rls import owner_context

# @2: imports follow the by-stage layout; measures as @1. @3: a slice's groups reach the
# scripted/openai provider as one batch (one proposal, one verification per slice).
# @4: probes recall as the product does at the evaluation instant (a current recall at the
# fixed clock, through the reconsolidation read path: merge suppression, summaries and
# connections render), where @1-@3 recalled with as_of, which turned that read path off, so
# every arm rendered the same evidence; the report keeps every observation and the input
# manifest (reconsolidation.evidence.verify) so admission can recompute it.
# @5: the production configuration — semantic recall on and every seeded bank embedded with
# the configured encoder, so grouping's semantic neighbour arm runs and probes recall hybrid
# (@1-@4 created no vectors: every probe was keyword-only); each observation counts the
# channels its probes ran on.
VERSION = pins.RUNNER_VERSION  # @8: redundant summaries by clause support, an update not counted
REPO = pins.REPO
CORPORA, DEFAULT_CORPUS = pins.CORPORA, pins.DEFAULT_CORPUS
CORPUS_PATH, MANIFEST_PATH = CORPORA[DEFAULT_CORPUS]
RUNNER_PATH = REPO / "evals/reconsolidation/compare.py"
# The bytes that decide how a run measures (the command, this harness, its answer stage, the
# scripted responder and the label boundary), pinned together as VERSION in a manifest.
RUNNER_FILES = (
    RUNNER_PATH, REPO / "evals/reconsolidation/runner.py", REPO / "evals/reconsolidation/answers.py",
    REPO / "evals/reconsolidation/responder.py", REPO / "evals/reconsolidation/case_inputs.py",
)
PROVIDERS = ("rules", "scripted", "openai")
SPLIT_CHOICES = ("development", "holdout", "both")
RECALL_MAX_ITEMS, RECALL_MAX_TOKENS, RECALL_CEILING = pins.RECALL_MAX_ITEMS, pins.RECALL_MAX_TOKENS, pins.RECALL_CEILING
DEFAULT_SPEND_CEILING_USD = pins.DEFAULT_SPEND_CEILING_USD
ARM_KINDS = pins.ARM_KINDS
# One sweep ends when a slice reports the generation complete with nothing pending; this
# bounds a sweep that never settles (it then fails the case rather than hanging the run).
MAX_SLICES_PER_SWEEP = 200
LEASE_OWNER = "eval_reconsolidation"
REDUNDANT_JACCARD = 0.5


class RunnerError(Exception):
    """A refusal before anything ran (bad arguments, pinned digests that do not match)."""


@dataclass
class Spend:
    usd: Decimal = Decimal(0)
    reservations: int = 0

    def add(self, usd: Decimal, reservations: int) -> None:
        self.usd += usd
        self.reservations += reservations


def check_pins(manifest_path: Optional[Path] = None) -> dict:
    """Refuse to run against a corpus, scorer, F1 or (where the manifest pins it) runner whose
    bytes differ from the manifest (``manifest_path``, default the default corpus's)."""
    manifest_path = manifest_path or MANIFEST_PATH
    try:
        current = pins.pinned(manifest_path)
    except pins.PinsChanged as changed:
        raise RunnerError(str(changed))
    files = runner_digests()
    pinned = current["runner"]
    if pinned["pinned"] and (pinned["files"] != files or pinned["version"] != VERSION):
        raise RunnerError(f"the runner's files or version differ from their pins in {manifest_path.name}: "
                          "a changed runner needs a new version and a new manifest")
    current["runner"] = {"version": VERSION, "files": files, "pinned": pinned["pinned"]}
    return current


def runner_digests() -> dict[str, str]:
    """SHA-256 of each of ``RUNNER_FILES``, keyed by repository path."""
    return {str(path.relative_to(REPO)): sha256_file(path) for path in RUNNER_FILES}


def _openai_readiness() -> tuple[str, ...]:
    """Why the OpenAI-compatible provider could not send (content-free), as if it were selected."""
    from django.conf import settings


    previous = settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER
    settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER = "openai"
    try:
        return readiness()
    finally:
        settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER = previous


class LabelLeak(Exception):
    """A prepared provider request carried a label value: the run is invalid and stops."""


class RequestWatch:
    """The provider for one case's dreaming, with every prepared request checked against the
    case's labels (``case_inputs.leaked_label_values(case, request) == set()``)."""

    def __init__(self, case: dict, provider_name: str) -> None:
        self.case, self.checked, self.leaks = case, 0, 0
        self.provider = None
        if provider_name == "scripted":
            self.provider = HeuristicResponder(observe=self.observe)
        elif provider_name == "openai":
            self.provider = ObservedProvider(OpenAIProvider(openai_config()), self.observe)

    def observe(self, request_text: str) -> None:
        self.checked += 1
        if case_inputs.leaked_label_values(self.case, request_text):
            self.leaks += 1
            raise LabelLeak("a prepared request carries label values")  # the call is not made



def validate(config: Configuration, corpus: dict) -> list[dict]:
    """The cases to run, or a RunnerError naming the bad argument (nothing has run yet)."""
    unknown = [arm for arm in config.arms if arm not in scorer.ARMS]
    if unknown or not config.arms or len(set(config.arms)) != len(config.arms):
        raise RunnerError(f"--arms: a comma-separated subset of {','.join(scorer.ARMS)} without repeats")
    if config.repeats < 1:
        raise RunnerError("--repeats: at least 1")
    if config.provider not in PROVIDERS:
        raise RunnerError(f"--provider: one of {', '.join(PROVIDERS)}")
    if config.provider == "openai":
        missing = _openai_readiness()
        if missing:
            raise RunnerError(f"--provider openai: not configured ({', '.join(missing)}); set VEETBOT_OPENAI_MODEL,"
                              " VEETBOT_OPENAI_INPUT_USD_PER_MTOK, VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK and, for a"
                              " remote endpoint, AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER and a key")
    if config.split not in SPLIT_CHOICES:
        raise RunnerError(f"--split: one of {', '.join(SPLIT_CHOICES)}")
    if config.corpus not in CORPORA:
        raise RunnerError(f"--corpus: one of {', '.join(CORPORA)}")
    if config.spend_ceiling_usd <= 0:
        raise RunnerError("--spend-ceiling-usd: a positive amount")
    if config.answers:
        missing = _openai_readiness()  # the answer model is the configured OpenAI-compatible endpoint
        if missing:
            raise RunnerError(f"--answers: the answer model is not ready ({', '.join(missing)}); set"
                              " VEETBOT_OPENAI_MODEL and both VEETBOT_OPENAI_*_USD_PER_MTOK prices")
    cases = [c for c in corpus["cases"] if config.split == "both" or c["split"] == config.split]
    if config.case_ids:
        known = {c["id"] for c in cases}
        missing = sorted(set(config.case_ids) - known)
        if missing:
            raise RunnerError(f"--cases: unknown in this split: {', '.join(missing)}")
        cases = [c for c in cases if c["id"] in set(config.case_ids)]
    return cases


# --------------------------------------------------------------------------------------------
# One case under one arm
# --------------------------------------------------------------------------------------------

def _seed(case: dict, instant: datetime, namespace: uuid.UUID):
    """A fresh owner holding the case's bank at fresh IDs; deleted originals erased through
    the governed path and due expiries applied at the instant. Returns the principal and the
    remapped->corpus ID table."""

    runtime = case_inputs.runtime_case_input(case)
    bank = runtime["bank"]
    deleted = [m["id"] for m in bank["memories"] if m["status"] == "deleted"]
    for memory in bank["memories"]:
        if memory["status"] == "deleted":
            memory["status"] = "active"  # imported live, then erased as an owner would
    remap_text, new_id, inverse = remapper(namespace)
    data = remap_text(json.dumps(bank, ensure_ascii=False, separators=(",", ":")))
    owner = owner_create(display_name="reconsolidation evaluation", now=instant)
    principal = Principal(tenant_id=owner.tenant_id, principal_id=owner.principal_id)
    memory_bank_import(principal=principal, data=data, now=instant)
    for memory_id in deleted:
        memory_erase(principal=principal, memory_id=uuid.UUID(new_id(memory_id)), now=instant)
    memories_expire_due(principal=principal, now=instant)
    questions = {p["id"]: p["question"] for p in runtime["probes"]}
    return principal, inverse, questions


def _embed(principal) -> None:
    """Vectors for every embeddable original of the seeded bank, as the beat backfill leaves
    a deployment's bank; an incomplete backfill fails the case (recall would silently fall
    back to keywords for the rest)."""

    report = backfill_vectors(principal=principal, encoder=load_encoder())
    if report.stopped or report.remaining:
        raise RuntimeError("the seeded bank could not be embedded")


def _sweep_clocks(instant: datetime, sweeps: int) -> list[datetime]:
    """One UTC day per sweep (a job is due once a day), the last one at the instant."""
    return [instant - timedelta(days=sweeps - k) for k in range(1, sweeps + 1)]


def _approve_pending(principal, kinds: Sequence[str], now: datetime, limit: Optional[int]) -> int:
    """Approve the arm's pending proposals (oldest first) as the owner; at most ``limit``."""

    with owner_context(principal):
        pending = list(ReconsolidationOperation.objects.filter(state="proposed", kind__in=list(kinds))
                       .order_by("created_at", "id").values_list("id", "revision"))
    approved = 0
    for operation_id, revision in pending:
        if limit is not None and approved >= limit:
            break
        try:
            operation_approve(principal=principal, operation_id=operation_id, expected_revision=revision,
                              idempotency_key=f"eval-approve-{operation_id}", now=now)
        except Exception as error:  # a conflict (e.g. overlapping merge) rejects only itself
            if not isinstance(error, (Conflict, StaleInputs)):
                raise
            continue
        approved += 1
    return approved


def _dream(principal, kinds: Sequence[str], protocol: dict, instant: datetime, provider=None) -> None:
    """Run the protocol's sweeps; with ``restart_after_operations`` the first sweep's worker
    stops after that many approved operations and a new worker resumes from stored state.

    The clock is fixed (``monotonic`` frozen): every slice of a sweep starts at that sweep's
    instant, so a run is reproducible and no slice deadline depends on machine load."""

    restart_after = protocol.get("restart_after_operations")
    for number, now in enumerate(_sweep_clocks(instant, int(protocol.get("sweeps", 1))), start=1):
        store = ReconsolidationStore(clock=lambda now=now: now)
        approved = 0
        for _ in range(MAX_SLICES_PER_SWEEP):
            run = driver.run_slice(principal, lease_owner=LEASE_OWNER, store=store, now=now, monotonic=lambda: 0.0,
                                   provider=provider)
            limit = None
            if number == 1 and restart_after is not None:
                limit = max(0, restart_after - approved)
            approved += _approve_pending(principal, kinds, now, limit)
            if number == 1 and restart_after is not None and approved >= restart_after:
                # The worker stops here; a fresh store object (a restarted process) resumes.
                store = ReconsolidationStore(clock=lambda now=now: now)
                restart_after = None
            if run is None or driver.is_idle(run):
                break
            if not driver.made_progress(run):
                raise RuntimeError("a slice made no progress")
        else:
            raise RuntimeError("sweep did not complete within MAX_SLICES_PER_SWEEP slices")
        _approve_pending(principal, kinds, now, None)


def redundant_summary_pairs(principal) -> int:
    """Pairs of the owner's pending or active summaries whose support (the originals their
    clauses cite) overlaps by a Jaccard index of ``REDUNDANT_JACCARD`` or more: each such pair
    asks the owner twice for one thing. A pending update of a committed summary is not a
    second summary (approving it retires the first), so that pair is not counted."""
    with owner_context(principal):
        live = list(ReconsolidationOperation.objects.filter(kind="summarize_related", state__in=("proposed", "committed"))
                    .values_list("id", "supersedes", "clause_sources"))
    support = {op_id: frozenset(str(i) for ids in sources for i in ids) for op_id, _, sources in live}
    replaces = {op_id: supersedes for op_id, supersedes, _ in live}
    return sum(1 for a, b in combinations(support, 2)
               if replaces[a] != b and replaces[b] != a
               and len(support[a] & support[b]) / len(support[a] | support[b]) >= REDUNDANT_JACCARD)


def _observe(case: dict, principal, inverse: dict, questions: dict, instant: datetime, *, reconsolidating: bool):
    """What the store and recall show now, in corpus IDs."""
    from django.db.models import Q
    from django.test.utils import override_settings


    def back(value) -> str:
        return inverse.get(str(value), str(value))

    with owner_context(principal):
        merges = [[back(i) for i in ids] for ids in ReconsolidationOperation.objects.filter(
            kind="merge_equivalent", state="committed").order_by("created_at", "id").values_list("input_ids", flat=True)]
        live = Memory.objects.filter(status="active", erased_at__isnull=True).filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=instant))
        survivors = sorted(back(i) for i in live.values_list("id", flat=True))
        dreaming = {
            "memories": Memory.objects.count(),
            "redundant_summary_pairs": redundant_summary_pairs(principal),
            "groups_processed": ReconsolidationGroup.objects.filter(state__in=("completed", "no_change")).count(),
            "abstained": ReconsolidationGroup.objects.filter(state="no_change").count(),  # no proposal
            "proposed": _by_kind(ReconsolidationOperation.objects.all()),
            "approved": _by_kind(ReconsolidationOperation.objects.filter(state="committed")),
        }
        hypotheses = []
        for derived in DerivedMemory.objects.filter(kind="hypothesis", status="active",
                                                    operation__state="committed").order_by("created_at", "id"):
            support = ReconsolidationDependency.objects.filter(operation_id=derived.operation_id).values_list(
                "memory_id", flat=True).distinct()
            for clause in derived.clauses:
                hypotheses.append({"statement": clause["text"], "support": sorted({back(i) for i in support})})
    channels: dict[str, int] = {}
    evidence = []
    with override_settings(AGENT_MEMORY_RECONSOLIDATION_ENABLED=reconsolidating):
        for probe_id, question in questions.items():
            # A current recall at the fixed evaluation clock: what the API renders then.
            result = recall(principal=principal, surface="eval", now=instant, request=RecallRequest(
                query=question, ceiling=RECALL_CEILING, max_items=RECALL_MAX_ITEMS, max_tokens=RECALL_MAX_TOKENS))
            evidence.append({"probe_id": probe_id, "text": result.rendered})
            ran = result.channel + (f"/{result.fallback_reason}" if result.fallback_reason else "")
            channels[ran] = channels.get(ran, 0) + 1
    return {"case_id": case["id"], "merges": merges, "survivors": survivors, "hypotheses": hypotheses,
            "rendered_evidence": evidence, "failed": False, "channels": channels, "dreaming": dreaming}


def _by_kind(operations) -> dict[str, int]:
    from django.db.models import Count

    return {row["kind"]: row["n"] for row in operations.values("kind").annotate(n=Count("id")).order_by("kind")}


def _spend_of(principal) -> tuple[Decimal, int]:
    from django.db.models import Count, Sum


    with owner_context(principal):
        totals = ReconsolidationSpend.objects.aggregate(usd=Sum("charged_usd"), n=Count("id"))
    return totals["usd"] or Decimal(0), totals["n"]


def run_case(case: dict, arm: str, *, instant: datetime, namespace: uuid.UUID, spend: Spend,
             provider: str = "rules", requests: Optional[Spend] = None) -> dict:
    """One observation; any exception makes it a failed case (kept in every denominator) —
    except a label leak into a prepared request, which stops the whole run."""
    from django.test.utils import override_settings  # the settings of one case, then as they were

    started = time.monotonic()
    kinds = ARM_KINDS[arm]
    try:
        leaked = case_inputs.leaked_label_values(
            case, json.dumps(case_inputs.runtime_case_input(case), ensure_ascii=False))
        if leaked:
            raise RuntimeError("runtime input carries label values")
        with override_settings(AGENT_MEMORY_SEMANTIC_ENABLED=True):  # every arm: the production configuration
            principal, inverse, questions = _seed(case, instant, namespace)
            _embed(principal)
            if kinds:
                watch = None
                try:
                    with override_settings(AGENT_MEMORY_RECONSOLIDATION_ENABLED=True,
                                           AGENT_MEMORY_RECONSOLIDATION_MODE="reviewed",
                                           AGENT_MEMORY_RECONSOLIDATION_PROVIDER=("openai" if provider == "openai"
                                                                                   else "rules"),
                                           RECON_SCRIPTED_PROVIDER_ALLOWED=provider == "scripted"):
                        watch = RequestWatch(case, provider)
                        _dream(principal, kinds, case["protocol"], instant, provider=watch.provider)
                except Exception:
                    if watch is not None and watch.leaks:  # the refused call may have failed the sweep first
                        raise LabelLeak(f"{watch.leaks} prepared request(s) of case {case['id']} carry label values")
                    raise
                if watch.leaks:
                    raise LabelLeak(f"{watch.leaks} prepared request(s) of case {case['id']} carry label values")
                if requests is not None:
                    requests.add(Decimal(0), watch.checked)
                usd, reservations = _spend_of(principal)
                spend.add(usd, reservations)
            observation = _observe(case, principal, inverse, questions, instant, reconsolidating=bool(kinds))
            observation["spend_usd"] = str(usd) if kinds else "0"
        observation["seconds"] = round(time.monotonic() - started, 3)
        return observation
    except LabelLeak:
        raise
    except Exception as error:  # noqa: BLE001 - a failed case is data, not a crash
        return {"case_id": case["id"], "merges": [], "survivors": [], "hypotheses": [], "rendered_evidence": [],
                "failed": True, "error": type(error).__name__, "channels": {},
                "seconds": round(time.monotonic() - started, 3)}


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------

def _answer_stage(config: Configuration, spend: Spend):
    """The answer stage, charging the run's total spend (one ceiling covers both stages)."""

    return AnswerStage(ceiling_usd=config.spend_ceiling_usd, spent=lambda: spend.usd,
                       charge=lambda usd: spend.add(usd, 0), leak=LabelLeak)


def _scored(corpus: dict, cases: list[dict], observations: list[dict]) -> dict:
    subset = {**corpus, "cases": cases}

    clean = [{k: v for k, v in o.items() if k not in BOOKKEEPING_KEYS} for o in observations]
    return scorer.score(subset, clean)


def downstream_value(cases: list[dict], kept: dict[str, list[list[dict]]], arms: dict[str, dict]) -> dict:
    """Per arm and split, what dreaming bought and what it cost: cross-session coverage and
    direct recall on rendered evidence (and the change against the ``original`` arm), groups
    processed and abstained (no proposal), operations proposed and approved by kind, spend,
    seconds and the channels probes ran on — summed over every repeat."""
    split_of = {case["id"]: case["split"] for case in cases}
    value: dict[str, dict] = {}
    for arm, repeats in kept.items():
        for split in sorted({split_of[o["case_id"]] for observations in repeats for o in observations}):
            rows = [o for observations in repeats for o in observations if split_of[o["case_id"]] == split]
            figures = arms[arm]["splits"].get(split, {})
            control = arms.get("original", {}).get("splits", {}).get(split, {})
            entry = {"repeats": len(repeats), "observations": len(rows),
                     "failed": sum(int(o["failed"]) for o in rows),
                     "cross_session_coverage": figures.get("cross_session_coverage"),
                     "direct_recall": figures.get("direct_recall"),
                     "direct_recall_change": (None if figures.get("direct_recall") is None
                                              or control.get("direct_recall") is None
                                              else figures["direct_recall"] - control["direct_recall"]),
                     "memories": 0, "redundant_summary_pairs": 0,
                     "groups_processed": 0, "abstained": 0, "proposed": {}, "approved": {},
                     "spend_usd": str(sum((Decimal(o.get("spend_usd", "0")) for o in rows), Decimal(0))),
                     "seconds": round(sum(o["seconds"] for o in rows), 1),
                     "channels": _channel_census([rows])}
            for o in rows:
                dreaming = o.get("dreaming", {})
                entry["groups_processed"] += dreaming.get("groups_processed", 0)
                entry["abstained"] += dreaming.get("abstained", 0)
                entry["memories"] += dreaming.get("memories", 0)
                entry["redundant_summary_pairs"] += dreaming.get("redundant_summary_pairs", 0)
                for side in ("proposed", "approved"):
                    for kind, count in dreaming.get(side, {}).items():
                        entry[side][kind] = entry[side].get(kind, 0) + count
            # what the owner was asked to review, per 100 of the memories dreaming read
            entry["proposed_per_100_memories"] = (round(100 * sum(entry["proposed"].values()) / entry["memories"], 2)
                                                  if entry["memories"] else None)
            value.setdefault(arm, {})[split] = entry
    return value


def _channel_census(repeats: list[list[dict]]) -> dict[str, int]:
    """How many probes ran on each channel (``hybrid``, ``sparse/<fallback reason>``)."""
    census: dict[str, int] = {}
    for observations in repeats:
        for observation in observations:
            for channel, count in observation.get("channels", {}).items():
                census[channel] = census.get(channel, 0) + count
    return dict(sorted(census.items()))


def _instant(corpus: dict) -> datetime:
    return datetime.fromisoformat(corpus["evaluation_instant"].replace("Z", "+00:00"))


def run(config: Configuration, *, progress: Optional[Callable[[str, int, int], None]] = None) -> dict:

    if config.corpus not in CORPORA:
        raise RunnerError(f"--corpus: one of {', '.join(CORPORA)}")
    corpus_path, manifest_path = CORPORA[config.corpus]
    pins = check_pins(manifest_path)
    corpus = json.loads(corpus_path.read_text())
    if corpus["version"] != pins["corpus"]["version"]:
        raise RunnerError(f"--corpus {config.corpus}: {corpus_path.name} is not the corpus its manifest pins")
    cases = validate(config, corpus)
    code = code_identity()
    instant = _instant(corpus)
    run_id = uuid.uuid4()
    spend = Spend()
    checked = Spend()  # prepared provider requests checked for label values (reservations = count)
    spend_by_arm = {arm: Spend() for arm in config.arms}
    per_arm: dict[str, list[dict]] = {arm: [] for arm in config.arms}
    kept: dict[str, list[list[dict]]] = {arm: [] for arm in config.arms}  # every observation, per repeat
    cases_out: dict[str, dict] = {arm: {} for arm in config.arms}
    total = len(cases) * len(config.arms) * config.repeats
    done = 0
    stage = _answer_stage(config, spend) if config.answers else None
    started = time.monotonic()
    for repeat in range(1, config.repeats + 1):
        for arm in config.arms:
            observations = []
            for case in cases:
                namespace = uuid.uuid5(run_id, f"{repeat}:{arm}:{case['id']}")
                if spend.usd >= config.spend_ceiling_usd:
                    observation = {"case_id": case["id"], "merges": [], "survivors": [], "hypotheses": [],
                                   "rendered_evidence": [], "failed": True, "error": "spend_ceiling", "seconds": 0}
                else:
                    before = (spend.usd, spend.reservations)
                    observation = run_case(case, arm, instant=instant, namespace=namespace, spend=spend,
                                           provider=config.provider, requests=checked)
                    if stage is not None:
                        observation = stage.apply(case, observation)
                    spend_by_arm[arm].add(spend.usd - before[0], spend.reservations - before[1])
                if stage is not None and "answers" not in observation:
                    observation = stage.apply(case, observation)
                observations.append(observation)
                done += 1
                if progress:
                    progress(f"repeat {repeat} {arm}", done, total)
            report = _scored(corpus, cases, observations)
            per_arm[arm].append(report)
            kept[arm].append(observations)
            for observation in observations:
                entry = cases_out[arm].setdefault(observation["case_id"], {"failed": 0, "errors": [], "seconds": []})
                entry["failed"] += int(observation["failed"])
                entry["seconds"].append(observation["seconds"])
                if observation.get("error"):
                    entry["errors"].append(observation["error"])
    arms = {arm: scorer.combine(reports) for arm, reports in per_arm.items()}
    for arm, reports in per_arm.items():
        arms[arm]["per_repeat"] = [{split: {k: v for k, v in figures.items()}
                                    for split, figures in r["splits"].items()} for r in reports]
        arms[arm]["cases"] = cases_out[arm]
    splits = ("development", "holdout") if config.split == "both" else (config.split,)
    gate_results = {name: value for name, value in scorer.gates(arms).items() if name.split("/")[0] in splits}
    from django.conf import settings

    return {
        "runner": VERSION,
        "code": {**code, "files": code_manifest()},
        "pins": pins,
        "corpus": {"version": corpus["version"], "evaluation_instant": corpus["evaluation_instant"],
                   "cases": len(cases)},
        "configuration": config.as_dict(),
        "provider": {"name": config.provider, **provider_identity(config.provider),
                     "requests_checked_for_labels": checked.reservations, "label_leaks": 0,
                     "embedding": settings.RECALL_ENCODER, "recall_channel": "hybrid",
                     "channels_ran": {arm: _channel_census(observations) for arm, observations in kept.items()}},
        "usage": {"spend_usd": str(spend.usd), "reservations": spend.reservations,
                  "by_arm": {arm: {"spend_usd": str(s.usd), "reservations": s.reservations}
                             for arm, s in spend_by_arm.items()},
                  **({"answers": stage.usage()} if stage is not None else {})},
        "seconds": round(time.monotonic() - started, 1),
        "arms": arms,
        "downstream_value": downstream_value(cases, kept, arms),
        "gates": {name: {"value": value["value"], "threshold": value["threshold"], "passed": value["passed"]}
                  for name, value in gate_results.items()},
        "passed": scorer.all_passed(gate_results),
        "observations": kept,
    }


# --------------------------------------------------------------------------------------------
# Output: the JSON (exclusive), a summary table and a chart next to it
# --------------------------------------------------------------------------------------------

def provider_identity(name: str) -> dict:
    """Model, prompt/schema digests and policy of the provider this run used: what the
    unattended-mode evidence gate (``reconsolidation.mode``) compares with a deployment."""

    if name == "rules":
        model = "rules@1"
    elif name == "scripted":
        model = RESPONDER_MODEL
    else:
        from django.conf import settings
        model = settings.VEETBOT_OPENAI_MODEL
    return admission.provider_identity(name, model)


def _pct(value: Any) -> str:
    return "—" if value is None else f"{100 * float(value):.1f}"


def summary(report: dict) -> str:

    rows = []
    for arm, figures in report["arms"].items():
        for split, f in figures["splits"].items():
            if not f["cases"]:
                continue
            rows.append([f"{split}/{arm}", f["cases"], f["failed_cases"], f["false_merge_pairs"], f["lost_facts"],
                         f"{f['classes_covered']}/{f['classes_total']}", _pct(f["duplicate_set_coverage"]),
                         f"{f['hypotheses_matched']}/{f['hypotheses_output']}/{f['hypotheses_expected']}",
                         _pct(f["direct_recall"]), _pct(f["cross_session_coverage"])])
    head = table(["split/arm", "cases", "failed", "false pairs", "lost", "classes", "coverage %",
                  "hyp m/out/exp", "direct %", "cross %"], rows)
    kinds = (("merge_equivalent", "merges"), ("summarize_related", "summaries"), ("infer_connection", "hypotheses"),
             ("flag_conflict", "conflicts"), ("end_superseded", "updates"))
    value = table(["split/arm", "cross %", "direct Δ pts", "groups", "abstained", "asked /100 mem", "redundant",
                   *[f"{label} prop/appr" for _, label in kinds], "spend USD", "seconds", "channels"],
                  [[f"{split}/{arm}", _pct(v["cross_session_coverage"]),
                    "—" if v["direct_recall_change"] is None else f"{100 * v['direct_recall_change']:+.1f}",
                    v["groups_processed"], v["abstained"],
                    "—" if v.get("proposed_per_100_memories") is None else v["proposed_per_100_memories"],
                    v.get("redundant_summary_pairs", 0),
                    *[f"{v['proposed'].get(kind, 0)}/{v['approved'].get(kind, 0)}" for kind, _ in kinds],
                    v["spend_usd"], v["seconds"], ", ".join(f"{c} {n}" for c, n in v["channels"].items())]
                   for arm, by_split in report.get("downstream_value", {}).items()
                   for split, v in by_split.items()])
    gates = table(["gate", "value", "threshold", "passed"],
                  [[name, "—" if g["value"] is None else g["value"], g["threshold"], "yes" if g["passed"] else "NO"]
                   for name, g in report["gates"].items()])
    return (f"{report['runner']} · corpus {report['corpus']['version']} · provider {report['provider']['name']}"
            f" · repeats {report['configuration']['repeats']} · probes scored on "
            f"{'model answers' if report['configuration']['probe_mode'] == 'answers' else 'rendered evidence (offline)'}"
            f" · spend USD {report['usage']['spend_usd']}\n{head}\n\ndownstream value (summed over repeats)\n"
            f"{value}\n\n{gates}\n"
            f"all gates passed: {'yes' if report['passed'] else 'NO'}\n")


def chart(report: dict, path: Path) -> None:
    """Coverage (duplicate sets, direct and cross-session probes) per split and arm, and spend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, series = [], {"duplicate-set coverage": [], "direct recall": [], "cross-session coverage": []}
    for arm, figures in report["arms"].items():
        for split, f in figures["splits"].items():
            if not f["cases"]:
                continue
            labels.append(f"{split[:3]}/{arm}")
            series["duplicate-set coverage"].append(float(f["duplicate_set_coverage"] or 0))
            series["direct recall"].append(float(f["direct_recall"] or 0))
            series["cross-session coverage"].append(float(f["cross_session_coverage"] or 0))
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 1]})
    width = 0.8 / len(series)
    for index, (name, values) in enumerate(series.items()):
        left.bar([i + index * width for i in range(len(labels))], values, width, label=name)
    left.set_xticks([i + width for i in range(len(labels))], labels, rotation=30, ha="right", fontsize=8)
    left.set_ylim(0, 1)
    left.set_ylabel("fraction")
    left.legend(fontsize=8)
    left.set_title("coverage per split/arm")
    by_arm = report["usage"]["by_arm"]
    costs = [float(by_arm[arm]["spend_usd"]) for arm in by_arm]
    right.bar(list(by_arm), costs)
    right.set_ylim(0, max(costs + [0]) * 1.25 or 1e-6)
    right.set_ylabel("USD (all repeats)")
    right.set_title(f"cost ({report['provider']['name']})")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def write(report: dict, output: Path) -> list[Path]:
    """The JSON at ``output`` (exclusive create), then ``.summary.txt`` and ``.png`` beside it."""
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "x", encoding="utf-8") as handle:
        handle.write(json.dumps(report, indent=1, default=str) + "\n")
    text_path, png_path = output.with_suffix(".summary.txt"), output.with_suffix(".png")
    with open(text_path, "x", encoding="utf-8") as handle:
        handle.write(summary(report))
    chart(report, png_path)
    return [output, text_path, png_path]


def note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)

"""LoCoMo evidence recall through the real import, backfill and retriever (sparse, dense, hybrid).

``python -m evals.recall.locomo --report-dir evals/reports [--conversations N]
[--data ../shared/benchmarks/locomo/locomo10.json] [--channels sparse,dense,hybrid]``

The public LoCoMo file (CC BY-NC) is read at run time from the operator-supplied path and
never copied into the repository. Each conversation becomes one memory-bank@1 document for
its own fresh owner (the conversation is what that owner observed):

* each speaker is a person; each dialogue turn is one event (speaker ``person:<them>``) and
  one memory: statement ``"<Speaker> said: <text>"`` plus ``" [shared an image: <caption>]"``
  when the turn has a ``blip_caption``; subject ``"<Speaker>, <session date>"``; attribution
  ``person:<them>``, derivation extracted; evidence_at = valid_from = the session's
  ``date_time`` (read as UTC) plus 30 s per turn;
* each session observation (``session_N_observation``: ``[text, dia_id(s)]``) is one more
  memory with that text, citing the events of its evidence turns (observations whose
  evidence names no turn of the conversation are skipped and counted); ``--turns-only``
  leaves them out, for comparison with turn-level baselines.

The mapping memory → dia_ids (a turn's own ID; an observation's evidence IDs) stays in this
harness; the bank holds no labels. Every question of categories 1-4 (5, adversarial, is
skipped) is asked as is, ceiling "restricted", ``max_items=50`` and a large token budget.
Evidence recall@k, per question: the fraction of its evidence dia_ids covered by the dia_ids
of the first k ``stages.ranked_ids`` (k = 5, 10, 25, 50). Two aggregates, per category and
overall:

* ``paper_recall`` — the headline, the LoCoMo paper's definition (snap-research/locomo,
  ``task_eval/evaluation.py``: per question ``recall_acc = |evidence ∩ retrieved| /
  |evidence|``, then the mean over questions). The paper's published retriever numbers
  (DRAGON R@10 66.2) are of this kind, so this is the figure to compare with them.
* ``pooled_recall`` — micro: covered evidence IDs / all evidence IDs, so a question with
  four evidence turns weighs four times one with one.

Questions without evidence: the paper's script scores a question with no evidence as
recall 1 (a free success); here such a question (four in categories 1-4 of the public
file have an empty evidence list; so would one whose every ID names no turn) is neither a
success nor a failure — it is not asked and is counted (``questions_without_evidence``). Evidence
IDs that name no turn of their conversation are dropped from the denominator and counted
(``unresolvable_evidence_ids``); the paper's string match would count them as misses.
Scores are also reported per split: conversations 0-4 of the file are the development
split (fusion settings were tuned on them), 5-9 the holdout.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import time
import uuid
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.recall import report as rpt
from evals.recall.scoring import ratio
from memory.bank import memory_bank_import
from memory.services import owner_create
from recall import encoders, retriever
from recall.backfill import backfill_vectors
from recall.domain import RecallRequest
from veetbot.identity import Principal

# The public LoCoMo data lies beside the repository (its licence forbids copying it in).
DEFAULT_DATA = rpt.REPO.parent / "shared" / "benchmarks" / "locomo" / "locomo10.json"
KIND = "recall-locomo"
CHANNELS = ("sparse", "dense", "hybrid")
KS = (5, 10, 25, 50)
MAX_ITEMS = 50
MAX_TOKENS = 32000
CEILING = "restricted"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}  # 5 adversarial: skipped
NAMESPACE = uuid.UUID("3b7f2f0e-6f0a-5c1e-8d55-0c4a1e9b2d77")
TURN_GAP = timedelta(seconds=30)
RECALL_NOW = datetime(2025, 1, 1, tzinfo=timezone.utc)  # after every LoCoMo session
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
DEVELOPMENT_CONVERSATIONS = 5
RENDERED_K = 20  # the default item budget (settings.RECALL_MAX_ITEMS): precision is measured there
SPLITS = ("development", "holdout")
_DIA = re.compile(r"D:?(\d+):(\d+)")


def split_of(position: int) -> str:
    """Conversations 0-4 of the file tune the retriever (development); 5-9 are held out."""
    return "development" if position < DEVELOPMENT_CONVERSATIONS else "holdout"


def dia_ids(value) -> list[str]:
    """Normalised dia_ids in a LoCoMo evidence value ("D1:3", "D8:6; D9:17", "D:11:26", lists)."""
    values = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in values:
        for session, turn in _DIA.findall(str(item)):
            ident = f"D{int(session)}:{int(turn)}"
            if ident not in found:
                found.append(ident)
    return found


def _iso(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def convert(sample: dict, *, observations: bool = True) -> tuple[dict, dict[str, list[str]], dict]:
    """(memory-bank@1 document, memory ID → dia_ids, conversion counts) for one conversation.
    IDs are uuid5 under the sample's name; callers remap them per run."""
    sample_id = sample["sample_id"]
    conversation = sample["conversation"]

    def uid(*parts) -> str:
        return str(uuid.uuid5(NAMESPACE, "/".join([sample_id, *map(str, parts)])))

    speakers = [conversation["speaker_a"], conversation["speaker_b"]]
    person = {name: uid("person", name) for name in speakers}
    people, sessions, events, memories = [], [], [], []
    mapping: dict[str, list[str]] = {}
    turn_part: dict[str, tuple[str, str]] = {}
    counts = {"sessions": 0, "turns": 0, "observations": 0, "observations_skipped": 0, "images": 0}
    session_numbers = sorted(int(k.split("_")[1]) for k in conversation
                             if re.fullmatch(r"session_\d+", k) and conversation[k])
    session_date: dict[int, datetime] = {}
    for name in speakers:
        if name not in {p["name"] for p in people}:
            people.append({"id": person[name], "name": name})

    def speaker_ref(name: str) -> str:
        if name not in person:  # a speaker outside speaker_a/b (not in the public file, but be safe)
            person[name] = uid("person", name)
            people.append({"id": person[name], "name": name})
        return f"person:{person[name]}"

    for number in session_numbers:
        started = datetime.strptime(conversation[f"session_{number}_date_time"], DATE_FORMAT).replace(tzinfo=timezone.utc)
        session_date[number] = started
        session_id = uid("session", number)
        sessions.append({"id": session_id, "scope": "user", "started_at": _iso(started)})
        counts["sessions"] += 1
        label = f"{started.day} {started:%B %Y}"
        for index, turn in enumerate(conversation[f"session_{number}"]):
            at = started + (index + 1) * TURN_GAP
            text = turn["text"]
            caption = turn.get("blip_caption")
            if caption:
                text = f"{text} [shared an image: {caption}]"
                counts["images"] += 1
            event_id, part_id = uid("event", turn["dia_id"]), uid("part", turn["dia_id"])
            speaker = speaker_ref(turn["speaker"])
            events.append({"id": event_id, "session": session_id, "kind": "user.message.created",
                           "speaker": speaker, "created_at": _iso(at),
                           "parts": [{"id": part_id, "text": text}]})
            memory_id = uid("memory", turn["dia_id"])
            memories.append(_memory(memory_id, f"{turn['speaker']}, {label}", f"{turn['speaker']} said: {text}",
                                    speaker, at, [(event_id, part_id)]))
            for ident in dia_ids(turn["dia_id"]):
                turn_part[ident] = (event_id, part_id)
            mapping[memory_id] = dia_ids(turn["dia_id"])
            counts["turns"] += 1

    for key, by_speaker in sorted(sample.get("observation", {}).items() if observations else ()):
        match = re.fullmatch(r"session_(\d+)_observation", key)
        if not match or int(match.group(1)) not in session_date:
            continue
        number = int(match.group(1))
        label = f"{session_date[number].day} {session_date[number]:%B %Y}"
        for name, items in by_speaker.items():
            for index, (text, evidence) in enumerate(items):
                cited = [i for i in dia_ids(evidence) if i in turn_part]
                if not cited or not text.strip():
                    counts["observations_skipped"] += 1
                    continue
                at = session_date[number] + timedelta(hours=23, seconds=index)
                memory_id = uid("observation", number, name, index)
                sources = list(dict.fromkeys(turn_part[i] for i in cited))[:64]
                memories.append(_memory(memory_id, f"{name} (observation), {label}", text, speaker_ref(name),
                                        at, sources))
                mapping[memory_id] = cited
                counts["observations"] += 1
    document = {"format": "memory-bank@1", "people": people, "sessions": sessions, "events": events,
                "memories": memories}
    return document, mapping, counts


def _memory(memory_id: str, subject: str, statement: str, attribution: str, at: datetime,
            sources: list[tuple[str, str]]) -> dict:
    return {
        "id": memory_id, "subject": subject[:200], "statement": statement[:4000], "belief_type": "fact",
        "claim_kind": "claim", "polarity": "affirmed", "derivation": "extracted", "attribution": attribution,
        "authority": "EXTRACTED", "sensitivity": "internal", "scope": "user", "portable": False,
        "confidence": 0.8, "evidence_at": _iso(at), "valid_from": _iso(at), "expires_at": None,
        "entity_ids": [attribution], "status": "active", "created_at": _iso(at + timedelta(seconds=5)),
        "sources": [{"event": e, "part": p} for e, p in sources],
    }


def questions(sample: dict, known: set[str]) -> tuple[list[dict], dict]:
    asked, counts = [], {"category_5_skipped": 0, "unresolvable_evidence_ids": 0, "questions_without_evidence": 0}
    for index, qa in enumerate(sample["qa"]):
        category = qa.get("category")
        if category == 5:
            counts["category_5_skipped"] += 1
            continue
        raw = []
        for value in qa.get("evidence", []):
            raw += dia_ids(value)
        evidence = [i for i in raw if i in known]
        counts["unresolvable_evidence_ids"] += len(raw) - len(evidence)
        if not evidence:
            counts["questions_without_evidence"] += 1
            continue
        asked.append({"index": index, "question": qa["question"], "category": category, "evidence": evidence})
    return asked, counts


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.recall.locomo", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json (operator-supplied)")
    parser.add_argument("--report-dir", type=Path, default=Path("evals/reports"))
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--channels", default="sparse,dense,hybrid")
    parser.add_argument("--turns-only", action="store_true",
                        help="dialogue turns only, no observation memories (comparable to turn-level baselines)")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch intra-op threads for the local encoder (default: torch's own choice)")
    parser.add_argument("--floor-sweep", default="",
                        help="comma-separated RECALL_RELEVANCE_SIMILARITY_MARGIN values: every question is asked "
                             "once more per value and the report adds the curve (calibration; development "
                             "conversations only, e.g. --conversations 5)")
    args = parser.parse_args(argv)
    try:
        args.floor_sweep = [float(v) for v in args.floor_sweep.split(",") if v.strip()]
    except ValueError:
        parser.error("--floor-sweep must be comma-separated numbers")
    args.channels = [c.strip() for c in args.channels.split(",") if c.strip()]
    if not args.channels or any(c not in CHANNELS for c in args.channels):
        parser.error("--channels must be a comma-separated subset of sparse,dense,hybrid")
    if not args.data.is_file():
        parser.error(f"--data {args.data}: no such file (the LoCoMo data is read from where it lies, never copied)")
    return args


DEFINITIONS = {
    "paper_recall": "mean over questions of |evidence ∩ retrieved| / |evidence| (the LoCoMo paper's "
                    "retrieval recall, task_eval/evaluation.py); the headline",
    "pooled_recall": "covered evidence IDs / all evidence IDs over the group's questions (micro)",
    "all_evidence_rate": "fraction of questions with every evidence ID retrieved",
    "questions_without_evidence": "not asked and not scored (the paper's script would count them as recall 1)",
    "unresolvable_evidence_ids": "dropped from the denominator (the paper's string match would count them as misses)",
    "rendered@20": f"the first {RENDERED_K} rendered items (the relevance floor applies before the budget, so "
                   f"these are what a {RENDERED_K}-item recall renders, its token budget aside)",
    "precision": f"over the first {RENDERED_K} rendered items of every question: items citing at least one "
                 "evidence turn ÷ items (counts added before dividing)",
    "unrelated_rendered": f"of those first {RENDERED_K}, items citing no evidence turn of the question",
}


class _Acc:
    """Per-question fractions (the paper's mean) and integer coverage counts (pooled)."""

    STAGES = (*KS, "rendered", "rendered@20")

    def __init__(self) -> None:
        self.covered = {k: 0 for k in self.STAGES}
        self.evidence = 0
        self.fractions = {k: [] for k in self.STAGES}
        self.complete = {k: 0 for k in self.STAGES}
        self.questions = 0
        self.rendered = self.relevant = 0

    def add(self, covered: dict, evidence: int, rendered: int = 0, relevant: int = 0) -> None:
        self.rendered += rendered
        self.relevant += relevant
        self.questions += 1
        self.evidence += evidence
        for k, c in covered.items():
            self.covered[k] += c
            self.fractions[k].append(c / evidence)
            self.complete[k] += c == evidence

    def as_dict(self) -> dict:
        out = {"questions": self.questions, "evidence_ids": self.evidence,
               "precision": ratio(self.relevant, self.rendered), "rendered_items": self.rendered,
               "relevant_rendered": self.relevant, "unrelated_rendered": self.rendered - self.relevant}
        for k in self.STAGES:
            name = f"@{k}" if isinstance(k, int) else k
            out[name] = {
                "paper_recall": statistics.fmean(self.fractions[k]) if self.fractions[k] else None,
                "pooled_recall": ratio(self.covered[k], self.evidence), "covered": self.covered[k],
                "all_evidence_rate": ratio(self.complete[k], self.questions),
            }
        return out


def run(args: argparse.Namespace) -> dict:
    rpt.setup_django()
    threads = rpt.torch_threads(args.torch_threads)
    code = rpt.code_identity()
    from django.conf import settings


    data_bytes = args.data.read_bytes()
    samples = json.loads(data_bytes)
    if args.conversations:
        samples = samples[: args.conversations]
    semantic = any(c != "sparse" for c in args.channels)
    if semantic:
        rpt.enable_semantic()
    encoder = encoders.load_encoder("minilm") if semantic else None
    started_at = datetime.now(timezone.utc)
    progress = rpt.Progress()

    acc = {c: defaultdict(_Acc) for c in args.channels}
    sweep_acc = {value: {c: defaultdict(_Acc) for c in args.channels} for value in args.floor_sweep}
    configured_margin = settings.RECALL_RELEVANCE_SIMILARITY_MARGIN
    fallbacks = {c: 0 for c in args.channels}
    latency = {c: [] for c in args.channels}
    conversations, totals = [], defaultdict(int)
    for position, sample in enumerate(samples):
        split = split_of(position)
        document, mapping, conversion = convert(sample, observations=not args.turns_only)
        known = {i for ids in mapping.values() for i in ids}
        asked, qcounts = questions(sample, known)
        owner = owner_create(display_name=f"locomo {sample['sample_id']} {started_at:%Y-%m-%dT%H:%M:%SZ}",
                             now=RECALL_NOW)
        principal = Principal(tenant_id=owner.tenant_id, principal_id=owner.principal_id)
        remap_text, _, inverse = rpt.remapper(uuid.uuid5(NAMESPACE, f"run:{principal.principal_id}"))
        data = remap_text(json.dumps(document, ensure_ascii=False, separators=(",", ":"))).encode()
        counts = memory_bank_import(principal=principal, data=data, now=RECALL_NOW)
        backfill = None
        if semantic:
            backfill = backfill_vectors(principal=principal, encoder=encoder,
                                        progress=lambda s, d, t: progress(f"{sample['sample_id']} backfill", d, t))
            progress.close()
            backfill = backfill.summary()
        rpt.note(f"{sample['sample_id']}: owner {principal.label}, {counts.memories} memories "
                 f"({conversion['turns']} turns, {conversion['observations']} observations), {len(asked)} questions")
        for key, value in {**conversion, **qcounts}.items():
            totals[key] += value
        totals["questions"] += len(asked)

        def ask_all(into: dict, label: str) -> None:
            done = 0
            for channel in args.channels:
                for q in asked:
                    request = RecallRequest(query=q["question"], ceiling=CEILING, max_items=MAX_ITEMS,
                                            max_tokens=MAX_TOKENS, channel=channel)
                    began = time.perf_counter()
                    result = retriever.recall(principal=principal, request=request, surface="eval",
                                              encoder=encoder if encoder is not None else retriever.DEFAULT_ENCODER,
                                              now=RECALL_NOW)
                    if into is acc:
                        latency[channel].append((time.perf_counter() - began) * 1000)
                    done += 1
                    progress(f"{sample['sample_id']} recall{label}", done, len(asked) * len(args.channels))
                    if result.channel != channel:
                        if into is acc:
                            fallbacks[channel] += 1
                        continue
                    ranked = [inverse.get(str(i), str(i)) for i in result.stages.ranked_ids]
                    rendered = [inverse.get(str(i), str(i)) for i in result.stages.rendered_ids]
                    evidence = set(q["evidence"])
                    covered = {}
                    for k in KS:
                        seen = {d for memory_id in ranked[:k] for d in mapping.get(memory_id, ())}
                        covered[k] = len(evidence & seen)
                    seen = {d for memory_id in rendered for d in mapping.get(memory_id, ())}
                    covered["rendered"] = len(evidence & seen)
                    first = rendered[:RENDERED_K]
                    seen = {d for memory_id in first for d in mapping.get(memory_id, ())}
                    covered["rendered@20"] = len(evidence & seen)
                    relevant = sum(1 for memory_id in first if evidence & set(mapping.get(memory_id, ())))
                    for group in ("overall", f"category {q['category']}", f"split {split}"):
                        into[channel][group].add(covered, len(evidence), len(first), relevant)
            progress.close()

        for value in args.floor_sweep:
            settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = value
            ask_all(sweep_acc[value], f" margin {value:g}")
        settings.RECALL_RELEVANCE_SIMILARITY_MARGIN = configured_margin
        ask_all(acc, "")
        conversations.append({"sample_id": sample["sample_id"], "split": split, "owner": principal.label,
                              "import": counts.model_dump(),
                              "backfill": backfill, "conversion": conversion, "questions": qcounts | {"asked": len(asked)}})

    groups = ["overall", *(f"category {c}" for c in sorted(CATEGORIES)),
              *(f"split {name}" for name in SPLITS if any(c["split"] == name for c in conversations))]
    return {
        "kind": KIND,
        "created_at": started_at.isoformat(),
        "code": code,
        "command": "python -m evals.recall.locomo " + " ".join(sys.argv[1:]),
        "data": {"path": str(args.data), "sha256": hashlib.sha256(data_bytes).hexdigest(),
                 "conversations": len(samples), "license": "CC BY-NC (read at run time, never stored)"},
        "conversion": {
            "turn_statement": "<Speaker> said: <text> [shared an image: <blip_caption>]",
            "turn_subject": "<Speaker>, <session date>",
            "observation_subject": "<Speaker> (observation), <session date>",
            "belief_type": "fact", "attribution": "person:<speaker>", "derivation": "extracted",
            "observations": not args.turns_only,
            "categories": CATEGORIES, "skipped_categories": [5],
            "totals": dict(totals),
        },
        "configuration": {
            "channels": args.channels, "max_items": MAX_ITEMS, "max_tokens": MAX_TOKENS, "ks": list(KS),
            "ceiling": CEILING, **rpt.fusion_configuration(), "policy": retriever.POLICY,
            "encoder": (encoder.tuple.model_dump() | {"space": encoder.tuple.space}) if encoder is not None else None,
            "exact_search_max_vectors": settings.RECALL_EXACT_SEARCH_MAX_VECTORS,
            "recall_now": RECALL_NOW.isoformat(),
            "torch_threads": threads,
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "definitions": DEFINITIONS,
        "conversations": conversations,
        "fallbacks": fallbacks,
        "latency_ms": {c: rpt.latency_stats(v) for c, v in latency.items()},
        "scores": {c: {g: acc[c][g].as_dict() for g in groups} for c in args.channels},
        "floor_sweep": [{"similarity_margin": value,
                         "scores": {c: {g: sweep_acc[value][c][g].as_dict() for g in groups} for c in args.channels}}
                        for value in args.floor_sweep],
    }


def summary(report: dict) -> str:
    scores = report["scores"]
    channels = list(scores)
    out = [f"LoCoMo evidence recall — {report['data']['conversations']} conversations, "
           f"{report['conversion']['totals'].get('questions', 0)} questions (categories 1-4); "
           "%: paper recall (mean over questions, the paper's definition; DRAGON R@10 66.2) "
           "and, in parentheses, pooled recall (covered / all evidence IDs)"]
    for group in next(iter(scores.values())):
        name = f"{group} ({CATEGORIES[int(group.split()[1])]})" if group.startswith("category ") else group
        rows = []
        for c in channels:
            cell = scores[c][group]
            rows.append([c, cell["questions"], *(f"{rpt.fmt(cell[f'@{k}']['paper_recall'])} "
                                                 f"({rpt.fmt(cell[f'@{k}']['pooled_recall'])})" for k in KS)])
        out.append("")
        out.append(name)
        out.append(rpt.table(["channel", "questions", *(f"paper @{k} (pooled)" for k in KS)], rows))
    out.append("")
    out.append(f"rendered@{RENDERED_K} (first {RENDERED_K} rendered items): paper recall (pooled), precision, "
               "unrelated rendered items")
    rows = []
    for group in next(iter(scores.values())):
        for c in channels:
            cell = scores[c][group]
            r = cell["rendered@20"]
            rows.append([group, c, f"{rpt.fmt(r['paper_recall'])} ({rpt.fmt(r['pooled_recall'])})",
                         rpt.fmt(cell["precision"]), cell["unrelated_rendered"], cell["rendered_items"]])
    out.append(rpt.table(["group", "channel", "recall", "precision", "unrelated", "rendered"], rows))
    sweep_groups = next(iter(report["floor_sweep"][0]["scores"].values())) if report.get("floor_sweep") else ()
    for group in sweep_groups:
        if group.startswith("category "):
            continue
        out += rpt.floor_sweep_lines(
            report, f"relevance floor sweep (RECALL_RELEVANCE_SIMILARITY_MARGIN), {group}: paper @10, "
                    "rendered@20 paper recall (pooled), precision, unrelated rendered items",
            ["paper @10", "rendered@20", "precision", "unrelated", "rendered"],
            lambda cell, group=group: [
                rpt.fmt(cell[group]["@10"]["paper_recall"]),
                f"{rpt.fmt(cell[group]['rendered@20']['paper_recall'])} ({rpt.fmt(cell[group]['rendered@20']['pooled_recall'])})",
                rpt.fmt(cell[group]["precision"]), cell[group]["unrelated_rendered"], cell[group]["rendered_items"]])
    lat = report["latency_ms"]
    out.append("")
    out.append("fallbacks: " + ", ".join(f"{c} {report['fallbacks'][c]}" for c in channels)
               + "; p50/p95 ms: " + ", ".join(f"{c} {lat[c]['p50']}/{lat[c]['p95']}" for c in channels))
    return "\n".join(out)


def main(argv: Optional[list[str]] = None) -> int:
    rpt.run_command(KIND, parse_args, run, summary, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

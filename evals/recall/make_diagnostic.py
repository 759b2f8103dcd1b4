"""Build the recall diagnostic corpus: ``diagnostic/bank.json`` (memory-bank@1) and ``needs.jsonl``.

400 information needs, 50 in each of eight families, authored as lineages in
``diagnostic_lineages`` (one fact template + one query template per lineage; each row is one
need). Each need carries its own small history in the owner's bank: the evidence (usually old),
labelled distractors (usually newer: hard semantic neighbours, another person's facts, stale
versions) and lifecycle-invalid memories (retracted corrections, expired versions). Unknown
needs have no valid evidence at all; only traps match them.

Timeline. Each need gets a slot from a seeded shuffle, so families interleave in time. Old
facts fall in 2023, a need's second version 60 days after its first, newer facts in
2024-2025; noise added at run time (``noise_document``, the generator of
``evals/generate_bank.py``) lies in 2025, after everything. ``RECALL_NOW`` is the fixed clock
the runner recalls at; historical needs carry an ``as_of`` between their versions.

needs.jsonl holds one object per line: ``id, family, split, lineage, kind, query, [as_of],
context, required_evidence, distractors, invalid`` (memory IDs of the bank). ``context`` is
the need as automatic context assembly receives it: the query as the owner's current message,
the lineage's task (``diagnostic_lineages.TASKS``) and, as active entities, the people the
query names (never one it only describes). The split follows the
lineage (``diagnostic_lineages.HOLDOUT``), so a query template never crosses splits.

Everything is fabricated. The output is a pure function of this code: uuid5 IDs under a fixed
namespace, a fixed seed, no clock. ``--check`` compares a fresh build with the committed files
byte for byte instead of writing (the corpus is frozen; regenerate deliberately).

Usage: ``python -m evals.recall.make_diagnostic [--check]``
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import re
import string
import sys
import tempfile
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable, Optional

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.generate_bank import Plan, write
from evals.recall.diagnostic_lineages import (
    EXTRA_DISTRACTORS,
    FAMILIES,
    HOLDOUT,
    LINEAGES,
    TASKS,
    Fact,
    Lineage,
)

FORMAT = "memory-bank@1"
# @2: each need also carries its task-context form (``context``); the bank and every @1 field
# are unchanged, so deliberate-search figures compare across the two.
CORPUS_VERSION = "recall-diagnostic@2"
OUTPUT_DIR = Path(__file__).with_name("diagnostic")
BANK_PATH = OUTPUT_DIR / "bank.json"
NEEDS_PATH = OUTPUT_DIR / "needs.jsonl"

NAMESPACE = uuid.UUID("8f0c6a52-3c1e-5b7d-9a41-2e6f0d9b7c13")
SEED = 20261011
UTC = timezone.utc
OLD_BASE = datetime(2023, 1, 9, 8, 0, tzinfo=UTC)
NEW_BASE = datetime(2024, 5, 6, 8, 0, tzinfo=UTC)
SLOT_STEP = timedelta(hours=19)
V2_AFTER = timedelta(days=60)
FACT_GAP = timedelta(minutes=7)
RECORDING_LAG = timedelta(seconds=5)
RECALL_NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)

# Noise: memory-bank@1 documents from evals/generate_bank.py (2025, after every corpus fact).
NOISE_SEED = 1011
NOISE_PER_SESSION = 50

# Distractor kinds a row may add (see diagnostic_lineages).
ROW_DISTRACTORS = {"near", "other", "stale"}
FIRST_PERSON_VERBS = {"has": "have", "is": "am", "was": "was", "does": "do", "goes": "go"}


# -- content words: what "sharing no content word" means for the corpus checks ----------------

STOPWORDS = frozenset("""
a about above after again all am an and any are as at be been before being below between both
but by can cannot could did do does doing don down during each even ever every few for from get
got had has have having he her here hers him his how i if in into is it its itself just let
like me more most much must my myself no nor not now of off on once only or other our ours out
over own same she should so some still such than that the their theirs them then there these
they this those through to too under until up us very was we were what when where which while
who whom why will with would yet you your yours okay ok also s t re ve ll d m owner owners
""".split())
_WORD = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """A deliberately aggressive suffix stripper: over-merging words only makes the
    "no shared content word" count more conservative."""
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""),
                                ("ly", ""), ("er", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + replacement
            break
    return word.rstrip("e") if len(word) > 3 else word


def content_words(text: str) -> set[str]:
    words = _WORD.findall(text.lower().replace("'s", ""))
    return {stem(w) for w in words if w not in STOPWORDS and len(w) > 1}


# -- building ---------------------------------------------------------------------------------

def uid(kind: str, key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{kind}:{key}"))


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Slots(dict):
    def __missing__(self, key: str) -> str:
        raise KeyError(f"template slot {{{key}}} has no value")


def fill(template: Optional[str], row: dict) -> Optional[str]:
    if template is None:
        return None
    value = string.Formatter().vformat(template, (), _Slots(row))
    return value


def first_person(statement: str) -> str:
    """The owner's own words for an owner statement ("The owner keeps their X" -> "I keep my X")."""
    text = statement
    text = re.sub(r"\bThe owner's\b", "My", text)
    text = re.sub(r"\bthe owner's\b", "my", text)

    def verb(match: re.Match) -> str:
        word = match.group(2)
        if word in FIRST_PERSON_VERBS:
            base = FIRST_PERSON_VERBS[word]
        elif word in {"now", "no", "not", "usually", "never", "and"} or not word.endswith("s"):
            base = word
        elif word.endswith("ies"):
            base = word[:-3] + "y"
        elif word.endswith(("ches", "shes", "sses", "xes", "oes")):
            base = word[:-2]
        else:
            base = word[:-1]
        return f"{match.group(1)} {base}"

    text = re.sub(r"\b(The owner|the owner)\s+(\w+)", lambda m: verb(m).replace("The owner", "I").replace("the owner", "I"), text)
    # "I now works" / "I no longer goes": conjugate the verb after one adverb too.
    text = re.sub(r"\bI (now|no longer|usually|never|also) (\w+)s\b",
                  lambda m: f"I {m.group(1)} {FIRST_PERSON_VERBS.get(m.group(2) + 's', m.group(2))}", text)
    text = re.sub(r"\bI am not\b", "I'm not", text)
    for third, first in ((r"\btheir\b", "my"), (r"\bthemselves\b", "myself"), (r"\bthem\b", "me"),
                         (r"\bthey\b", "I")):
        text = re.sub(third, first, text)
    return text


@dataclass
class _Memory:
    key: str  # need id / fact index
    fact: Fact
    subject: str
    statement: str
    belief_type: str
    by: Optional[str]
    at: datetime
    expires_at: Optional[datetime]
    people: list[str]


@dataclass
class Need:
    id: str
    family: str
    split: str
    lineage: str
    kind: str
    query: str
    as_of: Optional[datetime]
    context: dict
    required: list[str]
    distractors: list[str]
    invalid: list[str]


def _row_facts(lineage: Lineage, row: dict, need_id: str) -> list[Fact]:
    facts = list(lineage.facts)
    for extra in [*row.get("d", ()), *EXTRA_DISTRACTORS.get(need_id, ())]:
        kind, subject, statement, *person = extra
        if kind not in ROW_DISTRACTORS:
            raise ValueError(f"{lineage.name}: unknown distractor kind {kind!r}")
        when = "old" if kind == "stale" else "new"
        facts.append(Fact("distractor", lineage.facts[0].belief_type, subject, statement, when=when,
                          by=person[0] if person else None))
    return facts


def _when(fact_when: str, slot: int, index: int) -> datetime:
    old = OLD_BASE + slot * SLOT_STEP
    base = {"old": old, "v2": old + V2_AFTER, "new": NEW_BASE + slot * SLOT_STEP}[fact_when]
    return base + index * FACT_GAP


def _expiry(spec: Optional[str], at: datetime, times: dict[str, datetime]) -> Optional[datetime]:
    if spec is None:
        return None
    if spec in times:
        return times[spec]
    if match := re.fullmatch(r"\+(\d+)d", spec):
        return at + timedelta(days=int(match.group(1)))
    return datetime.fromisoformat(spec).astimezone(UTC)


def _row_people(lineage: Lineage, row: dict) -> list[str]:
    """People a need's facts are about (recorded as entity IDs), by the row's name slots."""
    names = [row[key] for key in ("name", "n1", "n2") if isinstance(row.get(key), str)]
    return names


def _context(lineage: Lineage, row: dict) -> dict:
    """The need's task-context form: what an assistant knows about the turn, no answer."""
    query = fill(lineage.query, row)
    named = [name for name in _row_people(lineage, row) if name in query]
    return {"current_message": query, "task": fill(TASKS[lineage.name], row),
            "active_entities": [f"person:{uid('person', name)}" for name in named]}


def build() -> tuple[dict, list[Need]]:
    """The bank document and the needs, in need order."""
    rows = [(lineage, n, row) for lineage in LINEAGES for n, row in enumerate(lineage.rows, 1)]
    unknown = set(EXTRA_DISTRACTORS) - {f"{lineage.name}-{n:02d}" for lineage, n, _ in rows}
    if unknown:
        raise ValueError(f"EXTRA_DISTRACTORS name no need: {sorted(unknown)}")
    slots = list(range(len(rows)))
    random.Random(SEED).shuffle(slots)

    memories: list[_Memory] = []
    needs: list[Need] = []
    for (lineage, n, row), slot in zip(rows, slots):
        need_id = f"{lineage.name}-{n:02d}"
        facts = _row_facts(lineage, row, need_id)
        times = {w: _when(w, slot, 0) for w in ("old", "v2", "new")}
        required, distractors, invalid, made = [], [], [], []
        for index, fact in enumerate(facts):
            at = _when(fact.when, slot, index)
            by = fill(fact.by, row) if fact.by else None
            memory = _Memory(
                key=f"{need_id}/{index}", fact=fact, subject=fill(fact.subject, row),
                statement=fill(fact.statement, row), belief_type=fill(fact.belief_type, row),
                by=by or None, at=at, expires_at=_expiry(fill(fact.expires, row), at, times),
                # row-added distractors are about someone else: no entity links
                people=_row_people(lineage, row) if index < len(lineage.facts) else [],
            )
            memories.append(memory)
            made.append(memory)
            {"evidence": required, "distractor": distractors, "invalid": invalid}[fact.role].append(
                uid("memory", memory.key))
        as_of = None
        if lineage.historical:
            evidence_at = max(m.at for m in made if m.fact.role == "evidence")
            later = min(m.at for m in made if m.at > evidence_at)
            as_of = evidence_at + (later - evidence_at) / 2
        needs.append(Need(
            id=need_id, family=lineage.family, split="holdout" if lineage.name in HOLDOUT else "development",
            lineage=lineage.name, kind=lineage.kind, query=fill(lineage.query, row), as_of=as_of,
            context=_context(lineage, row), required=required, distractors=distractors, invalid=invalid,
        ))
    return _document(memories), needs


def _document(memories: list[_Memory]) -> dict:
    memories = sorted(memories, key=lambda m: (m.at, m.key))
    names = sorted({m.by for m in memories if m.by} | {p for m in memories for p in m.people})
    person = {name: uid("person", name) for name in names}
    sessions: dict[str, dict] = {}
    events, records = [], []
    for m in memories:
        day = m.at.strftime("%Y-%m-%d")
        session = sessions.setdefault(day, {
            "id": uid("session", day), "scope": "user", "started_at": iso(m.at - timedelta(minutes=2))})
        speaker = f"person:{person[m.by]}" if m.by else "owner"
        text = m.statement if m.by else first_person(m.statement)
        event = {
            "id": uid("event", m.key), "session": session["id"], "kind": "user.message.created",
            "speaker": speaker, "created_at": iso(m.at),
            "parts": [{"id": uid("part", m.key), "text": text}],
        }
        events.append(event)
        entities = [f"person:{person[p]}" for p in dict.fromkeys(([m.by] if m.by else []) + m.people)]
        fact = m.fact
        records.append({
            "id": uid("memory", m.key),
            "subject": m.subject,
            "statement": m.statement,
            "belief_type": m.belief_type,
            "claim_kind": "claim",
            "polarity": "negated" if fact.negated else "affirmed",
            "derivation": "extracted" if m.by else "explicit",
            "attribution": speaker,
            "authority": "EXTRACTED" if m.by else "USER",
            "sensitivity": fact.sensitivity,
            "scope": "user",
            "portable": not m.by,
            "confidence": 0.8 if m.by else 0.9,
            "evidence_at": iso(m.at),
            "valid_from": iso(m.at),
            "expires_at": iso(m.expires_at) if m.expires_at else None,
            "entity_ids": entities,
            "status": fact.status,
            "created_at": iso(m.at + RECORDING_LAG),
            "sources": [{"event": event["id"], "part": event["parts"][0]["id"]}],
        })
    return {
        "format": FORMAT,
        "people": [{"id": person[name], "name": name} for name in names],
        "sessions": list(sessions.values()),
        "events": events,
        "memories": records,
    }


# -- rendering --------------------------------------------------------------------------------

def _dump(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render_bank(document: dict) -> bytes:
    """One object per line (diff-friendly, a few MB at most)."""
    out = io.StringIO()
    out.write(f'{{"format":{_dump(document["format"])},\n')
    names = ("people", "sessions", "events", "memories")
    for n, name in enumerate(names):
        out.write(f'"{name}":[\n')
        out.write(",\n".join(_dump(item) for item in document[name]))
        out.write("\n]" + (",\n" if n < len(names) - 1 else "}\n"))
    return out.getvalue().encode()


def need_record(need: Need) -> dict:
    record = {"id": need.id, "family": need.family, "split": need.split, "lineage": need.lineage,
              "kind": need.kind, "query": need.query}
    if need.as_of is not None:
        record["as_of"] = iso(need.as_of)
    record["context"] = need.context
    record.update(required_evidence=need.required, distractors=need.distractors, invalid=need.invalid)
    return record


def render_needs(needs: Iterable[Need]) -> bytes:
    return "".join(_dump(need_record(n)) + "\n" for n in needs).encode()


def render() -> tuple[bytes, bytes]:
    document, needs = build()
    return render_bank(document), render_needs(needs)


# -- noise (generated at run time, never stored) ------------------------------------------------

def noise_document(count: int, seed: int = NOISE_SEED) -> dict:
    """``count`` unrelated memories from ``evals/generate_bank.py`` (2025, newer than the corpus).

    Their IDs are the generator's fixed ones; callers that import into a database twice must
    remap them (IDs are primary keys across owners).
    """

    with tempfile.TemporaryDirectory() as spool:
        handle = io.StringIO()
        write(Plan(count, seed, NOISE_PER_SESSION), handle, Path(spool))
    return json.loads(handle.getvalue())


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true",
                        help="compare a fresh build with the committed files; write nothing")
    args = parser.parse_args(argv)
    bank, needs = render()
    if args.check:
        same = BANK_PATH.exists() and NEEDS_PATH.exists() and BANK_PATH.read_bytes() == bank \
            and NEEDS_PATH.read_bytes() == needs
        print("identical" if same else "DIFFERENT from the committed corpus", file=sys.stderr)
        return 0 if same else 1
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    for path, data in ((BANK_PATH, bank), (NEEDS_PATH, needs)):
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(data)
        partial.replace(path)
    print(f"wrote {BANK_PATH} ({len(bank):,} bytes, sha256 {sha256(bank)[:12]}) and {NEEDS_PATH} "
          f"({len(needs):,} bytes, sha256 {sha256(needs)[:12]})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A paraphrase bank no tuning has seen, and its scorer (``python -m evals.reconsolidation.paraphrase_bank``).

Written once, after the guards of ``reconsolidation.providers.rules.paraphrase`` were tuned on the
development split of the reconsolidation corpus, and frozen before its first run: its
figures are reported as measured, never tuned on. Two parts:

* ``CLASSES`` — paraphrase classes: two or three originals that say the same thing in
  other words (each a duplicate set that should merge);
* ``LOOKALIKES`` — pairs that differ in exactly one guarded respect (a number, a date, a
  weekday, a frequency, a name, negation, modality, tense, status, comparison, direction,
  a relation or role word, a field such as attribution or scope, or one content word):
  each must never merge.

Scoring goes through the real rules provider (``rules.propose``) over in-memory source
views, one case per class and per look-alike pair, with the corpus scorer's definitions:
a duplicate set is covered when some merge component equals it exactly; a false merge pair
is any merged pair not in one labelled set. Lost facts are not measurable here (no store:
a merge never deletes an original; the corpus runner measures survival) and are reported
as ``null``. Output: one JSON document with the code identity (commit, dirty flag) of the
run (``--output`` writes it, exclusively).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import uuid
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.recall.report import code_identity
from reconsolidation.providers.rules import provider as rules
from reconsolidation.sources import SourceView

VERSION = "paraphrase-bank@1"
T0 = datetime(2026, 5, 1, 9, 0, tzinfo=timezone.utc)

# (subject, statements) — each a set that says one thing in other words.
CLASSES = [
    ("tea", ["The owner drinks green tea every afternoon.", "Every afternoon the owner has green tea."]),
    ("gym", ["The owner goes to the gym on Fridays.", "On Fridays the owner goes to the gym."]),
    ("language", ["The owner speaks fluent Portuguese.", "The owner is fluent in Portuguese."]),
    ("allergies", ["The owner is allergic to peanuts.", "The owner has a peanut allergy.",
                   "The owner has an allergy to peanuts."]),
    ("bike", ["The owner's bike is a blue Gazelle.", "The owner rides a blue Gazelle bike."]),
    ("running", ["The owner runs 5 km three times a week.", "Three times a week the owner runs 5 km."]),
    ("dentist", ["Dr. Okafor is the owner's dentist.", "The owner's dentist is Dr. Okafor."]),
    ("music", ["The owner plays the cello.", "The owner is a cellist."]),
    ("birthday", ["The owner's birthday is on 22 August.", "The owner was born on 22 August."]),
    ("piano", ["The owner takes piano lessons on Tuesday evenings.",
               "On Tuesday evenings the owner has piano lessons."]),
    ("diet", ["The owner avoids gluten.", "The owner doesn't eat gluten."]),
    ("commute", ["The owner commutes by train.", "The owner takes the train to commute."]),
    ("garden", ["The owner grows tomatoes in the greenhouse.", "In the greenhouse the owner grows tomatoes."]),
    ("sister", ["The owner's sister lives in Ghent.", "The owner has a sister who lives in Ghent."]),
    ("newsletter", ["The owner reads the Guardian every morning.",
                    "Every morning the owner reads the Guardian."]),
    ("sleep", ["The owner sleeps about seven hours a night.", "The owner gets around seven hours of sleep a night."]),
    ("swimming", ["The owner swims at the Sloterparkbad.", "The owner goes swimming at the Sloterparkbad."]),
    ("laptop", ["The owner's laptop is a ThinkPad X1.", "The owner uses a ThinkPad X1 laptop."]),
    ("coffee", ["The owner drinks two cups of coffee a day.", "The owner has 2 cups of coffee each day."]),
    ("choir", ["The owner sings in a choir.", "The owner is a choir singer."]),
]

# (guard respected, a, b, fields of b that differ) — each pair must never merge.
LOOKALIKES = [
    ("numbers", "The owner runs 5 km three times a week.", "The owner runs 10 km three times a week.", {}),
    ("numbers", "The owner drinks two cups of coffee a day.", "The owner drinks three cups of coffee a day.", {}),
    ("numbers", "The owner's rent is 1,200 euros a month.", "The owner's rent is 1,250 euros a month.", {}),
    ("numbers", "The owner's rent is 1,200 euros a month.", "The owner's rent is 1,200 pounds a month.", {}),
    ("numbers", "The owner's flight leaves at 07:15.", "The owner's flight leaves at 17:15.", {}),
    ("dates", "The owner's birthday is on 22 August.", "The owner's birthday is on 23 August.", {}),
    ("dates", "The owner's lease ends in March 2027.", "The owner's lease ends in March 2028.", {}),
    ("months", "The owner's birthday is on 22 August.", "The owner's birthday is on 22 September.", {}),
    ("weekdays", "The owner goes to the gym on Fridays.", "The owner goes to the gym on Saturdays.", {}),
    ("weekdays", "The owner takes piano lessons on Tuesday evenings.",
     "The owner takes piano lessons on Tuesday mornings.", {}),
    ("frequency", "The owner usually walks to work.", "The owner rarely walks to work.", {}),
    ("frequency", "The owner calls their mother weekly.", "The owner calls their mother daily.", {}),
    ("frequency", "The owner visits the market every week.", "The owner visits the market every other week.", {}),
    ("entities", "Dr. Okafor is the owner's dentist.", "Dr. Mensah is the owner's dentist.", {}),
    ("entities", "The owner's sister lives in Ghent.", "The owner's sister lives in Bruges.", {}),
    ("entities", "The owner's laptop is a ThinkPad X1.", "The owner's laptop is a MacBook Air.", {}),
    ("negation", "The owner eats fish.", "The owner does not eat fish.", {}),
    ("negation", "The owner likes horror films.", "The owner never likes horror films.", {}),
    ("modality", "The owner will move to Leiden.", "The owner might move to Leiden.", {}),
    ("modality", "The owner can swim.", "The owner will swim.", {}),
    ("tense", "The owner lives in Rotterdam.", "The owner lived in Rotterdam.", {}),
    ("tense", "The owner plays tennis.", "The owner played tennis.", {}),
    ("tense", "The owner is a vegetarian.", "The owner was a vegetarian.", {}),
    ("status", "The owner smokes.", "The owner used to smoke.", {}),
    ("status", "The owner's new phone is a Pixel.", "The owner's old phone is a Pixel.", {}),
    ("status", "The owner is a member of the tennis club.", "The owner is no longer a member of the tennis club.",
     {}),
    ("status", "The owner's manager is Priya.", "The owner's former manager is Priya.", {}),
    ("comparison", "The owner goes running before breakfast.", "The owner goes running after breakfast.", {}),
    ("comparison", "The owner earns more than 50,000 euros.", "The owner earns less than 50,000 euros.", {}),
    ("comparison", "The owner sleeps seven hours a night.", "The owner sleeps at least seven hours a night.", {}),
    ("direction", "The owner flies to Lisbon on Monday.", "The owner flies from Lisbon on Monday.", {}),
    ("relation", "The owner's son is allergic to peanuts.", "The owner's daughter is allergic to peanuts.", {}),
    ("relation", "The owner's brother lives in Ghent.", "The owner's sister lives in Ghent.", {}),
    ("relation", "The owner's mother's birthday is on 2 May.", "The owner's father's birthday is on 2 May.", {}),
    ("role", "The owner's work email is on the ThinkPad.", "The owner's personal email is on the ThinkPad.", {}),
    ("role", "The owner's work phone is a Pixel.", "The owner's home phone is a Pixel.", {}),
    ("content", "The owner is allergic to cats.", "The owner is allergic to dogs.", {}),
    ("content", "The owner drinks green tea every afternoon.", "The owner drinks black tea every afternoon.", {}),
    ("content", "The owner plays the cello.", "The owner plays the violin.", {}),
    ("content", "The owner grows tomatoes in the greenhouse.", "The owner grows peppers in the greenhouse.", {}),
    ("content", "The owner's bike is a blue Gazelle.", "The owner's bike is a red Gazelle.", {}),
    ("fields", "The owner is allergic to peanuts.", "The owner has a peanut allergy.", {"attribution": "contact"}),
    ("fields", "The owner is allergic to peanuts.", "The owner has a peanut allergy.",
     {"scope": "project:trip", "portable": False}),
    ("fields", "The owner is allergic to peanuts.", "The owner has a peanut allergy.", {"polarity": "negated"}),
    ("fields", "The owner is allergic to peanuts.", "The owner has a peanut allergy.", {"sensitivity": "sensitive"}),
    ("fields", "The owner is allergic to peanuts.", "The owner has a peanut allergy.",
     {"belief_type": "preference"}),
    ("fields", "She is allergic to peanuts.", "She has a peanut allergy.", {"subject": "Mira"}),
]


def _view(statement: str, sequence: int, subject: str, **fields):

    values = dict(memory_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{VERSION}:{sequence}:{statement}"), content_revision=1,
                  creation_sequence=sequence, statement=statement, subject=subject, belief_type="fact",
                  claim_kind="claim", polarity="affirmed", derivation="explicit", attribution="owner", scope="user",
                  portable=True, authority="USER", sensitivity="internal", confidence=0.9, evidence_at=T0,
                  valid_from=T0.replace(day=1 + sequence % 27), expires_at=None)
    values.update(fields)
    return SourceView(**values)


def cases() -> list[dict]:
    """Each case: its views and labelled duplicate sets (IDs as strings)."""
    found = []
    for index, (subject, statements) in enumerate(CLASSES):
        views = [_view(text, i + 1, subject) for i, text in enumerate(statements)]
        found.append({"id": f"class-{index}", "kind": "class", "guard": "", "views": views,
                      "classes": [frozenset(str(v.memory_id) for v in views)]})
    for index, (guard, a, b, fields) in enumerate(LOOKALIKES):
        first = _view(a, 1, "lookalike")
        second = replace(_view(b, 2, "lookalike"), **fields)
        found.append({"id": f"lookalike-{index}", "kind": "lookalike", "guard": guard, "views": [first, second],
                      "classes": []})
    return found


def _components(merges: list[list[str]]) -> list[frozenset]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for group in merges:
        for member in group:
            find(member)
        for member in group[1:]:
            parent[find(member)] = find(group[0])
    roots: dict[str, set[str]] = {}
    for member in parent:
        roots.setdefault(find(member), set()).add(member)
    return [frozenset(members) for members in roots.values()]


def score() -> dict:

    covered = total = false_pairs = correct_pairs = 0
    per_case = []
    for case in cases():
        proposals = [p for p in rules.propose(case["views"]) if p.kind == "merge_equivalent"]
        components = _components([[str(ref.memory_id) for ref in p.inputs] for p in proposals])
        correct = sum(len(c & cls) * (len(c & cls) - 1) // 2 for c in components for cls in case["classes"])
        pairs = sum(len(c) * (len(c) - 1) // 2 for c in components)
        false_pairs += pairs - correct
        correct_pairs += correct
        total += len(case["classes"])
        hit = sum(1 for cls in case["classes"] if cls in set(components))
        covered += hit
        per_case.append({"id": case["id"], "kind": case["kind"], "guard": case["guard"], "covered": hit,
                         "false_merge_pairs": pairs - correct,
                         "reasons": sorted({p.reason for p in proposals})})
    source = Path(__file__).read_bytes()
    return {
        "bank": VERSION, "bank_sha256": hashlib.sha256(source).hexdigest(),
        "classes_total": total, "classes_covered": covered,
        "duplicate_set_coverage": round(covered / total, 4) if total else None,
        "lookalike_pairs": len(LOOKALIKES), "false_merge_pairs": false_pairs, "correct_merge_pairs": correct_pairs,
        "lost_facts": None, "cases": per_case,
    }


def main(argv=None) -> int:
    import os

    import django

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "veetbot.settings")
    django.setup()

    code = code_identity()  # when the run starts: commit, dirty flag, source digest
    report = {**score(), "code": code}
    text = json.dumps(report, indent=2, sort_keys=True)
    if args.output:
        with open(args.output, "x", encoding="utf-8") as handle:  # never replace a report
            handle.write(text + "\n")
    summary = {k: report[k] for k in ("duplicate_set_coverage", "classes_covered", "classes_total",
                                       "false_merge_pairs", "lookalike_pairs")}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

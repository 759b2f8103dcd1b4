"""reconsolidation-scorer@1: the pure scorer of the frozen reconsolidation corpus.

It reads two things only: the corpus (labels) and observations the harness collected from actual
store and trace state after an arm ran — committed merge operations, surviving original IDs,
rendered hypotheses, and probe answers (or, offline, the rendered evidence). A provider cannot
self-report any of these, and this module never asks it to. Pure: no Django, no database, no
I/O; it never imports runtime code and runtime code never imports it. It is not release
evidence by itself: collection, cost, source-evidence and policy/race gates are separate.

Rules (spec "Frozen evaluation contract"; README.md walks through each):

* Merges. Every committed ``merge_equivalent`` is the member set it merged. All merges of a case
  go through one union-find; every unordered pair inside each resulting component is scored, so
  transitive pairs through overlapping groups count. A pair is correct only when both members are
  in the same labelled duplicate class; every other pair is a false merge. A group with an
  unknown ID, a repeated member, or fewer than two distinct members is an invalid operation; its
  known members still join the union-find (an invalid operation never hides a false merge).
* Coverage. A duplicate class is covered only when one merged component is exactly that class:
  every member and nothing else.
* Survivors. A required survivor missing from the observation is a lost fact (counted for every
  case whose harness did not report failure: lost facts come only from actual observations). An
  unknown or repeated survivor ID is an invalid observation.
* Hypotheses. A match is the NFC/whitespace-normalised statement (otherwise exact, case
  included) plus exactly the labelled unordered support set. Matching is one-to-one: a repeated
  output is a false positive. Recall = unique matched labels / expected labels; precision =
  matched outputs / all outputs; no outputs gives precision None (undefined), so abstaining never
  passes. Empty, unknown or repeated support IDs make an invalid observation (and no match).
* Probes. Token F1 (reconsolidation/evidence/f1.py) against the aliases, counted only at F1 = 1. A
  missing answer scores zero. An unknown or repeated probe ID is an invalid observation. Offline,
  ``rendered_evidence`` covers a probe when some window of its tokens has F1 = 1 with an alias
  (the alias's normalised tokens appear contiguously, in any order within the window).
* Failure. A case fails when the harness reports it failed, when its observation is missing, or
  when it has any invalid operation or invalid observation. Failed cases stay in every
  denominator: their classes are uncovered, their probes and hypothesis matches zero (their
  outputs still count as outputs). Their false pairs and invalid operations still count.
* Aggregation. Integer counts are summed across cases (and across repeats with ``combine``)
  before dividing; an empty denominator gives None, and a gate whose value is None fails.
"""
from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional, Sequence

from pydantic import BaseModel, ConfigDict, model_validator

from reconsolidation.evidence.f1 import VERSION as F1_VERSION
from reconsolidation.evidence.f1 import answer_tokens, f1_tokens, max_f1

VERSION = "reconsolidation-scorer@1"

SPLITS = ("development", "holdout")
PROBE_KINDS = ("direct", "cross_session")

# Arms compared on identical seeds, clock, queries and context budget.
ORIGINAL_ARM = "original"  # existing maintenance only (the control)
MERGE_ARM = "merge"  # equivalence merging only
CONNECTIONS_ARM = "connections"  # merging plus summaries/connections
ARMS = (ORIGINAL_ARM, MERGE_ARM, CONNECTIONS_ARM)

DUPLICATE_SET_COVERAGE_FLOOR = Fraction(80, 100)
HYPOTHESIS_PRECISION_FLOOR = Fraction(80, 100)
HYPOTHESIS_RECALL_FLOOR = Fraction(60, 100)
CROSS_SESSION_LIFT_FLOOR = Fraction(10, 100)


# --------------------------------------------------------------------------------------------
# Observation schema (what the harness collects from store/trace state, per case)
# --------------------------------------------------------------------------------------------

class _Closed(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class HypothesisObservation(_Closed):
    statement: str
    support: list[str]  # original memory IDs the rendered hypothesis cites


class AnswerObservation(_Closed):
    probe_id: str
    answer: str


class RenderedEvidenceObservation(_Closed):
    probe_id: str
    text: str  # the context recall rendered for the probe question (offline mode, no answer model)


class CaseObservation(_Closed):
    case_id: str
    merges: list[list[str]]  # member set of each committed merge_equivalent operation
    survivors: list[str]  # originals still retrievable: live, or cited by a live merged record
    hypotheses: list[HypothesisObservation]
    answers: Optional[list[AnswerObservation]] = None
    rendered_evidence: Optional[list[RenderedEvidenceObservation]] = None
    failed: bool  # the harness could not complete this case

    @model_validator(mode="after")
    def _one_probe_mode(self) -> "CaseObservation":
        if self.answers is not None and self.rendered_evidence is not None:
            raise ValueError("an observation holds answers or rendered_evidence, not both")
        return self

    @property
    def probe_mode(self) -> Optional[str]:
        if self.answers is not None:
            return "answers"
        if self.rendered_evidence is not None:
            return "rendered_evidence"
        return None


# --------------------------------------------------------------------------------------------
# Labels (read from the corpus; never handed to runtime code)
# --------------------------------------------------------------------------------------------

def normalize_statement(text: str) -> str:
    """NFC, whitespace runs collapsed to one space, ends trimmed; nothing else changes."""
    return " ".join(unicodedata.normalize("NFC", text).split())


@dataclass(frozen=True)
class _Probe:
    id: str
    kind: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class _Labels:
    case_id: str
    split: str
    memory_ids: frozenset[str]
    classes: tuple[frozenset[str], ...]
    required_survivors: frozenset[str]
    hypotheses: tuple[tuple[str, frozenset[str]], ...]
    probes: tuple[_Probe, ...]


def _labels(case: Mapping[str, Any]) -> _Labels:
    """The scorer's view of one case; raises ValueError on labels that break the corpus rules."""
    case_id = case["id"]

    def refuse(message: str) -> None:
        raise ValueError(f"case {case_id}: {message}")

    if case["split"] not in SPLITS:
        refuse(f"unknown split {case['split']!r}")
    memory_ids = [m["id"] for m in case["bank"]["memories"]]
    known = frozenset(memory_ids)
    if len(known) != len(memory_ids):
        refuse("repeated memory ID in the bank")
    classes: list[frozenset[str]] = []
    for members in case["duplicate_classes"]:
        cls = frozenset(members)
        if len(cls) != len(members) or len(cls) < 2 or not cls <= known:
            refuse("a duplicate class needs two or more distinct known members")
        if any(cls & other for other in classes):
            refuse("duplicate classes overlap")
        classes.append(cls)
    survivors = case["required_survivors"]
    if len(set(survivors)) != len(survivors) or not set(survivors) <= known:
        refuse("required survivors must be distinct known IDs")
    hypotheses: list[tuple[str, frozenset[str]]] = []
    for hypothesis in case["hypotheses"]:
        support = frozenset(hypothesis["support"])
        if not support or len(support) != len(hypothesis["support"]) or not support <= known:
            refuse("a hypothesis needs a non-empty set of known support IDs")
        key = (normalize_statement(hypothesis["statement"]), support)
        if key in hypotheses:
            refuse("repeated hypothesis label")
        hypotheses.append(key)
    probes: list[_Probe] = []
    for probe in case["probes"]:
        if probe["kind"] not in PROBE_KINDS or not probe["answers"]:
            refuse(f"probe {probe['id']}: needs a known kind and at least one answer")
        if any(p.id == probe["id"] for p in probes):
            refuse(f"repeated probe ID {probe['id']}")
        probes.append(_Probe(probe["id"], probe["kind"], tuple(probe["answers"])))
    return _Labels(case_id, case["split"], known, tuple(classes), frozenset(survivors),
                   tuple(hypotheses), tuple(probes))


# --------------------------------------------------------------------------------------------
# One case
# --------------------------------------------------------------------------------------------

class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, item: str) -> str:
        self.parent.setdefault(item, item)
        root = item
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[item] != root:
            self.parent[item], item = root, self.parent[item]
        return root

    def union(self, a: str, b: str) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[max(root_a, root_b)] = min(root_a, root_b)

    def components(self) -> list[frozenset[str]]:
        groups: dict[str, set[str]] = {}
        for item in self.parent:
            groups.setdefault(self.find(item), set()).add(item)
        return [frozenset(group) for group in groups.values() if len(group) > 1]


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def _evidence_covers(text: str, aliases: Sequence[str]) -> bool:
    tokens = answer_tokens(text)
    for alias in aliases:
        gold = answer_tokens(alias)
        width = len(gold)
        windows = (tokens[i:i + width] for i in range(len(tokens) - width + 1))
        if width and any(f1_tokens(window, gold) == 1.0 for window in windows):
            return True
    return False


def _zero_probes() -> dict[str, int]:
    return {kind: 0 for kind in PROBE_KINDS}


def _score_case(labels: _Labels, observation: Optional[CaseObservation]) -> dict:
    probes_total = _zero_probes()
    for probe in labels.probes:
        probes_total[probe.kind] += 1
    result = {
        "split": labels.split,
        "observed": observation is not None,
        "harness_failed": bool(observation and observation.failed),
        "failed": True,
        "false_merge_pairs": 0,
        "correct_merge_pairs": 0,
        "invalid_operations": 0,
        "invalid_observations": 0,
        "lost_facts": 0,
        "lost_fact_ids": [],
        "classes_total": len(labels.classes),
        "classes_covered": 0,
        "hypotheses_expected": len(labels.hypotheses),
        "hypotheses_output": 0,
        "hypotheses_matched": 0,
        "probes_total": probes_total,
        "probes_correct": _zero_probes(),
        "probe_mode": None,
        "problems": [],
    }
    if observation is None:
        result["problems"].append("no observation for this case")
        return result
    problems: list[str] = result["problems"]

    # Merges: union-find over every operation; score every pair of every component.
    union = _UnionFind()
    for index, group in enumerate(observation.merges):
        unknown = sorted({m for m in group if m not in labels.memory_ids})
        repeated = sorted(m for m, n in Counter(group).items() if n > 1)
        distinct = list(dict.fromkeys(m for m in group if m in labels.memory_ids))
        if unknown or repeated or len(set(group)) < 2:
            result["invalid_operations"] += 1
            reason = ("unknown IDs" if unknown else "repeated members" if repeated
                      else "fewer than two members")
            problems.append(f"merges[{index}]: invalid operation ({reason})")
        for member in distinct:
            union.find(member)
        for member in distinct[1:]:
            union.union(distinct[0], member)
    components = union.components()
    for component in components:
        correct = sum(_pairs(len(component & cls)) for cls in labels.classes)
        result["correct_merge_pairs"] += correct
        result["false_merge_pairs"] += _pairs(len(component)) - correct
    exact = set(components)
    covered = sum(1 for cls in labels.classes if cls in exact)

    # Survivors.
    counts = Counter(observation.survivors)
    for member, n in sorted(counts.items()):
        if member not in labels.memory_ids:
            result["invalid_observations"] += n
            problems.append(f"survivors: unknown ID {member}")
        elif n > 1:
            result["invalid_observations"] += n - 1
            problems.append(f"survivors: {member} listed {n} times")
    if not observation.failed:
        lost = sorted(labels.required_survivors - set(counts))
        result["lost_facts"] = len(lost)
        result["lost_fact_ids"] = lost

    # Hypotheses: one-to-one against the labels.
    unmatched = set(labels.hypotheses)
    matched = 0
    result["hypotheses_output"] = len(observation.hypotheses)
    for index, hypothesis in enumerate(observation.hypotheses):
        support = Counter(hypothesis.support)
        unknown = any(m not in labels.memory_ids for m in support)
        if not support or unknown or any(n > 1 for n in support.values()):
            result["invalid_observations"] += 1
            problems.append(f"hypotheses[{index}]: support must be distinct known original IDs")
            continue
        key = (normalize_statement(hypothesis.statement), frozenset(support))
        if key in unmatched:
            unmatched.remove(key)
            matched += 1

    # Probes.
    result["probe_mode"] = observation.probe_mode
    if observation.answers is not None:
        entries: Sequence[AnswerObservation | RenderedEvidenceObservation] = observation.answers
    else:
        entries = observation.rendered_evidence or []
    known_probes = {p.id for p in labels.probes}
    seen = Counter(entry.probe_id for entry in entries)
    for probe_id, n in sorted(seen.items()):
        if probe_id not in known_probes:
            result["invalid_observations"] += n
            problems.append(f"probes: unknown probe ID {probe_id}")
        elif n > 1:
            result["invalid_observations"] += n - 1
            problems.append(f"probes: probe ID {probe_id} given {n} times")
    by_id = {entry.probe_id: entry for entry in entries}
    correct_probes = _zero_probes()
    for probe in labels.probes:
        entry = by_id.get(probe.id)
        if entry is None:
            continue
        if isinstance(entry, AnswerObservation):
            hit = max_f1(entry.answer, probe.answers) == 1.0
        else:
            hit = _evidence_covers(entry.text, probe.answers)
        correct_probes[probe.kind] += hit

    invalid = result["invalid_operations"] + result["invalid_observations"]
    failed = observation.failed or invalid > 0
    result["failed"] = failed
    if observation.failed:
        problems.append("the harness reported this case failed")
    if not failed:
        result["classes_covered"] = covered
        result["hypotheses_matched"] = matched
        result["probes_correct"] = correct_probes
    return result


# --------------------------------------------------------------------------------------------
# Splits, runs and repeats
# --------------------------------------------------------------------------------------------

_COUNTS = (
    "cases", "failed_cases", "missing_cases", "false_merge_pairs", "correct_merge_pairs",
    "invalid_operations", "lost_facts", "invalid_observations", "classes_total", "classes_covered",
    "hypotheses_expected", "hypotheses_output", "hypotheses_matched",
)


def ratio(numerator: int, denominator: int) -> Optional[float]:
    """``numerator / denominator``, or None for an empty denominator (never a success)."""
    return None if denominator == 0 else numerator / denominator


def _empty_split() -> dict:
    return {**{name: 0 for name in _COUNTS}, "probes_total": _zero_probes(),
            "probes_correct": _zero_probes(), "probe_mode": None}


def _merge_mode(a: Optional[str], b: Optional[str]) -> Optional[str]:
    if a is not None and b is not None and a != b:
        raise ValueError(f"observations mix probe modes ({a} and {b}); score each mode separately")
    return a or b


def _add(total: dict, part: Mapping[str, Any]) -> None:
    for name in _COUNTS:
        total[name] += part[name]
    for kind in PROBE_KINDS:
        total["probes_total"][kind] += part["probes_total"][kind]
        total["probes_correct"][kind] += part["probes_correct"][kind]
    total["probe_mode"] = _merge_mode(total["probe_mode"], part["probe_mode"])


def _finish(total: dict) -> dict:
    """Ratios from the summed integer counts (never an average of per-case ratios)."""
    total["duplicate_set_coverage"] = ratio(total["classes_covered"], total["classes_total"])
    total["precision"] = ratio(total["hypotheses_matched"], total["hypotheses_output"])
    total["recall"] = ratio(total["hypotheses_matched"], total["hypotheses_expected"])
    correct, probes = total["probes_correct"], total["probes_total"]
    total["direct_recall"] = ratio(correct["direct"], probes["direct"])
    total["cross_session_coverage"] = ratio(correct["cross_session"], probes["cross_session"])
    return total


def score(
    corpus: Mapping[str, Any], observations: Iterable[CaseObservation | Mapping[str, Any]],
) -> dict:
    """Score one run of one arm: a report with per-split figures and per-case details.

    Every corpus case is scored; a case without an observation is a failed case. An observation
    of an unknown case or a second observation of a case is a collection error (ValueError), as
    is a run that mixes probe modes.
    """
    labels = [_labels(case) for case in corpus["cases"]]
    by_case = {label.case_id: label for label in labels}
    if len(by_case) != len(labels):
        raise ValueError("the corpus repeats a case ID")
    observed: dict[str, CaseObservation] = {}
    for item in observations:
        observation = (item if isinstance(item, CaseObservation)
                       else CaseObservation.model_validate(item))
        if observation.case_id not in by_case:
            raise ValueError(f"observation of an unknown case {observation.case_id!r}")
        if observation.case_id in observed:
            raise ValueError(f"more than one observation of case {observation.case_id!r}")
        observed[observation.case_id] = observation

    cases = {label.case_id: _score_case(label, observed.get(label.case_id)) for label in labels}
    splits = {split: _empty_split() for split in SPLITS}
    for case in cases.values():
        total = splits[case["split"]]
        _add(total, {**case, "cases": 1, "failed_cases": int(case["failed"]),
                     "missing_cases": int(not case["observed"])})
    mode = None
    for total in splits.values():
        mode = _merge_mode(mode, total["probe_mode"])
        _finish(total)
    return {
        "scorer": VERSION, "f1": F1_VERSION, "corpus": corpus.get("version"), "repeats": 1,
        "splits": splits, "cases": cases,
    }


def combine(reports: Sequence[Mapping[str, Any]]) -> dict:
    """Several repeats of one arm as one report: integer counts summed, ratios recomputed.

    Per-case details stay in the individual reports.
    """
    if not reports:
        raise ValueError("nothing to combine")
    identity = {(r["scorer"], r["f1"], r["corpus"]) for r in reports}
    if len(identity) != 1:
        raise ValueError(f"reports of different scorers or corpora: {sorted(identity)}")
    scorer, f1, corpus = identity.pop()
    splits = {}
    for split in SPLITS:
        total = _empty_split()
        for report in reports:
            _add(total, report["splits"][split])
        splits[split] = _finish(total)
    repeats = sum(r["repeats"] for r in reports)
    return {"scorer": scorer, "f1": f1, "corpus": corpus, "repeats": repeats, "splits": splits}


# --------------------------------------------------------------------------------------------
# Gates
# --------------------------------------------------------------------------------------------

_Number = Optional[Fraction | int]


def _shown(value: _Number) -> Optional[float | int]:
    return float(value) if isinstance(value, Fraction) else value


def _at_most(value: _Number, limit: Fraction | int) -> dict:
    passed = value is not None and value <= limit
    return {"value": _shown(value), "threshold": _shown(limit), "passed": passed}


def _at_least(value: _Number, floor: Fraction | int) -> dict:
    passed = value is not None and value >= floor
    return {"value": _shown(value), "threshold": _shown(floor), "passed": passed}


def _fraction(numerator: int, denominator: int) -> Optional[Fraction]:
    return None if denominator == 0 else Fraction(numerator, denominator)


def _figures(report_by_arm: Mapping[str, Mapping[str, Any]], arm: str,
             split: str) -> Optional[Mapping[str, Any]]:
    report = report_by_arm.get(arm)
    return None if report is None else report["splits"][split]


def _lift(arm: Optional[Mapping], control: Optional[Mapping], kind: str) -> Optional[Fraction]:
    """Arm minus control on one probe kind; None if either is undefined or the two runs used
    different probe modes (answers against rendered evidence is no comparison)."""
    if arm is None or control is None or arm["probe_mode"] != control["probe_mode"]:
        return None
    a = _fraction(arm["probes_correct"][kind], arm["probes_total"][kind])
    c = _fraction(control["probes_correct"][kind], control["probes_total"][kind])
    return None if a is None or c is None else a - c


def gates(report_by_arm: Mapping[str, Mapping[str, Any]]) -> dict[str, dict]:
    """The release floors per split: ``{"<split>/<arm>/<gate>": {"value", "threshold", "passed"}}``.

    ``report_by_arm`` maps "original", "merge" and "connections" to ``score``/``combine``
    reports. A missing arm or an undefined value makes the gate fail. Comparisons use exact
    fractions of the integer counts, so no float rounding decides a threshold.

    * merge and connections: zero false merge pairs, zero lost facts, duplicate-set coverage
      >= 0.80, and no direct-recall regression against the original arm (the spec requires the
      equivalence-only arm to pass this on its own; the release table requires it of the whole
      feature, hence the connections arm too);
    * connections: hypothesis precision >= 0.80 and recall >= 0.60 on every split whose labels
      expect hypotheses; cross-session coverage at least 0.10 above the original arm.
    """
    results: dict[str, dict] = {}
    for split in SPLITS:
        original = _figures(report_by_arm, ORIGINAL_ARM, split)
        for arm in (MERGE_ARM, CONNECTIONS_ARM):
            figures = _figures(report_by_arm, arm, split)
            prefix = f"{split}/{arm}"
            false_pairs = lost = coverage = None
            if figures is not None:
                false_pairs, lost = figures["false_merge_pairs"], figures["lost_facts"]
                coverage = _fraction(figures["classes_covered"], figures["classes_total"])
            results[f"{prefix}/false_merge_pairs"] = _at_most(false_pairs, 0)
            results[f"{prefix}/lost_facts"] = _at_most(lost, 0)
            results[f"{prefix}/duplicate_set_coverage"] = _at_least(
                coverage, DUPLICATE_SET_COVERAGE_FLOOR)
            results[f"{prefix}/direct_recall_change"] = _at_least(
                _lift(figures, original, "direct"), 0)

        connections = _figures(report_by_arm, CONNECTIONS_ARM, split)
        prefix = f"{split}/{CONNECTIONS_ARM}"
        if connections is None or connections["hypotheses_expected"] > 0:
            precision = recall = None
            if connections is not None:
                matched = connections["hypotheses_matched"]
                precision = _fraction(matched, connections["hypotheses_output"])
                recall = _fraction(matched, connections["hypotheses_expected"])
            results[f"{prefix}/hypothesis_precision"] = _at_least(
                precision, HYPOTHESIS_PRECISION_FLOOR)
            results[f"{prefix}/hypothesis_recall"] = _at_least(recall, HYPOTHESIS_RECALL_FLOOR)
        results[f"{prefix}/cross_session_coverage_lift"] = _at_least(
            _lift(connections, original, "cross_session"), CROSS_SESSION_LIFT_FLOOR)
    return results


def all_passed(results: Mapping[str, Mapping[str, Any]]) -> bool:
    """True only for a non-empty set of gates that all passed."""
    return bool(results) and all(gate["passed"] for gate in results.values())

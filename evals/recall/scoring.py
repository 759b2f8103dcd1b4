"""Stage recall of required evidence: a pure scorer over labelled needs and observed stage IDs.

A need's recall at a stage is the fraction of its required evidence IDs present in that
stage's ID list: ``candidate`` = every candidate the arms returned (``stages.candidate_ids``),
``ranked@K`` = the first K fused IDs (``stages.ranked_ids[:K]``), ``rendered`` = what the
context budget kept (``stages.rendered_ids``). Aggregates add integer counts (found IDs,
required IDs) before dividing, so a need with three required IDs weighs three times one with
one; a group with nothing required reports ``None`` — never 0 and never success. Alongside,
``complete`` counts needs whose every required ID was found (the multi-fact view).

Precision of the rendered context, beside recall (answerable needs, same groups):
``precision`` = rendered items that are required evidence ÷ rendered items, counts added
before dividing (a need rendering nothing adds nothing). ``unrelated`` counts rendered items
that are neither required evidence nor one of the need's own labelled distractors or
invalid memories — noise and other needs' facts; ``not_required`` counts every rendered
item that is not required evidence (labelled distractors included). ``withheld_required``
counts required IDs the relevance floor withheld from rendering (``below_floor_ids``).

Needs without required evidence (information never supplied, expired or retracted only) are
kept out of every recall figure and reported on their own: how often a labelled distractor or
a lifecycle-invalid memory reached the candidates or the rendered context.

An observation whose effective channel differs from the requested one (a recorded
fallback, e.g. dense that ran sparse) is not an observation of the requested channel: it is
counted under ``fallbacks`` and excluded from that channel's figures.

This module only reads what it is given. It never touches a database, never calls the
retriever, and never hands labels to retrieval: the runner gives the retriever the query
text, the ceiling and ``as_of`` only, and scores afterwards.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

TOP_K = 20
STAGES = ("candidate", "ranked", "rendered")


@dataclass(frozen=True)
class NeedLabel:
    """What the scorer knows about a need (the retriever never sees this)."""

    id: str
    required: tuple[str, ...]
    distractors: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)  # e.g. family, split, kind


@dataclass(frozen=True)
class Observation:
    """The stage IDs one recall reported for one need on one requested channel."""

    need_id: str
    channel: str  # requested
    effective_channel: str
    candidate_ids: tuple[str, ...]
    ranked_ids: tuple[str, ...]
    rendered_ids: tuple[str, ...]
    fallback_reason: str = ""
    dense_ids: tuple[str, ...] = ()
    lexical_ids: tuple[str, ...] = ()
    structured_ids: tuple[str, ...] = ()
    below_floor_ids: tuple[str, ...] = ()

    @property
    def fallback(self) -> bool:
        return self.effective_channel != self.channel


def stage_ids(observation: Observation, stage: str, top_k: int = TOP_K) -> tuple[str, ...]:
    if stage == "candidate":
        return observation.candidate_ids
    if stage == "ranked":
        return observation.ranked_ids[:top_k]
    if stage == "rendered":
        return observation.rendered_ids
    raise ValueError(f"unknown stage {stage!r}")


def found(required: Iterable[str], ids: Iterable[str]) -> int:
    """How many distinct required IDs appear in ``ids``."""
    present = set(ids)
    return sum(1 for r in set(required) if r in present)


def ratio(numerator: int, denominator: int) -> Optional[float]:
    """``numerator / denominator``, or None for an empty denominator (never a success)."""
    return None if denominator == 0 else numerator / denominator


@dataclass
class Tally:
    hits: int = 0
    required: int = 0
    needs: int = 0
    complete: int = 0

    def add(self, hits: int, required: int) -> None:
        self.hits += hits
        self.required += required
        self.needs += 1
        self.complete += hits == required

    def as_dict(self) -> dict:
        return {
            "recall": ratio(self.hits, self.required), "hits": self.hits, "required": self.required,
            "needs": self.needs, "complete_needs": self.complete,
            "complete_rate": ratio(self.complete, self.needs),
        }


@dataclass
class PrecisionTally:
    rendered: int = 0
    required_rendered: int = 0
    not_required: int = 0
    unrelated: int = 0
    withheld_required: int = 0
    needs: int = 0

    def add(self, need: NeedLabel, observation: Observation) -> None:
        required, labelled = set(need.required), set(need.distractors) | set(need.invalid)
        rendered = set(observation.rendered_ids)
        self.needs += 1
        self.rendered += len(rendered)
        self.required_rendered += len(rendered & required)
        self.not_required += len(rendered - required)
        self.unrelated += len(rendered - required - labelled)
        self.withheld_required += len(set(observation.below_floor_ids) & required)

    def as_dict(self) -> dict:
        return {
            "precision": ratio(self.required_rendered, self.rendered), "rendered": self.rendered,
            "required_rendered": self.required_rendered, "not_required_rendered": self.not_required,
            "unrelated_rendered": self.unrelated, "withheld_required": self.withheld_required,
            "needs": self.needs, "unrelated_per_need": ratio(self.unrelated, self.needs),
        }


def _grouped(tallies: dict[str, Tally], keys: Iterable[str]) -> dict:
    """Every expected group appears, empty ones as None recall."""
    return {key: tallies.get(key, Tally()).as_dict() for key in keys}


def score_channel(
    needs: Sequence[NeedLabel], observations: Sequence[Observation], *, top_k: int = TOP_K,
    group_by: Sequence[str] = ("family", "split", "kind"),
) -> dict:
    """Figures for one requested channel (all ``observations`` must be of that channel)."""
    labels = {n.id: n for n in needs}
    channels = {o.channel for o in observations}
    if len(channels) > 1:
        raise ValueError(f"observations of several channels: {sorted(channels)}")
    unknown_ids = {o.need_id for o in observations} - set(labels)
    if unknown_ids:
        raise ValueError(f"observations of unlabelled needs: {sorted(unknown_ids)[:5]}")
    seen = Counter(o.need_id for o in observations)
    repeated = [need for need, count in seen.items() if count > 1]
    if repeated:
        raise ValueError(f"more than one observation of a need: {sorted(repeated)[:5]}")

    groups = {key: sorted({n.tags[key] for n in needs if key in n.tags}) for key in group_by}
    stage_names = {"candidate": "candidate", "ranked": f"ranked@{top_k}", "rendered": "rendered"}
    overall = {stage: Tally() for stage in STAGES}
    by_group = {stage: {key: defaultdict(Tally) for key in group_by} for stage in STAGES}
    arms = {arm: Tally() for arm in ("lexical", "structured", "dense")}
    precision = PrecisionTally()
    precision_by = {key: defaultdict(PrecisionTally) for key in group_by}
    fallbacks: Counter[str] = Counter()
    unanswerable = {"needs": 0, "distractor_in_candidates": 0, "distractor_rendered": 0,
                    "invalid_in_candidates": 0, "invalid_rendered": 0, "rendered_items": 0}
    leaks = {"needs_with_invalid_labels": 0, "invalid_in_candidates": 0, "invalid_rendered": 0}
    distractor_above = {"needs_with_distractors": 0, "distractor_ranked_above_all_evidence": 0}

    for observation in observations:
        need = labels[observation.need_id]
        if observation.fallback:
            fallbacks[observation.fallback_reason or "unspecified"] += 1
            continue
        candidates, rendered = set(observation.candidate_ids), set(observation.rendered_ids)
        if need.invalid:
            leaks["needs_with_invalid_labels"] += 1
            leaks["invalid_in_candidates"] += any(i in candidates for i in need.invalid)
            leaks["invalid_rendered"] += any(i in rendered for i in need.invalid)
        if not need.required:
            unanswerable["needs"] += 1
            unanswerable["distractor_in_candidates"] += any(d in candidates for d in need.distractors)
            unanswerable["distractor_rendered"] += any(d in rendered for d in need.distractors)
            unanswerable["invalid_in_candidates"] += any(i in candidates for i in need.invalid)
            unanswerable["invalid_rendered"] += any(i in rendered for i in need.invalid)
            unanswerable["rendered_items"] += len(rendered)
            continue
        required = len(set(need.required))
        precision.add(need, observation)
        for key in group_by:
            if key in need.tags:
                precision_by[key][need.tags[key]].add(need, observation)
        for stage in STAGES:
            hits = found(need.required, stage_ids(observation, stage, top_k))
            overall[stage].add(hits, required)
            for key in group_by:
                if key in need.tags:
                    by_group[stage][key][need.tags[key]].add(hits, required)
        for arm, ids in (("lexical", observation.lexical_ids), ("structured", observation.structured_ids),
                         ("dense", observation.dense_ids)):
            arms[arm].add(found(need.required, ids), required)
        if need.distractors:
            distractor_above["needs_with_distractors"] += 1
            rank = {i: n for n, i in enumerate(observation.ranked_ids)}
            best_evidence = min((rank[r] for r in need.required if r in rank), default=None)
            best_distractor = min((rank[d] for d in need.distractors if d in rank), default=None)
            if best_distractor is not None and (best_evidence is None or best_distractor < best_evidence):
                distractor_above["distractor_ranked_above_all_evidence"] += 1

    missing = len(set(labels) - set(seen))
    return {
        "observations": len(observations),
        "fallbacks": sum(fallbacks.values()),
        "fallback_reasons": dict(sorted(fallbacks.items())),
        "needs_without_observation": missing,
        "stages": {
            stage_names[stage]: {
                "overall": overall[stage].as_dict(),
                **{f"by_{key}": _grouped(by_group[stage][key], groups[key]) for key in group_by},
            }
            for stage in STAGES
        },
        # Rendered precision beside rendered recall (answerable needs).
        "precision": {
            "overall": precision.as_dict(),
            **{f"by_{key}": {g: precision_by[key].get(g, PrecisionTally()).as_dict() for g in groups[key]}
               for key in group_by},
        },
        # Candidate recall of each arm's own list (empty lists where an arm did not run).
        "arms": {arm: tally.as_dict() for arm, tally in arms.items()},
        "unanswerable": unanswerable,
        "invalid_leaks": leaks,
        "distractors": distractor_above,
    }


def score(
    needs: Sequence[NeedLabel], observations: Sequence[Observation], *, top_k: int = TOP_K,
    group_by: Sequence[str] = ("family", "split", "kind"),
) -> dict:
    """``{channel: score_channel(...)}`` for every requested channel in ``observations``, in
    the order the channels first appear."""
    by_channel: dict[str, list[Observation]] = {}
    for observation in observations:
        by_channel.setdefault(observation.channel, []).append(observation)
    return {channel: score_channel(needs, obs, top_k=top_k, group_by=group_by)
            for channel, obs in by_channel.items()}


def need_outcome(need: NeedLabel, observation: Observation, *, top_k: int = TOP_K) -> dict:
    """A compact per-need record for the report: ranks of the required IDs and stage hits."""
    rank = {i: n + 1 for n, i in enumerate(observation.ranked_ids)}
    return {
        "need": need.id,
        "channel": observation.channel,
        "effective_channel": observation.effective_channel,
        "required_ranks": [rank.get(r) for r in need.required],
        "found": {stage: found(need.required, stage_ids(observation, stage, top_k)) for stage in STAGES},
        "required": len(set(need.required)),
        "distractor_ranks": [rank.get(d) for d in need.distractors],
        "invalid_in_candidates": sum(1 for i in need.invalid if i in set(observation.candidate_ids)),
        "candidates": len(observation.candidate_ids),
        "rendered": len(observation.rendered_ids),
        "below_floor": len(observation.below_floor_ids),
    }

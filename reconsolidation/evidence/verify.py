"""Activation evidence for unattended reconsolidation: is this comparison report measured
evidence for the code and configuration that is running now?

``verify(report_bytes, deployment)`` answers with ``None`` (admitted) or a ``Refusal``: a
finite reason code plus the name of the field, gate, arm/repeat or repository path that
differs — never a value or any text from the report. It trusts no number in the report:

* **Recomputed.** Every gate is recomputed from the report's per-case observations with the
  pinned ``reconsolidation-scorer@1`` (``score`` per arm and repeat, ``combine``, ``gates``,
  ``all_passed``), and the report's per-repeat figures, combined figures, failure census,
  gates and ``passed`` must equal the recomputation. A hand-edited number or flag differs.
* **Complete.** Both splits, every corpus case in every repeat of every arm (exactly once),
  at least ``REQUIRED_REPEATS`` repeats, the runner's own budgets and approvals
  (``runner.Configuration.as_dict``), no case filter; a failed case stays in the run as a
  failed observation — an omitted one is refused, never scored as missing.
* **Bound.** The runner version and its pinned file digests, the corpus/scorer/F1/manifest
  digests (``runner.check_pins`` on the current bytes, then equal to the report's), the
  provider, model, prompt digest, schema digest and policy (``reconsolidation.mode
  .provider_identity``), the recall channel and embedding, and the running code.

The running code is bound by an **input manifest**, not by a commit: ``code.files`` in the
report maps every file under ``CODE_ROOTS`` to its SHA-256 (``code_manifest()``), and the
running process's files must hash the same, path for path — a deployment without a git
checkout, or a commit that touched nothing that runs, keeps its evidence; any change to a
file that runs withdraws it. The measurement must also say ``code.dirty: false``.

What reports lack today: ``reconsolidation-runner@2`` records neither the per-case
observations nor the code manifest, so every report it writes is refused
(``evidence_observations_missing``; then ``evidence_code_manifest_missing``). A runner that
produces evidence records ``observations`` = ``{arm: [[observation, ...] per repeat]}`` —
exactly the observation dicts ``runner.run`` scores, ``seconds``/``error`` included — and
``code.files`` = ``code_manifest()``. Until then no report is admissible, which is the
honest answer.

Reason codes (``evidence_`` +): ``unreadable``, ``malformed``; ``runner_version_mismatch``,
``runner_unpinned``, ``runner_file_mismatch``; ``subset_split``, ``subset_cases``,
``repeats_too_few``, ``arm_missing``, ``configuration_differs``; ``corpus_unknown``,
``pinned_files_changed``, ``{corpus,scorer,f1,manifest}_digest_mismatch``; ``code_dirty``,
``code_manifest_missing``, ``code_file_{mismatch,missing,unmeasured}``;
``{name,model,prompt_digest,schema_digest,policy,recall_channel,embedding}_mismatch``,
``label_leaks``, ``usage_unknown``; ``observations_missing``, ``repeat_missing``,
``case_{omitted,repeated,unknown}``, ``observation_malformed``, ``arm_unknown``;
``arm_figures_differ``, ``gate_{differs,missing,unknown}``, ``passed_differs``, ``gate_failed``.

This module reads the corpus labels only to score; nothing it reads reaches a provider or
dreaming. It never writes and never raises for a bad report: every failure is a Refusal.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from reconsolidation.evidence import pins, scorer
from reconsolidation.evidence.pins import Configuration, PinsChanged

REQUIRED_REPEATS = 3  # spec: "three complete seeded repeats"
# What runs: the apps and the dependency pins. The evaluation code that measured them is bound
# through the manifest's runner pins (``pins``), so a deployment needs no ``evals/``.
CODE_ROOTS = ("memory", "recall", "reconsolidation", "review_ui", "veetbot", "requirements.txt", "pyproject.toml")
# Runner bookkeeping beside each scored observation (runner._scored drops the same keys).
BOOKKEEPING_KEYS = ("seconds", "error", "channels", "dreaming", "spend_usd")
PROVIDER_FIELDS = ("name", "model", "prompt_digest", "schema_digest", "policy")
RECALL_FIELDS = ("recall_channel", "embedding")
PIN_NAMES = ("corpus", "scorer", "f1", "manifest")


@dataclass(frozen=True)
class Refusal:
    reason: str  # a fixed code: evidence_<what>
    field: str = ""  # which field / gate / arm/repeat / repository path; never a value


@dataclass(frozen=True)
class Deployment:
    """What is running: provider identity (``PROVIDER_FIELDS``), recall (``RECALL_FIELDS``)
    and the code manifest."""
    provider: Mapping[str, Any]
    recall: Mapping[str, Any]
    code_files: Mapping[str, str]


class _Refused(Exception):
    def __init__(self, reason: str, field: str = "") -> None:
        super().__init__(reason)
        self.refusal = Refusal(reason, field)


def code_manifest() -> dict[str, str]:
    """SHA-256 of every file under ``CODE_ROOTS`` (``.py`` below a folder), keyed by
    repository path: what a report records as ``code.files`` and what running code is held to."""
    files: list[Path] = []
    for root in CODE_ROOTS:
        path = pins.REPO / root
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return {str(path.relative_to(pins.REPO)): pins.sha256_file(path)
            for path in sorted(set(files)) if "__pycache__" not in path.parts}


@lru_cache(maxsize=1)
def running_code_manifest() -> dict[str, str]:
    """``code_manifest()`` once per process: the code a process runs is what it imported, so
    its first admission check (``check_startup`` at worker start) fixes it."""
    return code_manifest()


def _normal(value: Any) -> Any:
    """As it reads back from the report's JSON (the runner writes with ``default=str``)."""
    return json.loads(json.dumps(value, default=str))


def _first_difference(recorded: Any, recomputed: Any, path: str) -> Optional[str]:
    """The path of the first field where two JSON values differ (keys, not values, named)."""
    if isinstance(recorded, dict) and isinstance(recomputed, dict):
        for key in sorted(set(recorded) | set(recomputed), key=str):
            if key not in recorded or key not in recomputed:
                return f"{path}/{key}"
            found = _first_difference(recorded[key], recomputed[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(recomputed, list) and len(recorded) == len(recomputed):
        for index, (a, b) in enumerate(zip(recorded, recomputed)):
            found = _first_difference(a, b, f"{path}/{index}")
            if found:
                return found
        return None
    same = type(recorded) is type(recomputed) and recorded == recomputed
    return None if same else path


def _section(report: Mapping, name: str) -> dict:
    value = report.get(name)
    if not isinstance(value, dict):
        raise _Refused("evidence_malformed", name)
    return value


# --------------------------------------------------------------------------------------------
# Recomputation (the report-assembly steps of runner.run, which are inline there and pinned)
# --------------------------------------------------------------------------------------------

def recompute(corpus: Mapping, observations_by_arm: Mapping[str, Sequence[Sequence[Mapping]]],
              splits: Sequence[str] = scorer.SPLITS) -> dict:
    """``arms``, ``gates`` and ``passed`` of a report, from its observations alone, as
    ``runner.run`` assembles them: each repeat scored over ``corpus``, repeats combined,
    per-repeat split figures, a per-case failure census, gates of ``splits``."""
    arms: dict[str, dict] = {}
    for arm, repeats in observations_by_arm.items():
        reports, census = [], {}
        for observations in repeats:
            scored = [{k: v for k, v in o.items() if k not in BOOKKEEPING_KEYS} for o in observations]
            reports.append(scorer.score(corpus, scored))
            for observation in observations:
                entry = census.setdefault(observation["case_id"], {"failed": 0, "errors": [], "seconds": []})
                entry["failed"] += int(observation["failed"])
                entry["seconds"].append(observation["seconds"])
                if observation.get("error"):
                    entry["errors"].append(observation["error"])
        arms[arm] = {**scorer.combine(reports),
                     "per_repeat": [dict(r["splits"]) for r in reports], "cases": census}
    gate_results = {name: value for name, value in scorer.gates(arms).items() if name.split("/")[0] in splits}
    return {"arms": arms, "gates": gate_results, "passed": scorer.all_passed(gate_results)}


# --------------------------------------------------------------------------------------------
# The checks, cheapest first
# --------------------------------------------------------------------------------------------

def _bind_runner(report: Mapping, configuration: Mapping) -> None:
    """The report was measured by this runner version, with the runner files its corpus's
    manifest pins (the runner refuses to measure otherwise)."""
    if report.get("runner") != pins.RUNNER_VERSION:
        raise _Refused("evidence_runner_version_mismatch", "runner")
    recorded = _section(report, "pins").get("runner")
    if not isinstance(recorded, dict) or recorded.get("version") != pins.RUNNER_VERSION:
        raise _Refused("evidence_runner_version_mismatch", "pins/runner/version")
    if recorded.get("pinned") is not True:
        raise _Refused("evidence_runner_unpinned", "pins/runner/pinned")
    files = recorded.get("files")
    if not isinstance(files, dict):
        raise _Refused("evidence_malformed", "pins/runner/files")
    if configuration.get("corpus") not in pins.CORPORA:
        return  # refused as evidence_corpus_unknown with the other pins
    try:
        manifest = json.loads(pins.CORPORA[configuration["corpus"]][1].read_text())
        expected = manifest["runner"]["files"]
    except (OSError, ValueError, KeyError, TypeError):
        raise _Refused("evidence_runner_unpinned", "configuration/corpus")
    difference = _first_difference(files, expected, "pins/runner/files")
    if difference:
        raise _Refused("evidence_runner_file_mismatch", difference)


def _bind_pins(report: Mapping, configuration: Mapping) -> dict:
    """The current corpus/scorer/F1/manifest bytes match their manifest and the report's
    pins; returns the corpus they pin."""
    key = configuration.get("corpus")
    if key not in pins.CORPORA:
        raise _Refused("evidence_corpus_unknown", "configuration/corpus")
    corpus_path, manifest_path = pins.CORPORA[key]
    try:
        current = pins.pinned(manifest_path)
    except (PinsChanged, OSError, ValueError, KeyError):
        raise _Refused("evidence_pinned_files_changed", str(manifest_path.relative_to(pins.REPO)))
    if not current["runner"]["pinned"] or current["runner"]["version"] != pins.RUNNER_VERSION:
        raise _Refused("evidence_runner_unpinned", "configuration/corpus")
    for name in PIN_NAMES:
        recorded = report["pins"].get(name)
        if not isinstance(recorded, dict) or _first_difference(recorded, current[name], name):
            raise _Refused(f"evidence_{name}_digest_mismatch", f"pins/{name}")
    if current["scorer"]["version"] != scorer.VERSION:
        raise _Refused("evidence_scorer_digest_mismatch", "pins/scorer/version")
    corpus = json.loads(corpus_path.read_text(encoding="utf-8"))
    recorded = _section(report, "corpus")
    if recorded.get("version") != current["corpus"]["version"] or corpus["version"] != recorded.get("version"):
        raise _Refused("evidence_corpus_digest_mismatch", "corpus/version")
    if recorded.get("evaluation_instant") != corpus["evaluation_instant"]:
        raise _Refused("evidence_configuration_differs", "corpus/evaluation_instant")
    if recorded.get("cases") != len(corpus["cases"]):
        raise _Refused("evidence_subset_cases", "corpus/cases")
    return corpus


def _bind_code(report: Mapping, deployment: Deployment) -> None:
    code = _section(report, "code")
    if code.get("dirty") is not False:
        raise _Refused("evidence_code_dirty", "code/dirty")
    files = code.get("files")
    if files is None:
        raise _Refused("evidence_code_manifest_missing", "code/files")
    if not isinstance(files, dict):
        raise _Refused("evidence_malformed", "code/files")
    for path in sorted(set(files) | set(deployment.code_files)):
        if path not in deployment.code_files:
            raise _Refused("evidence_code_file_missing", path)  # measured, no longer runs
        if path not in files:
            raise _Refused("evidence_code_file_unmeasured", path)  # runs, never measured
        if files[path] != deployment.code_files[path]:
            raise _Refused("evidence_code_file_mismatch", path)


def _bind_provider(report: Mapping, configuration: Mapping, deployment: Deployment) -> None:
    provider = _section(report, "provider")
    for name in PROVIDER_FIELDS:
        if provider.get(name) != deployment.provider.get(name):
            raise _Refused(f"evidence_{name}_mismatch", f"provider/{name}")
    for name in RECALL_FIELDS:
        if provider.get(name) != deployment.recall.get(name):
            raise _Refused(f"evidence_{name}_mismatch", f"provider/{name}")
    if configuration.get("provider") != provider.get("name"):
        raise _Refused("evidence_configuration_differs", "configuration/provider")
    if provider.get("label_leaks") != 0:
        raise _Refused("evidence_label_leaks", "provider/label_leaks")
    usage = _section(report, "usage")
    try:
        known = Decimal(str(usage.get("spend_usd"))).is_finite()
    except InvalidOperation:
        known = False
    if not known:
        raise _Refused("evidence_usage_unknown", "usage/spend_usd")


def _complete(configuration: Mapping) -> None:
    """A full run: both splits, every case, all arms, enough repeats, the runner's budgets."""
    if configuration.get("split") != "both":
        raise _Refused("evidence_subset_split", "configuration/split")
    if configuration.get("case_ids") != []:
        raise _Refused("evidence_subset_cases", "configuration/case_ids")
    repeats = configuration.get("repeats")
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < REQUIRED_REPEATS:
        raise _Refused("evidence_repeats_too_few", "configuration/repeats")
    if configuration.get("arms") != list(scorer.ARMS):
        raise _Refused("evidence_arm_missing", "configuration/arms")
    try:
        expected = Configuration(
            arms=scorer.ARMS, repeats=repeats, provider=configuration["provider"], split="both",
            spend_ceiling_usd=Decimal(configuration["spend_ceiling_usd"]),
            answers=configuration["probe_mode"] == "answers", corpus=configuration["corpus"]).as_dict()
    except (KeyError, TypeError, InvalidOperation):
        raise _Refused("evidence_malformed", "configuration")
    difference = _first_difference(_normal(configuration), _normal(expected), "configuration")
    if difference:
        raise _Refused("evidence_configuration_differs", difference)


def _observations(report: Mapping, corpus: Mapping, repeats: int) -> dict[str, list[list[dict]]]:
    """Every arm's repeats, each holding every corpus case exactly once, each a valid
    observation; an omitted, unknown or repeated case is refused by arm and repeat."""
    recorded = report.get("observations")
    if recorded is None:
        raise _Refused("evidence_observations_missing", "observations")
    if not isinstance(recorded, dict):
        raise _Refused("evidence_malformed", "observations")
    case_ids = {case["id"] for case in corpus["cases"]}
    result: dict[str, list[list[dict]]] = {}
    for arm in scorer.ARMS:
        runs = recorded.get(arm)
        if not isinstance(runs, list):
            raise _Refused("evidence_arm_missing", f"observations/{arm}")
        if len(runs) != repeats:
            raise _Refused("evidence_repeat_missing", f"observations/{arm}")
        for number, observations in enumerate(runs, start=1):
            where = f"observations/{arm}/repeat {number}"
            if not isinstance(observations, list) or not all(isinstance(o, dict) for o in observations):
                raise _Refused("evidence_malformed", where)
            seen = [o.get("case_id") for o in observations]
            if len(set(seen)) != len(seen):
                raise _Refused("evidence_case_repeated", where)
            if not set(seen) <= case_ids:
                raise _Refused("evidence_case_unknown", where)
            if set(seen) != case_ids:
                raise _Refused("evidence_case_omitted", where)
            for observation in observations:
                try:
                    scorer.CaseObservation.model_validate(
                        {k: v for k, v in observation.items() if k not in BOOKKEEPING_KEYS})
                except ValueError:
                    raise _Refused("evidence_observation_malformed", where)
                if not isinstance(observation.get("seconds"), (int, float)):
                    raise _Refused("evidence_observation_malformed", where)
        result[arm] = runs
    unknown = sorted(set(recorded) - set(scorer.ARMS))
    if unknown:
        raise _Refused("evidence_arm_unknown", "observations")
    return result


def _recomputed_equal(report: Mapping, corpus: Mapping, observations: Mapping) -> None:
    try:
        recomputed = _normal(recompute(corpus, observations))
    except (ValueError, KeyError, TypeError):
        raise _Refused("evidence_observation_malformed", "observations")
    arms = _section(report, "arms")
    for arm in scorer.ARMS:
        if not isinstance(arms.get(arm), dict):
            raise _Refused("evidence_arm_missing", f"arms/{arm}")
        recorded, expected = dict(arms[arm]), dict(recomputed["arms"][arm])
        # The census is keyed by case ID: named as a whole, so no label reaches a message.
        if _first_difference(recorded.pop("cases", None), expected.pop("cases"), "cases"):
            raise _Refused("evidence_arm_figures_differ", f"arms/{arm}/cases")
        difference = _first_difference(recorded, expected, f"arms/{arm}")
        if difference:
            raise _Refused("evidence_arm_figures_differ", difference)
    if set(arms) != set(scorer.ARMS):
        raise _Refused("evidence_arm_unknown", "arms")
    gates = _section(report, "gates")
    for name in sorted(set(gates) | set(recomputed["gates"])):
        if name not in recomputed["gates"]:
            raise _Refused("evidence_gate_unknown", f"gates/{name}")
        if name not in gates:
            raise _Refused("evidence_gate_missing", f"gates/{name}")
        if _first_difference(gates[name], recomputed["gates"][name], name):
            raise _Refused("evidence_gate_differs", f"gates/{name}")
    if report.get("passed") is not recomputed["passed"]:
        raise _Refused("evidence_passed_differs", "passed")
    if not recomputed["passed"]:
        failing = next((name for name, gate in recomputed["gates"].items() if not gate["passed"]), "")
        raise _Refused("evidence_gate_failed", f"gates/{failing}")


def verify(report_bytes: bytes, deployment: Deployment) -> Optional[Refusal]:
    """None when ``report_bytes`` is complete, recomputes to a pass and binds ``deployment``;
    otherwise the first Refusal (cheap binding checks run before the recomputation)."""
    try:
        report = json.loads(report_bytes.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return Refusal("evidence_unreadable")
    if not isinstance(report, dict):
        return Refusal("evidence_malformed", "report")
    try:
        configuration = _section(report, "configuration")
        _bind_runner(report, configuration)
        _complete(configuration)
        corpus = _bind_pins(report, configuration)
        _bind_code(report, deployment)
        _bind_provider(report, configuration, deployment)
        observations = _observations(report, corpus, configuration["repeats"])
        _recomputed_equal(report, corpus, observations)
    except _Refused as refused:
        return refused.refusal
    except (TypeError, KeyError, AttributeError, ValueError):  # a field of an unexpected shape
        return Refusal("evidence_malformed", "report")
    return None

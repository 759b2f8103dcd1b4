"""What a comparison report is measured against: the frozen corpus versions, their manifests
and the configuration a complete measurement runs with.

A manifest pins, by repository path and SHA-256, the corpus, the scorer, the answer-token F1
and the runner's files (``runner.files``, under ``runner.version``). The runner (``evals``)
refuses to measure unless its own files hash as pinned; admission (``verify``) holds a report
to the manifest's pins, so it never needs the runner's code to be deployed. Any changed byte
of a pinned file needs a new version and a new manifest.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from reconsolidation.evidence import scorer

REPO = Path(__file__).resolve().parents[2]
CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
# v1 is frozen as published; v2 re-dates hypothesis support into the spec's 30-day window.
CORPORA = {
    "v1": (CORPUS_DIR / "memory-reconsolidation.v1.json", CORPUS_DIR / "memory-reconsolidation.manifest.json"),
    "v2": (CORPUS_DIR / "memory-reconsolidation.v2.json", CORPUS_DIR / "memory-reconsolidation.v2.manifest.json"),
}
DEFAULT_CORPUS = "v2"
# The comparison runner this evidence format belongs to (its files are pinned in the manifest).
RUNNER_VERSION = "reconsolidation-runner@8"
PINNED_FILES = ("corpus", "scorer", "f1")

# How every probe recalls, and which proposal kinds each arm approves ("original" never dreams).
RECALL_MAX_ITEMS = 20
RECALL_MAX_TOKENS = 2000
RECALL_CEILING = "restricted"  # the owner's own view: every original it may read
DEFAULT_SPEND_CEILING_USD = Decimal("50")
ARM_KINDS = {
    scorer.ORIGINAL_ARM: (),
    scorer.MERGE_ARM: ("merge_equivalent",),
    scorer.CONNECTIONS_ARM: ("merge_equivalent", "summarize_related", "infer_connection", "flag_conflict"),
}


class PinsChanged(Exception):
    """A pinned file's bytes (or the manifest's runner) differ from the manifest."""


@dataclass
class Configuration:
    """One comparison run: what a report records as ``configuration`` and admission expects."""

    arms: tuple[str, ...]
    repeats: int
    provider: str
    split: str = "both"
    case_ids: tuple[str, ...] = ()  # a reduced run (smoke test); empty = every case of the split
    spend_ceiling_usd: Decimal = DEFAULT_SPEND_CEILING_USD
    answers: bool = False  # the optional answer stage; off = scored on rendered evidence (offline)
    corpus: str = DEFAULT_CORPUS  # a key of CORPORA

    def as_dict(self) -> dict:
        return {
            "arms": list(self.arms), "repeats": self.repeats, "provider": self.provider, "split": self.split,
            "corpus": self.corpus,
            "case_ids": list(self.case_ids), "spend_ceiling_usd": str(self.spend_ceiling_usd),
            "recall": {"max_items": RECALL_MAX_ITEMS, "max_tokens": RECALL_MAX_TOKENS, "ceiling": RECALL_CEILING},
            "probe_mode": "answers" if self.answers else "rendered_evidence",
            "approval": {arm: list(ARM_KINDS[arm]) for arm in self.arms},
        }


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pinned(manifest_path: Path) -> dict:
    """The pins of a manifest whose corpus, scorer and F1 hash as pinned: ``{name: {version,
    sha256}}`` for those, the manifest's own digest, and the runner's pinned version and files
    (``pinned`` false where the manifest pins no runner). Raises ``PinsChanged`` otherwise."""
    manifest = json.loads(manifest_path.read_text())
    pins = {}
    for name in PINNED_FILES:
        entry = manifest[name]
        actual = sha256_file(REPO / entry["path"])
        if actual != entry["sha256"]:
            raise PinsChanged(f"{entry['path']} does not match its pinned SHA-256 in {manifest_path.name}")
        pins[name] = {"version": entry["version"], "sha256": actual}
    pins["manifest"] = {"sha256": sha256_file(manifest_path)}
    runner = manifest.get("runner", {})
    files = runner.get("files")
    pins["runner"] = {"version": runner.get("version"), "files": files or {}, "pinned": files is not None}
    return pins

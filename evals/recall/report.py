"""What every recall evaluation command shares: Django setup, the code identity, report files
that are never overwritten, the stderr progress bar, summary tables and per-run ID remapping.

Reports are JSON named ``<kind>-<UTC timestamp>-<commit>[-dirty].json`` and created with
exclusive mode, so an existing report is never replaced (a clash gets a numeric suffix).
The code identity is ``git rev-parse HEAD`` plus whether the working tree differs from it
(an evaluation of uncommitted code says so in its name and body).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from recall.query_text import QUERY_TEXT_VERSION
from veetbot.progress import ProgressBar

REPO = Path(__file__).resolve().parents[2]
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "veetbot.settings")
    import django

    django.setup()


def fusion_configuration() -> dict:
    """The fusion settings in force (recall.ranking.fusion), recorded in every report."""
    from django.conf import settings


    return {"query_text": QUERY_TEXT_VERSION, "rrf_k": settings.RECALL_RRF_K, "rrf_weights": dict(settings.RECALL_RRF_WEIGHTS),
            "rrf_shared_tie_arms": list(settings.RECALL_RRF_SHARED_TIE_ARMS),
            "hybrid_lexical_min_coverage": settings.RECALL_HYBRID_LEXICAL_MIN_COVERAGE,
            "expansion_seeds": settings.RECALL_EXPANSION_SEEDS,
            "expansion_per_seed": settings.RECALL_EXPANSION_PER_SEED,
            "expansion_max_key_originals": settings.RECALL_EXPANSION_MAX_KEY_ORIGINALS,
            "relevance_similarity_margin": settings.RECALL_RELEVANCE_SIMILARITY_MARGIN}


def floor_sweep_lines(report: dict, title: str, headers: list[str], row: Callable[[dict], list]) -> list[str]:
    """The relevance-floor curve of a ``--floor-sweep`` report: one row per swept
    RECALL_RELEVANCE_SIMILARITY_MARGIN and channel, ``row(cell)`` giving the figures (none
    without a sweep)."""
    if not report.get("floor_sweep"):
        return []
    rows = [[point["similarity_margin"], channel, *row(cell)]
            for point in report["floor_sweep"] for channel, cell in point["scores"].items()]
    return ["", title, table(["margin", "channel", *headers], rows)]


def enable_semantic() -> None:
    """Semantic recall is off by default; evaluations of dense/hybrid turn it on in-process."""
    from django.conf import settings

    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True


def torch_threads(requested: Optional[int]) -> Optional[int]:
    """Set torch's intra-op threads for this process when asked; return the count in force
    (None when torch is not installed). Recorded in every report: on a shared 2-core machine
    an oversubscribed thread pool can make one query encoding ten times slower."""
    try:
        import torch
    except ImportError:
        return None
    if requested:
        torch.set_num_threads(requested)
    return torch.get_num_threads()


# The code an evaluation exercises; hashed so that a run on a dirty tree is still identified.
SOURCE_ROOTS = ("memory", "recall", "veetbot", "evals/recall", "evals/generate_bank.py")


def source_digest() -> str:
    """SHA-256 over (path, bytes) of every .py file under ``SOURCE_ROOTS``, in path order."""
    digest = hashlib.sha256()
    files: list[Path] = []
    for root in SOURCE_ROOTS:
        path = REPO / root
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    for path in sorted(set(files)):
        if "__pycache__" in path.parts:
            continue
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def code_identity() -> dict:
    """Commit, dirty flag and source digest; call it when a run starts (others edit the tree)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return ""

    commit = git("rev-parse", "HEAD").strip() or "unknown"
    status = git("status", "--porcelain", "--untracked-files=all")
    changed = [line[3:] for line in status.splitlines() if line.strip()]
    return {"commit": commit, "dirty": bool(changed), "changed_files": len(changed), "source_sha256": source_digest()}


def write_report(report_dir: Path, kind: str, report: dict, *, now: Optional[datetime] = None) -> Path:
    """Write ``report`` as a new file in ``report_dir``; never replaces an existing one."""
    report_dir.mkdir(parents=True, exist_ok=True)
    identity = report.get("code") or code_identity()
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    base = f"{kind}-{stamp}-{identity['commit'][:12]}{'-dirty' if identity['dirty'] else ''}"
    text = json.dumps(report, indent=1, sort_keys=False, default=str) + "\n"
    for attempt in range(1, 1000):
        path = report_dir / (base + ("" if attempt == 1 else f"-{attempt}") + ".json")
        try:
            with open(path, "x", encoding="utf-8") as handle:
                handle.write(text)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free report name for {base} in {report_dir}")


def Progress(stream=None) -> ProgressBar:  # noqa: N802 - reads like the class it returns
    """The shared command progress bar (stderr, drawn only on a terminal), with room for
    labels such as ``10000-other backfill``."""
    return ProgressBar(stream, label_width=28)


def note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def latency_stats(values: Sequence[float]) -> dict:
    """n, p50, p95 (nearest rank) and mean of millisecond samples, rounded to 0.01 ms."""
    if not values:
        return {"n": 0, "p50": None, "p95": None, "mean": None}
    ordered = sorted(values)

    def pick(q: float) -> float:
        return round(ordered[max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))], 2)

    return {"n": len(ordered), "p50": pick(0.5), "p95": pick(0.95), "mean": round(sum(ordered) / len(ordered), 2)}


def fmt(value: Optional[float], digits: int = 1) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f}"


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    rows = [[str(c) for c in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h)) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def remapper(namespace: uuid.UUID):
    """A function mapping every UUID in a text to ``uuid5(namespace, uuid)``, and its inverse
    table (filled as it maps). IDs are primary keys across owners, so a corpus imported once
    per run needs fresh IDs each time; the mapping keeps the corpus's own IDs for scoring."""
    inverse: dict[str, str] = {}

    def new_id(old: str) -> str:
        mapped = str(uuid.uuid5(namespace, old))
        inverse[mapped] = old
        return mapped

    def remap_text(text: str) -> str:
        return _UUID.sub(lambda m: new_id(m.group(0)), text)

    return remap_text, new_id, inverse


def run_command(kind: str, parse_args: Callable, run: Callable, summary: Callable,
                argv: Optional[list[str]] = None) -> tuple[dict, Path]:
    """What every evaluation command's ``main`` does: parse, run, write a new report, print
    its summary and path. Returns the report and where it was written."""
    args = parse_args(argv)
    report = run(args)
    path = write_report(args.report_dir, kind, report)
    print(summary(report))
    print(f"\nreport: {path}")
    return report, path

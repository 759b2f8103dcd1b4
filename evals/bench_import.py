"""Import benchmark: ``python -m evals.bench_import [--memories 100000] [--report-dir DIR]``.

Measures ``memory.bank.memory_bank_import`` — the one door every bank enters by — on
``evals/generate_bank.py``'s synthetic memory-bank@1 document (seeded), imported for one new
owner into a throw-away database created and migrated beside the configured one (dropped
afterwards), then imported again (which must write nothing).

Reported: memories per second of the first import (``ImportCounts.seconds``: parse,
validation, checks against the stored rows and every write, as the command reports it),
where that time went (read = parse + validate + plan, then each write stage, from the
importer's progress calls), the CPU seconds of this process and of its database backend (what
the import costs whatever else the machine runs), the rows written per table, and the
re-import's time and counts. Target: at least 5,000 memories/s at 100,000 memories.

The report (``<report-dir>/memory-bank-import-<UTC>-<commit>[-dirty].json``, never
overwritten) holds the code identity, the corpus digest, the configuration and the numbers.
Numbers depend on the machine and its load: the report records CPU count and load average.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from django.conf import settings
from django.db import connection

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.recall import report as rpt
from evals.reconsolidation.bench_slice import PER_SESSION, Database, bank_document, machine, server_version
from memory.bank import memory_bank_import
from memory.models import ChangeJournal, Event, EventPart, Memory, MemoryRevision, MemorySource, Person, Session
from veetbot.identity import Principal
from veetbot.rls import owner_context

KIND = "memory-bank-import"
SEED = 4242
NAMESPACE = uuid.UUID("0b6c7a52-93a4-4c39-8d0e-5f1e2a7c9d41")
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)  # after every generated session
TARGET_MEMORIES_PER_SECOND = 5000
TABLES = (Person, Session, Event, EventPart, Memory, MemorySource, MemoryRevision, ChangeJournal)


class StageClock:
    """The importer's progress calls, timed: when each stage was first and last reported.

    The first call comes once the document is read, validated and checked against the
    stored rows, so the time before it is the read phase."""

    def __init__(self, bar) -> None:
        self.bar = bar
        self.began = time.perf_counter()
        self.stages: dict[str, list[float]] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.perf_counter() - self.began
        self.stages.setdefault(stage, [now, now])[1] = now
        self.bar(f"import {stage}", done, total)

    def phases(self) -> dict[str, float]:
        """Seconds per phase: ``read`` until the first call, then each stage until its last."""
        phases, last = {}, 0.0
        for stage, (first, end) in self.stages.items():
            if not phases:
                phases["read"] = round(first, 3)
                last = first
            phases[stage] = round(end - last, 3)
            last = end
        return phases


class CpuClock:
    """CPU seconds of this process (the client) and of its database backend (the server),
    which is what an import costs whatever else the machine runs: the wall time of a run
    beside other jobs depends on their load, these do not (much). The server's are read from
    /proc, so only for a server on this machine (the embedded one); None otherwise."""

    def __init__(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            self.backend = cursor.fetchone()[0]
        self.client, self.server = time.process_time(), self._server()

    def _server(self) -> Optional[float]:
        try:
            fields = Path(f"/proc/{self.backend}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def spent(self) -> dict:
        server = self._server()
        return {"client": round(time.process_time() - self.client, 2),
                "server": None if server is None or self.server is None else round(server - self.server, 2)}


def row_counts(principal: Principal) -> dict[str, int]:
    with owner_context(principal):
        return {model._meta.db_table: model.objects.count() for model in TABLES}


def run(args: argparse.Namespace) -> dict:
    code = rpt.code_identity()
    started, load_at_start, bar = datetime.now(timezone.utc), os.getloadavg(), rpt.Progress()
    began = time.perf_counter()
    text = bank_document(args.memories, args.seed)
    data = text.encode()
    del text
    corpus = {"generator": "evals/generate_bank.py", "memories": args.memories, "seed": args.seed,
              "per_session": PER_SESSION, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
              "generate_seconds": round(time.perf_counter() - began, 2)}
    principal = Principal(tenant_id=uuid.uuid5(NAMESPACE, "tenant"), principal_id=uuid.uuid5(NAMESPACE, "principal"))
    with Database():
        server = server_version()
        clock, cpu = StageClock(bar), CpuClock()
        first = memory_bank_import(principal=principal, data=data, now=NOW, progress=clock)
        cpu_seconds = cpu.spent()
        bar.close()
        rows = row_counts(principal)
        rpt.note(f"imported {first.memories} memories in {first.seconds} s")
        again = memory_bank_import(principal=principal, data=data, now=NOW)
        unchanged = row_counts(principal) == rows
    rate = round(first.memories / first.seconds) if first.seconds else None
    if cpu_seconds["server"] is not None:
        cpu_seconds["memories_per_cpu_second"] = round(first.memories / (cpu_seconds["client"] + cpu_seconds["server"]))
    return {
        "kind": KIND, "started_at": started.isoformat(), "code": code,
        "configuration": {"memories": args.memories, "seed": args.seed, "owner_clock": NOW.isoformat(),
                          "import_batch_rows": settings.IMPORT_BATCH_ROWS,
                          "machine": machine(load_at_start, server)},
        "corpus": corpus,
        "result": {
            "import": first.model_dump(mode="json"), "memories_per_second": rate,
            "phase_seconds": clock.phases(), "cpu_seconds": cpu_seconds, "rows_written": rows,
            "reimport": {**again.model_dump(mode="json"), "rows_unchanged": unchanged},
        },
        "targets": {"memories_per_second_at_least": TARGET_MEMORIES_PER_SECOND,
                    "met": rate is not None and rate >= TARGET_MEMORIES_PER_SECOND,
                    "reimport_is_noop": unchanged and again.memories == again.events == again.sessions
                    == again.people == 0},
        "finished_at": datetime.now(timezone.utc).isoformat(),
    }


def summary(report: dict) -> str:
    result, machine_ = report["result"], report["configuration"]["machine"]
    first, again = result["import"], result["reimport"]
    return "\n".join([
        f"import of {report['corpus']['memories']} memories ({first['events']} events, {first['sessions']} sessions, "
        f"{first['people']} people): {first['seconds']} s, {result['memories_per_second']} memories/s "
        f"(target >= {report['targets']['memories_per_second_at_least']}: "
        f"{'met' if report['targets']['met'] else 'NOT met'})",
        "  phases (s): " + ", ".join(f"{k} {v}" for k, v in result["phase_seconds"].items()),
        f"  CPU seconds: client {result['cpu_seconds']['client']}, server {result['cpu_seconds']['server']} "
        f"({result['cpu_seconds'].get('memories_per_cpu_second')} memories per CPU second)",
        f"  re-import: {again['seconds']} s, counts {again['memories']}/{again['events']}/{again['sessions']}/"
        f"{again['people']}, rows unchanged: {again['rows_unchanged']}",
        f"  load average {machine_['load_average_at_start']} -> {machine_['load_average_at_end']} "
        f"on {machine_['cpus']} CPUs",
    ])


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.bench_import", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--memories", type=int, default=100_000, help="memories in the generated bank (default 100000)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--report-dir", type=Path, default=Path("evals/reports"))
    args = parser.parse_args(argv)
    if args.memories < 1:
        parser.error("--memories must be at least 1")
    return args


def main(argv: Optional[list[str]] = None) -> int:
    rpt.run_command(KIND, parse_args, run, summary, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

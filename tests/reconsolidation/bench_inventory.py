"""Measure one inventory slice at a large bank: ``python -m tests.reconsolidation.bench_inventory``.

Creates a throw-away database beside the configured one, migrates it as production does,
bulk-builds N originals (realistic text: common words that saturate plus rarer tokens;
subject clusters of 8 spread over the bank), then runs S whole slices — plan, neighbour
lookups, checkpoint — each under its own lease with a changed lane kept busy, and prints
the median and p95 wall time of the slice and the SQL statements it issued. The database
is dropped afterwards. Not a test: numbers depend on the machine and its load.

Options (environment): BENCH_N (100000), BENCH_SLICES (60), BENCH_SPARSE (0).
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from datetime import timedelta


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "veetbot.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection, connections, reset_queries
    from django.test.utils import CaptureQueriesContext

    n = int(os.environ.get("BENCH_N", 100_000))
    slices = int(os.environ.get("BENCH_SLICES", 60))
    sparse = os.environ.get("BENCH_SPARSE") == "1"
    name = f"bench_reconsolidation_{os.getpid()}"
    with connections["owner"]._nodb_cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        for alias in ("default", "owner"):
            connections[alias].close()
            settings.DATABASES[alias]["NAME"] = name
            connections[alias].settings_dict["NAME"] = name
        call_command("migrate", database="owner", verbosity=0, interactive=False)
        settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True

        from reconsolidation.driver import inventory_slice
        from reconsolidation.store import ReconsolidationStore
        from tests.factories import T0, make_owner
        from evals.fixtures.bulk import bulk_originals, bulk_touch

        principal, _ = make_owner("bench")
        started = time.perf_counter()
        ids = bulk_originals(principal, n, at=T0, batch_rows=25_000, analyze=True, sparse=sparse)
        with connections["owner"].cursor() as cursor:
            cursor.execute("VACUUM ANALYZE memory_memory, memory_memorysource, memory_event")
        print(f"built {n} originals in {time.perf_counter() - started:.1f} s", flush=True)

        store, now = ReconsolidationStore(), T0 + timedelta(days=1)
        durations, statements = [], []
        for number in range(slices):
            lease = store.claim_due(principal, lease_owner="bench", now=now)
            if number % 4 == 0:
                bulk_touch(principal, ids[-400:], at=now)  # keep the changed lane busy
            reset_queries()
            with CaptureQueriesContext(connection) as captured:
                began = time.perf_counter()
                inventory_slice(store, principal, lease, now=now)
                durations.append((time.perf_counter() - began) * 1000)
            statements.append(len(captured.captured_queries))
            while (group := store.claim_group(principal, lease_token=lease.lease_token, now=now)) is not None:
                store.finish_group(principal, group, outcome="no_change", now=now)
            store.release(principal, lease.lease_token, now=now)
            now += timedelta(seconds=2)
        p95 = sorted(durations)[max(0, int(round(0.95 * len(durations))) - 1)]
        print(f"one inventory slice at N={n} ({'sparse' if sparse else 'realistic'} text), {slices} slices:"
              f" median {statistics.median(durations):.1f} ms, p95 {p95:.1f} ms;"
              f" SQL statements per slice: median {statistics.median(statements):.0f}, max {max(statements)}")
    finally:
        for alias in ("default", "owner"):
            connections[alias].close()
        with connections["owner"]._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())

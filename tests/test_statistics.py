"""Bulk-writing operator commands leave planner statistics for what they wrote
(veetbot.statistics): the next recall is planned for the new rows, not for an empty table."""
from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection, connections

from memory.bank import memory_bank_import
from memory.models import Memory
from tests.conftest import WITH_OWNER_ALIAS, new_principal
from tests.memory import bank_docs as docs
from tests.recall.helpers import MappedEncoder
from veetbot import statistics
from veetbot.rls import owner_context

DEMO_BANK = Path(__file__).resolve().parents[1] / "evals" / "fixtures" / "demo-bank.json"


def _estimated_rows(table: str) -> float:
    """The planner's row count for ``table`` (pg_class.reltuples), as ANALYZE last left it."""
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return cursor.fetchone()[0]


def test_an_import_leaves_statistics_for_the_rows_it_wrote(live_db):
    statistics.analyze(statistics.ORIGINALS)  # the planner now believes the tables are empty
    assert _estimated_rows("memory_memory") == 0
    principal = new_principal()
    call_command("import_memory_bank", str(DEMO_BANK), "--owner", principal.label, "--json", stdout=io.StringIO())
    assert _estimated_rows("memory_memory") == 253 and _estimated_rows("memory_memorysource") > 0


def test_a_backfill_leaves_statistics_for_the_vectors_it_wrote(live_db, monkeypatch):
    principal = new_principal()
    call_command("import_memory_bank", str(DEMO_BANK), "--owner", principal.label, "--json", stdout=io.StringIO())
    statistics.analyze(statistics.VECTORS)
    assert _estimated_rows("recall_memoryvector") == 0
    encoder = MappedEncoder(default=[1.0] + [0.0] * 383)
    monkeypatch.setattr("recall.management.commands.backfill_vectors.load_encoder", lambda: encoder)
    call_command("backfill_vectors", "--owner", principal.label, "--json", stdout=io.StringIO())
    assert _estimated_rows("recall_memoryvector") > 0


def test_only_the_tables_it_names_can_be_analysed(db):
    with pytest.raises(ValueError):
        statistics.analyze(["memory_memory; DROP TABLE memory_memory"])
    with pytest.raises(ValueError):
        statistics.analyze([])


# -- statistics inside a bulk import (memory migration 0005) ------------------------------

def _small_bank_bytes() -> bytes:
    return docs.dumps(docs.small_bank())  # 3 events and 3 memories


def _analyses_during_import(principal, batch_rows: int, settings) -> int:
    settings.IMPORT_BATCH_ROWS = batch_rows
    calls = []

    def spy(execute, sql, params, many, context):
        calls.append("memory_import_analyze" in sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        memory_bank_import(principal=principal, data=_small_bank_bytes())
    return sum(calls)


def test_an_import_of_one_batch_takes_no_statistics(db, settings):
    assert _analyses_during_import(new_principal(), 3, settings) == 0


def test_an_import_past_one_batch_takes_statistics_once_per_stage_after_its_first_batch(db, settings):
    # events (3) and memories (3) each overflow a batch of 2: one analysis after each first batch
    assert _analyses_during_import(new_principal(), 2, settings) == 2


def _key_check_plan(principal) -> str:
    """The plan of the check every owner-bound foreign key into memory_memory runs."""
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            "EXPLAIN SELECT 1 FROM ONLY memory_memory x WHERE tenant_id = %s AND principal_id = %s AND id = %s"
            " FOR KEY SHARE OF x", [principal.tenant_id, principal.principal_id, principal.principal_id])
        return "\n".join(row[0] for row in cursor.fetchall())


def test_after_a_multi_batch_import_into_an_unanalysed_table_key_checks_probe_by_id(live_db, settings):
    """Without the in-import analysis this check filtered the owner's rows (memory_status_expiry)."""
    statistics.analyze(statistics.ORIGINALS)  # empty: no column statistics at all
    principal = new_principal()
    settings.IMPORT_BATCH_ROWS = 100
    memory_bank_import(principal=principal, data=DEMO_BANK.read_bytes())  # the service: no ANALYZE after commit
    plan = _key_check_plan(principal)
    assert "Filter: (id = " not in plan and "(id = " in plan, plan


@WITH_OWNER_ALIAS
def test_a_held_statistics_lock_is_waited_for_only_up_to_its_bound(settings):
    settings.IMPORT_ANALYZE_LOCK_MS = 200
    with connections["owner"].cursor() as cursor:
        cursor.execute("LOCK TABLE memory_memory IN SHARE UPDATE EXCLUSIVE MODE")  # as a concurrent ANALYZE holds it
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        before = cursor.fetchone()[0]
        began = time.monotonic()
        assert statistics.analyze_import_tables() is False
        waited = time.monotonic() - began
        cursor.execute("SHOW lock_timeout")
        assert cursor.fetchone()[0] == before  # the caller's own bound is back
    assert 0.2 <= waited < 2.0


@WITH_OWNER_ALIAS
def test_a_multi_batch_import_goes_on_when_the_statistics_lock_is_held(settings):
    settings.IMPORT_ANALYZE_LOCK_MS = 50
    settings.IMPORT_BATCH_ROWS = 2
    with connections["owner"].cursor() as cursor:
        cursor.execute("LOCK TABLE memory_memory IN SHARE UPDATE EXCLUSIVE MODE")
    principal = new_principal()
    counts = memory_bank_import(principal=principal, data=_small_bank_bytes())
    with owner_context(principal):
        assert counts.memories == Memory.objects.count() == 3

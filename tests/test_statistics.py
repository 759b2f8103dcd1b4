"""Bulk-writing operator commands leave planner statistics for what they wrote
(veetbot.statistics): the next recall is planned for the new rows, not for an empty table."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connections

from tests.conftest import new_principal
from tests.recall.helpers import MappedEncoder
from veetbot import statistics

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

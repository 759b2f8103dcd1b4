"""The stored search columns change speed, never results.

With ``recall_document`` / ``recall_subject_key`` on memory_memory the arms read them;
without, they compute the identical expressions. This test adds the columns (unless a
migration already did), recalls the same queries both ways — current and historical,
with revised and erased beliefs in the bank — and compares every stage and the rendering.
Committed data (``live_db``): the DDL runs on the owner connection.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connections

from memory.domain import MemoryChanges
from memory.services import memory_erase, memory_revise
from recall import arms, sql
from tests.factories import T0
from tests.recall.helpers import Bank

QUERIES = [
    ("Which window seat do I prefer on flights?", {}),
    ("lasagna nutmeg grandmother", {}),
    ("trip packing", {"entity_ids": ("trip:alps",)}),
    ("what are my goals", {}),
    ("aisle seat flight", {}),  # stemming (flights → flight) and a punctuated subject phrase
]


def _present() -> bool:
    with connections["owner"].cursor() as cursor:
        cursor.execute(sql.STORED_COLUMNS_PRESENT, {"count": len(sql.STORED_COLUMNS), "names": list(sql.STORED_COLUMNS)})
        return bool(cursor.fetchone()[0])


@pytest.fixture
def stored_columns(live_db):
    added = not _present()
    if added:
        with connections["owner"].cursor() as cursor:
            for statement in sql.STORED_COLUMNS_DDL:
                cursor.execute(statement)
    arms._stored_by_database.clear()
    yield
    arms._stored_by_database.clear()
    if added:
        with connections["owner"].cursor() as cursor:
            for statement in sql.STORED_COLUMNS_DROP:
                cursor.execute(statement)


def _bank() -> Bank:
    bank = Bank.new("Stored columns")
    ids = bank.add_many([
        dict(statement="Always books 14A on long flights.", subject="Window-Seat", belief_type="fact"),
        dict(statement="Grandmother's lasagna uses nutmeg.", subject="family recipe", belief_type="fact"),
        dict(statement="Pack the crampons.", subject="gear", belief_type="fact", entity_ids=("trip:alps",)),
        dict(statement="Run a marathon.", subject="running", belief_type="goal"),
        dict(statement="Prefers the aisle on short hops.", subject="aisle seat", belief_type="preference"),
        dict(statement="Booked two flights to Oslo.", subject="Aisle-Seat!", belief_type="fact"),
        dict(statement="Flights are cheaper on Tuesdays.", subject="travel tip", belief_type="fact"),
    ] + [dict(statement=f"Ate lasagna at place {n}.", subject=f"dinner {n}", belief_type="fact") for n in range(40)])
    later = T0 + timedelta(days=20)
    memory_revise(principal=bank.principal, memory_id=ids[0],
                  changes=MemoryChanges(subject="seat choice", statement="Now prefers the aisle."), now=later)
    memory_revise(principal=bank.principal, memory_id=ids[3],
                  changes=MemoryChanges(statement="Run a half marathon first."), now=later)
    memory_erase(principal=bank.principal, memory_id=ids[4], now=later)
    return bank


def test_stored_columns_and_computed_expressions_recall_identically(stored_columns, monkeypatch):
    bank = _bank()
    as_of = T0 + timedelta(days=10)
    for query, extra in QUERIES:
        for when in ({}, {"as_of": as_of}):
            results = {}
            for stored in (False, True):
                monkeypatch.setattr(arms, "stored_columns", lambda stored=stored: stored)
                results[stored] = bank.recall(query, channel="sparse", max_items=5, **extra, **when)
            computed, stored = results[False], results[True]
            assert computed.stages == stored.stages
            assert computed.rendered == stored.rendered
            assert computed.stages.candidate_ids, (query, when)


def test_stored_columns_are_detected_and_follow_content_changes(stored_columns):
    assert arms.stored_columns() is True
    bank = Bank.new("Detection")
    memory_id = bank.add("Grandmother's lasagna.", subject="Family Recipe!", belief_type="fact")
    memory_revise(principal=bank.principal, memory_id=memory_id,
                  changes=MemoryChanges(statement="Grandmother's risotto."), now=T0 + timedelta(days=1))
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT recall_document::text, recall_subject_key FROM memory_memory WHERE id = %s", [memory_id])
        document, subject_key = cursor.fetchone()
    assert "risotto" in document and "lasagna" not in document
    assert subject_key == "family recipe"

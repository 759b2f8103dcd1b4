"""What makes a recall cheaper must not change what it records or reads: the trace's one
plain INSERT covers every column, ID lists travel as one literal, and the HNSW settings
take one round trip."""
from __future__ import annotations

import uuid

import pytest
from django.db import connection

from recall.arms import permitted
from recall.models import RecallTrace
from recall.traces import _COLUMNS
from recall.vectors import hnsw_session_settings
from tests.recall.helpers import bank  # noqa: F401
from veetbot.rls import owner_context


def test_the_trace_insert_writes_every_column_of_the_model():
    assert sorted(_COLUMNS) == sorted(field.column for field in RecallTrace._meta.fields)


def test_uuid_array_round_trips_through_postgres(db):
    ids = [uuid.uuid4() for _ in range(3)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::uuid[]", [permitted.uuid_array(ids + [str(ids[0])])])
        assert cursor.fetchone()[0] == ids + [ids[0]]
        cursor.execute("SELECT cardinality(%s::uuid[])", [permitted.uuid_array([])])
        assert cursor.fetchone()[0] == 0


@pytest.mark.parametrize("smuggled", ["a,b", "}", "00000000-0000-0000-0000-000000000000,00000000-0000-0000-0000-000000000001"])
def test_uuid_array_refuses_anything_but_one_uuid_per_element(smuggled):
    with pytest.raises(ValueError):
        permitted.uuid_array([smuggled])


def test_a_recall_with_many_candidates_traces_every_id_list(bank):
    ids = bank.add_many([dict(statement=f"Passport note {n}.", subject=f"p {n}", belief_type="fact") for n in range(90)])
    result = bank.recall("passport note", channel="sparse", max_items=5)
    with owner_context(bank.principal):
        trace = RecallTrace.objects.get(id=result.trace_id)
    assert len(trace.candidate_ids) == 64
    assert tuple(trace.candidate_ids) == result.stages.candidate_ids and set(trace.candidate_ids) <= set(ids)
    assert tuple(trace.ranked_ids) == result.stages.ranked_ids
    assert tuple(trace.rendered_ids) == result.stages.rendered_ids == tuple(i.id for i in result.items)


def test_hnsw_settings_take_one_statement(db, settings):
    settings.RECALL_HNSW_EF_SEARCH, settings.RECALL_HNSW_MAX_SCAN_TUPLES = 123, 4567
    sent = []
    with connection.execute_wrapper(lambda execute, *args: sent.append(args[0]) or execute(*args)):
        with connection.cursor() as cursor:
            hnsw_session_settings(cursor)
    assert len(sent) == 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.iterative_scan'), current_setting('hnsw.ef_search'),"
                       " current_setting('hnsw.max_scan_tuples')")
        assert cursor.fetchone() == ("relaxed_order", "123", "4567")

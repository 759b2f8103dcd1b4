"""The semantic arm's statements: plans that hold whatever the statistics say, a true
cosine order in index mode, and a LIMIT that counts permitted originals only.

The planner switches below (``enable_*``) only force the plan shape a large owner gets,
on a small test table; the statements themselves are the retriever's.
"""
from __future__ import annotations

import random
import re

import pytest
from django.db import connection

from recall.arms import permitted, semantic
from recall.retriever import _allowed_sensitivities
from recall.vectors import hnsw_session_settings
from tests.recall.helpers import NOW, MappedEncoder, bank, basis, semantic_on  # noqa: F401
from tests.recall.test_vectors import clustered
from tests.recall.test_retriever_visibility import QUERY, SCENARIOS, ENTITY, other  # noqa: F401
from veetbot.rls import owner_context

INDEX_ONLY = ("enable_seqscan", "enable_bitmapscan", "enable_sort")  # the HNSW index is the cheap vector order


def _read(bank, *, limit: int = 64, exclude_ids=()) -> permitted.Read:
    return permitted.Read(
        params=permitted.base_params(
            tenant_id=bank.principal.tenant_id, principal_id=bank.principal.principal_id, at=NOW, as_of=None,
            sensitivities=_allowed_sensitivities("internal"), scope="user", exclude_ids=list(exclude_ids),
            belief_types=[],
        ),
        historical=False, limit=limit,
    )


def _semantic(bank, encoder, query_vector, *, exact: bool, limit: int = 64, exclude_ids=()):
    """(candidates, plan text) of the semantic arm, index mode forced onto the HNSW index."""
    read = _read(bank, limit=limit, exclude_ids=exclude_ids)
    statement = semantic.semantic_arm(False, exact=exact)
    params = semantic.arm_params(read, query_vector, encoder.tuple.space)
    with owner_context(bank.principal), connection.cursor() as cursor:
        if not exact:
            hnsw_session_settings(cursor)
            for switch in INDEX_ONLY:
                cursor.execute(f"SET LOCAL {switch} = off")
        cursor.execute("EXPLAIN " + statement, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        candidates = semantic.semantic(read, query_vector, encoder.tuple.space, exact=exact)
    return candidates, plan


def _vectors(bank, encoder, count: int, *, start: int, spread: float, rng: random.Random, centre: int = 0,
             **fields) -> list:
    """``count`` originals with vectors scattered around basis(centre) (cosine falls with
    ``spread``); returned nearest first."""
    ids = bank.add_many([dict(statement=f"Item {start + n}.", subject=f"item {start + n}", belief_type="fact", **fields)
                         for n in range(count)])
    vectors = [clustered(basis(centre), spread, rng) for _ in ids]
    for memory_id, vector in zip(ids, vectors):
        bank.vector(memory_id, vector, encoder)
    return [i for _, i in sorted(zip((-v[centre] for v in vectors), ids))]


def test_exact_mode_probes_originals_by_id_and_never_joins_every_original(bank, semantic_on):
    """Stale statistics once turned the exact arm's hash join into a nested loop over every
    original (250 ms at 1,000 memories); the probe plan is the same at any estimate."""
    encoder = MappedEncoder()
    _vectors(bank, encoder, 30, start=0, spread=0.05, rng=random.Random(1))
    _, plan = _semantic(bank, encoder, basis(0), exact=True)
    # The originals are reached only by a per-vector probe on the ID (which index serves it
    # depends on this small table's statistics).
    assert "Nested Loop" in plan and "id = v.memory_id" in plan, plan
    for shape in ("Hash Join", "Merge Join", "Seq Scan on memory_memory", "Bitmap Heap Scan on memory_memory",
                  "memoryvector_embedding_hnsw"):
        assert shape not in plan, plan


def test_index_mode_uses_the_hnsw_index_and_really_sorts_its_relaxed_order(bank, semantic_on):
    """An iterative HNSW scan returns rows in relaxed order while the planner believes them
    ordered by distance: without a real final sort the semantic list came back unsorted."""
    encoder = MappedEncoder()
    # Around a direction no other test uses: the HNSW graph keeps the entries of every
    # rolled-back test's vectors until a vacuum, and an iterative scan through a crowd of
    # dead entries near basis(0) stops short of 64 live ones (retriever.recall then searches
    # exactly; this test reads the index mode alone).
    _vectors(bank, encoder, 300, start=0, spread=0.05, rng=random.Random(2), centre=301)
    candidates, plan = _semantic(bank, encoder, basis(301), exact=False)
    assert "memoryvector_embedding_hnsw" in plan, plan
    # The top keeps the limit of a real sort of the CTE's rows (no presorted shortcut).
    assert plan.splitlines()[0].startswith("Limit"), plan
    assert "Sort Key: ((nearest.distance + '0'" in plan and "Presorted Key" not in plan, plan
    keys = [(c.signal, -c.store_position, str(c.id)) for c in candidates]
    assert len(keys) == 64 and keys == sorted(keys)


@pytest.mark.parametrize("depth, walked", [(100, 100), (10, 64)], ids=["deeper than the limit", "never below it"])
def test_an_index_search_walks_the_search_depth_and_keeps_the_limit(bank, semantic_on, settings, depth, walked):
    """The index scan walks ``RECALL_HNSW_SEARCH_DEPTH`` permitted vectors (never fewer than
    the arm's limit) and the arm keeps the limit nearest of them."""
    settings.RECALL_HNSW_SEARCH_DEPTH = depth
    encoder = MappedEncoder()
    _vectors(bank, encoder, 300, start=0, spread=0.05, rng=random.Random(5), centre=302)
    read = _read(bank, limit=64)
    params = semantic.arm_params(read, basis(302), encoder.tuple.space)
    with owner_context(bank.principal), connection.cursor() as cursor:
        hnsw_session_settings(cursor)
        for switch in INDEX_ONLY:
            cursor.execute(f"SET LOCAL {switch} = off")
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
                       + semantic.semantic_arm(False, exact=False), params)
        plan = [row[0] for row in cursor.fetchall()]
        candidates = semantic.semantic(read, basis(302), encoder.tuple.space, exact=False)
    scan_limit = next(line for line in plan if "Limit" in line and "->" in line)  # the CTE's scan, below the top
    assert re.search(rf"rows={walked}(\.00)? loops=1", scan_limit), plan
    assert len(candidates) == 64


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "index"])
def test_nearer_vectors_of_unpermitted_originals_cannot_starve_the_limit(bank, semantic_on, exact):
    encoder = MappedEncoder()
    rng = random.Random(3)
    _vectors(bank, encoder, 150, start=0, spread=0.01, rng=rng, sensitivity="restricted")  # above the ceiling
    excluded = _vectors(bank, encoder, 50, start=200, spread=0.01, rng=rng)
    permitted = _vectors(bank, encoder, 100, start=300, spread=0.04, rng=rng)
    candidates, _ = _semantic(bank, encoder, basis(0), exact=exact, exclude_ids=excluded)
    assert len(candidates) == 64 and {c.id for c in candidates} <= set(permitted)
    if exact:
        assert [c.id for c in candidates] == permitted[:64]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_index_mode_keeps_every_planted_row_out_of_the_dense_channel(bank, other, semantic_on, settings, scenario):
    """The visibility parity of test_retriever_visibility, with the semantic arm in index mode."""
    settings.RECALL_EXACT_SEARCH_MAX_VECTORS = 0
    s = SCENARIOS[scenario](bank, other)
    encoder = MappedEncoder({QUERY: basis(0)})
    for owner, memory_id, revision in s.vectors:
        owner.vector(memory_id, basis(0), encoder, revision=revision)
    result = bank.recall(QUERY, encoder=encoder, channel="dense", entity_ids=(ENTITY,), **s.request)
    assert result.channel == "dense"
    for stage in (result.stages.dense_ids, result.stages.ranked_ids, result.stages.rendered_ids):
        assert not set(stage) & set(s.forbidden.values())
    assert set(s.visible.values()) <= set(result.stages.dense_ids)

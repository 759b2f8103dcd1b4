"""The semantic arm cannot starve: one owner's dense list is complete whatever other owners
hold (``recall.arms.semantic.semantic_search``).

Owner A holds 2,001 vectors — one above ``RECALL_EXACT_SEARCH_MAX_VECTORS``, so the arm
searches the shared HNSW index — and owner B holds 20,000 vectors, every one nearer the
query than any of A's. Row-level security filters B's rows after the index scan, and an
iterative scan gives up after ``RECALL_HNSW_MAX_SCAN_TUPLES``: the bare HNSW search returns
(next to) nothing of A's. Both settings are a tenth of their defaults here (20,000 each), so
the scene is the production one at a tenth of its size: the index build over it is what
the test spends its time on. The arm sees the short result and searches again exactly, so A's
dense list is full; forced into exact mode it is in exact cosine order.

The vectors are built in SQL (``generate_series``) on committed rows, with the HNSW index
dropped during the load and rebuilt once afterwards through the owning connection (an index
present during the inserts costs far more than one build). The vectors lie on one arc of the
(dim 0, dim 383) plane — the query is dim 0 — so every cosine is known in closed form.
"""
from __future__ import annotations

import time

import pytest
from django.db import connection, connections

from recall.arms import permitted, semantic
from tests.factories import T0
from evals.fixtures.bulk import analyze_originals, bulk_originals
from tests.recall.helpers import NOW, Bank, MappedEncoder, basis
from veetbot.rls import owner_context

pytestmark = pytest.mark.slow

QUERY = "zqx starving semantic arm"
A_VECTORS = 2_001
B_VECTORS = 20_000
SCAN_TUPLES = 2_000  # RECALL_HNSW_MAX_SCAN_TUPLES here: B's nearer vectors are ten times as many
HNSW_INDEX = "memoryvector_embedding_hnsw"

# Owner A's i-th original (creation order) gets cosine 0.10 + 0.70 * i / n to the query —
# all distinct, the newest nearest; owner B's all lie in [0.90, 0.99].
_VECTORS = """
    INSERT INTO recall_memoryvector (id, tenant_id, principal_id, memory_id, content_revision, space, provider,
        model, model_revision, dimensions, text_version, text_sha256, embedding, created_at)
    SELECT gen_random_uuid(), m.tenant_id, m.principal_id, m.id, m.content_revision, %(space)s, 'test', 'mapped',
           %(model_revision)s, 384, 'memory-text@1', repeat('0', 64),
           ('[' || c.cos || ',' || repeat('0,', 382) || sqrt(1 - c.cos * c.cos) || ']')::vector, %(at)s
    FROM (SELECT id, tenant_id, principal_id, content_revision,
                 row_number() OVER (ORDER BY creation_sequence) - 1 AS i
          FROM memory_memory) m
    CROSS JOIN LATERAL (SELECT %(low)s + %(span)s * m.i / %(count)s AS cos) c
"""


def _vectors(bank: Bank, encoder: MappedEncoder, *, count: int, low: float, span: float) -> None:
    with owner_context(bank.principal):  # row-level security: only this owner's originals
        with connection.cursor() as cursor:
            cursor.execute(_VECTORS, {"space": encoder.tuple.space, "model_revision": encoder.tuple.model_revision,
                                      "at": T0, "low": low, "span": span, "count": count})


@pytest.fixture
def starving(live_db):
    """(owner A's bank, the encoder, A's memory IDs nearest first) with B's 20,000 nearer vectors."""
    owner = connections["owner"]
    with owner.cursor() as cursor:
        # Rebuilt afterwards exactly as the migrations made it.
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [HNSW_INDEX])
        (create_hnsw,) = cursor.fetchone()
        cursor.execute(f"DROP INDEX {HNSW_INDEX}")
    try:
        encoder = MappedEncoder({QUERY: basis(0)})
        a, b = Bank.new("Owner A"), Bank.new("Owner B")
        a_ids = bulk_originals(a.principal, A_VECTORS, at=T0, sparse=True, batch_rows=50_000, analyze=True)
        bulk_originals(b.principal, B_VECTORS, at=T0, sparse=True, batch_rows=50_000, analyze=True)
        _vectors(a, encoder, count=A_VECTORS, low=0.10, span=0.70)
        _vectors(b, encoder, count=B_VECTORS, low=0.90, span=0.09)
    finally:
        began = time.monotonic()
        with owner.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem = '1GB'")
            cursor.execute(create_hnsw)
            cursor.execute("RESET maintenance_work_mem")
            cursor.execute("ANALYZE recall_memoryvector")
        print(f"HNSW build over {A_VECTORS + B_VECTORS} vectors: {time.monotonic() - began:.1f} s")
    analyze_originals()
    yield a, encoder, list(reversed(a_ids))


def _read(bank: Bank) -> permitted.Read:
    return permitted.Read(
        params=permitted.base_params(
            tenant_id=bank.principal.tenant_id, principal_id=bank.principal.principal_id, at=NOW, as_of=None,
            sensitivities=["public", "internal"], scope="user", exclude_ids=[], belief_types=[],
        ),
        historical=False, limit=permitted.arm_limit(20),
    )


@pytest.fixture
def planner_takes_the_index(starving):
    """The planner's HNSW-or-sort choice follows statistics: at 2,001 of 22,001 vectors it
    sorts A's rows (found by the owner index) — exact by accident; at other shares (100,000
    of 200,000 in the load benchmark) it scans the HNSW index. This connection is made to
    take the index whenever it can, as those statistics would."""
    switches = ("enable_seqscan", "enable_bitmapscan", "enable_sort")
    with connection.cursor() as cursor:
        for switch in switches:
            cursor.execute(f"SET {switch} = off")
    yield
    with connection.cursor() as cursor:
        for switch in switches:
            cursor.execute(f"RESET {switch}")


def test_another_owners_nearer_vectors_cannot_starve_the_dense_list(starving, planner_takes_the_index, settings):
    a, encoder, nearest_first = starving
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    settings.RECALL_EXACT_SEARCH_MAX_VECTORS = A_VECTORS - 1
    settings.RECALL_HNSW_MAX_SCAN_TUPLES = SCAN_TUPLES
    limit = permitted.arm_limit(20)

    # The scenario is real: the bare HNSW search, served by the index, comes back short.
    with owner_context(a.principal):
        assert not semantic.use_exact_search(encoder.tuple.space)
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN " + semantic.semantic_arm(False, exact=False),
                           semantic.arm_params(_read(a), basis(0), encoder.tuple.space))
            assert HNSW_INDEX in "\n".join(row[0] for row in cursor.fetchall())
        bare = semantic.semantic(_read(a), basis(0), encoder.tuple.space, exact=False)
    assert len(bare) < limit

    # Through the retriever (HNSW by default at this size): full, and in exact order.
    result = a.recall(QUERY, encoder=encoder, channel="dense")
    assert result.stages.semantic_search == "hnsw_short_exact"
    assert list(result.stages.dense_ids) == nearest_first[:limit]
    assert [item.id for item in result.items] == nearest_first[:20]

    # Exact mode (forced): the same list, in exact cosine order.
    with connection.cursor() as cursor:
        cursor.execute("RESET ALL")
    settings.RECALL_EXACT_SEARCH_MAX_VECTORS = 10 ** 9
    settings.RECALL_VECTOR_COUNT_CACHE_SECONDS = 0
    exact = a.recall(QUERY, encoder=encoder, channel="dense")
    assert exact.stages.semantic_search == "exact"
    assert list(exact.stages.dense_ids) == nearest_first[:limit]
    distances = [1 - (0.10 + 0.70 * (A_VECTORS - 1 - n) / A_VECTORS) for n in range(limit)]
    with owner_context(a.principal):
        found = semantic.semantic(_read(a), basis(0), encoder.tuple.space, exact=True)
    assert [c.signal for c in found] == pytest.approx(distances, abs=1e-5)

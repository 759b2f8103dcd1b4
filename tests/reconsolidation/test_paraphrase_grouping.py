"""The semantic neighbour arm of grouping: an anchor's nearest eligible originals by their
own stored vectors join its group under the same hard predicates, scope rule and bound as
the lexical arm; with semantic recall off or no vectors it contributes nothing. Every case
runs both ways the arm searches: exact (few vectors) and through the HNSW index."""
from __future__ import annotations

import pytest

from django.db import connection

from reconsolidation import bounds
from reconsolidation import grouping
from reconsolidation.inventory import sql
from reconsolidation.sources import allowed_sensitivities
from tests.recall.helpers import NOW, Bank, MappedEncoder, basis, blend, semantic_on  # noqa: F401 (fixture)
from veetbot.rls import owner_context


@pytest.fixture(autouse=True, params=["exact", "indexed"])
def search(request, settings):
    """Exact below RECALL_EXACT_SEARCH_MAX_VECTORS vectors, the HNSW index above it."""
    if request.param == "indexed":
        settings.RECALL_EXACT_SEARCH_MAX_VECTORS = 0
    return request.param


@pytest.fixture
def encoder(monkeypatch):
    mapped = MappedEncoder()
    monkeypatch.setattr("recall.encoders.get_encoder", lambda: mapped)  # the encoder port, not the database
    return mapped


def neighbour_ids(bank, anchor):
    with owner_context(bank.principal):
        rows = grouping.neighbours(bank.principal, [anchor], start_key=0, now=NOW)[anchor]
    return [row[0] for row in rows]


def test_a_near_paraphrase_with_no_shared_words_joins_the_anchors_group(db, semantic_on, encoder):
    bank = Bank.new()
    anchor, near, far, other_scope = bank.add_many([
        dict(statement="The owner cycles to work.", subject="commute"),
        dict(statement="Daily rides by bicycle get them to the office.", subject="transport"),
        dict(statement="Granite countertops are expensive.", subject="kitchen"),
        dict(statement="Bicycle rides reach the office.", subject="transport", scope="project:bikes", portable=False),
    ])
    bank.vector(anchor, basis(0), encoder)
    bank.vector(near, blend(0, 1, 0.9), encoder)
    bank.vector(far, blend(0, 2, 0.2), encoder)
    bank.vector(other_scope, blend(0, 3, 0.95), encoder)
    assert neighbour_ids(bank, anchor) == [near]


def test_without_semantic_recall_or_vectors_the_arm_adds_nothing(db, settings, encoder):
    bank = Bank.new()
    anchor, near = bank.add_many([dict(statement="The owner cycles to work.", subject="commute"),
                                  dict(statement="Daily rides by bicycle get them to the office.", subject="transport")])
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = False
    bank.vector(anchor, basis(0), encoder)
    bank.vector(near, blend(0, 1, 0.9), encoder)
    assert neighbour_ids(bank, anchor) == []
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    assert neighbour_ids(bank, anchor) == [near]
    unvectored = Bank.new()
    a, b = unvectored.add_many([dict(statement="The owner cycles to work.", subject="commute"),
                                dict(statement="Daily rides by bicycle get them to the office.", subject="transport")])
    assert neighbour_ids(unvectored, a) == []


def test_the_semantic_arm_keeps_the_31_neighbour_bound_and_the_hard_predicates(db, semantic_on, encoder):
    bank = Bank.new()
    ids = bank.add_many([dict(statement=f"Ride number {i} reaches the office.", subject=f"ride {i}")
                         for i in range(40)])
    anchor = bank.add("The owner cycles to work.", subject="commute")
    retracted = bank.add("A retracted ride.", subject="old", status="retracted")
    bank.vector(anchor, basis(0), encoder)
    for i, memory_id in enumerate(ids + [retracted]):
        bank.vector(memory_id, blend(0, 1 + i, 0.99 - i * 0.001), encoder)
    found = neighbour_ids(bank, anchor)
    assert len(found) == bounds.RECON_GROUP_MAX_MEMBERS - 1
    assert retracted not in found and anchor not in found


def test_above_the_exact_bound_the_statement_reads_the_hnsw_index(db, semantic_on, encoder, search):
    """The indexed statement is served by the HNSW index, one probe per anchor (the planner
    is told not to prefer a scan and a sort, as it would at this small size)."""
    bank = Bank.new()
    anchor, near = bank.add_many([dict(statement="The owner cycles to work.", subject="commute"),
                                  dict(statement="Daily rides by bicycle get them to the office.", subject="transport")])
    bank.vector(anchor, basis(0), encoder)
    bank.vector(near, blend(0, 1, 0.9), encoder)
    with owner_context(bank.principal), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + sql.semantic_neighbours_sql(exact=search == "exact"), {
            "tenant_id": bank.principal.tenant_id, "principal_id": bank.principal.principal_id,
            "anchors": [anchor], "space": encoder.tuple.space, "now": NOW, "sensitivities": allowed_sensitivities(),
            "neighbours": bounds.RECON_GROUP_MAX_MEMBERS - 1, "max_distance": bounds.RECON_SEMANTIC_NEIGHBOUR_MAX_DISTANCE,
        })
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert ("memoryvector_embedding_hnsw" in plan) == (search == "indexed"), plan


def test_an_anchor_whose_lexical_neighbours_fill_the_bound_is_not_probed_by_vector(db, semantic_on, encoder):
    """Semantic rows only fill what the lexical probe leaves of the bound: with 31 lexical
    neighbours the arm would add nothing, so no statement reads the vectors for it."""
    from django.test.utils import CaptureQueriesContext

    bank = Bank.new()
    same = bank.add_many([dict(statement=f"The owner keeps the garden shed key number {i}.", subject="garden shed")
                          for i in range(bounds.RECON_GROUP_MAX_MEMBERS + 2)])
    anchor, near = same[0], bank.add("Daily rides by bicycle get them to the office.", subject="transport")
    bank.vector(anchor, basis(0), encoder)
    bank.vector(near, blend(0, 1, 0.95), encoder)
    with CaptureQueriesContext(connection) as captured:
        found = neighbour_ids(bank, anchor)
    assert len(found) == bounds.RECON_GROUP_MAX_MEMBERS - 1 and near not in found
    assert not any("recall_memoryvector" in query["sql"] for query in captured.captured_queries)


def test_the_indexed_probe_uses_dreamings_candidate_list_not_recalls(db, semantic_on, encoder, search, settings):
    """Recall searches with a long HNSW candidate list (questions lie away from the statements
    that answer them); dreaming's anchors are statements, and its probes keep their own,
    shorter list (RECON_SEMANTIC_HNSW_EF_SEARCH), so a slice's 128 probes do not pay recall's."""
    from django.test.utils import CaptureQueriesContext

    settings.RECALL_HNSW_EF_SEARCH = 999
    bank = Bank.new()
    anchor, near = bank.add_many([dict(statement="The owner cycles to work.", subject="commute"),
                                  dict(statement="Daily rides by bicycle get them to the office.", subject="transport")])
    bank.vector(anchor, basis(0), encoder)
    bank.vector(near, blend(0, 1, 0.9), encoder)
    with CaptureQueriesContext(connection) as captured:
        assert near in neighbour_ids(bank, anchor)
    tuned = [query["sql"] for query in captured.captured_queries if "hnsw.ef_search" in query["sql"]]
    if search == "exact":
        assert tuned == []
    else:
        assert tuned and all(f"'{bounds.RECON_SEMANTIC_HNSW_EF_SEARCH}'" in sql_text and "'999'" not in sql_text
                             for sql_text in tuned), tuned


def test_an_anchor_of_a_small_local_scope_is_compared_with_its_scope_alone(db, semantic_on, encoder, settings):
    """Only originals of the anchor's scope can join its group, so an anchor of a local scope
    with at most RECALL_EXACT_SEARCH_MAX_VECTORS originals is searched exactly among them, in
    one statement: no index probe that walks the shared scope's vectors for nothing."""
    from django.test.utils import CaptureQueriesContext

    bank = Bank.new()
    bikes = dict(scope="project:bikes", portable=False)
    anchor, near, far = bank.add_many([dict(statement="The owner cycles to work.", subject="commute", **bikes),
                                       dict(statement="Daily rides by bicycle get them to the office.",
                                            subject="transport", **bikes),
                                       dict(statement="Granite countertops are expensive.", subject="kitchen", **bikes)])
    shared = bank.add_many([dict(statement=f"Bicycle ride {i} reaches the office.", subject=f"ride {i}")
                            for i in range(5)])
    bank.vector(anchor, basis(0), encoder)
    bank.vector(near, blend(0, 1, 0.9), encoder)
    bank.vector(far, blend(0, 2, 0.2), encoder)
    for i, memory_id in enumerate(shared):  # nearer than ``near``, but in the shared scope
        bank.vector(memory_id, blend(0, 3 + i, 0.97), encoder)
    settings.RECALL_EXACT_SEARCH_MAX_VECTORS = 3  # the owner's 8 vectors go through the index; the scope's 3 do not

    def searched():
        with CaptureQueriesContext(connection) as captured:
            assert neighbour_ids(bank, anchor) == [near]
        return [query["sql"] for query in captured.captured_queries if "recall_memoryvector v" in query["sql"]]

    statements = searched()
    assert len(statements) == 1 and "m.scope = a.scope" in statements[0], statements
    assert "ORDER BY v.embedding <=> av.embedding" not in statements[0]
    bank.add("The owner's bike has a basket.", subject="bike", **bikes)  # 4 originals: past the bound, the index again
    assert any("ORDER BY v.embedding <=> av.embedding" in sql_text for sql_text in searched())

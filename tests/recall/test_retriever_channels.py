"""Channels, fallbacks, exact vs HNSW search, and the content-free trace."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection

from recall import encoders, query_cache, retriever
from recall.arms import permitted, semantic, sparse
from recall.domain import RecallRequest
from recall.models import RecallTrace
from recall.traces import rendered_sha256
from tests.factories import T0
from tests.recall.helpers import NOW, Bank, FailingEncoder, MappedEncoder, bank, basis, blend, semantic_on  # noqa: F401
from veetbot.rls import owner_context


def _two_worlds(bank: Bank, encoder: MappedEncoder):
    """One memory only lexical recall finds, one only dense recall finds."""
    lexical = bank.add("Renewed the passport at the town hall.", subject="paperwork", belief_type="fact")
    dense = bank.add("Keeps travel documents in the blue folder.", subject="storage", belief_type="fact")
    bank.vector(lexical, blend(0, 5, 0.1), encoder)
    bank.vector(dense, basis(0), encoder)
    return lexical, dense


def test_dense_channel_omits_sparse_candidates_and_signals(bank, semantic_on):
    encoder = MappedEncoder({"passport": basis(0)})
    lexical, dense = _two_worlds(bank, encoder)
    result = bank.recall("passport", channel="dense", encoder=encoder, max_items=1)
    assert result.channel == "dense" and result.fallback_reason == ""
    assert result.stages.lexical_ids == () and result.stages.structured_ids == ()
    assert result.stages.candidate_ids == result.stages.dense_ids == (dense, lexical)
    assert [item.id for item in result.items] == [dense]  # cosine order alone decides


def test_sparse_channel_runs_no_semantic_arm_and_never_encodes(bank, semantic_on):
    encoder = MappedEncoder({"passport": basis(0)})
    lexical, dense = _two_worlds(bank, encoder)
    result = bank.recall("passport", channel="sparse", encoder=encoder)
    assert result.channel == "sparse" and result.fallback_reason == ""
    assert result.stages.dense_ids == ()
    assert result.stages.candidate_ids == (lexical,)
    assert encoder.calls == 0


def test_hybrid_fuses_both_worlds_and_a_double_match_ranks_first(bank, semantic_on):
    encoder = MappedEncoder({"passport": basis(0)})
    lexical, dense = _two_worlds(bank, encoder)
    both = bank.add("Passport photos are in the blue folder.", subject="photos", belief_type="fact")
    bank.vector(both, blend(0, 9, 0.9), encoder)
    result = bank.recall("passport", encoder=encoder)
    assert result.requested_channel == "hybrid" and result.channel == "hybrid"
    assert set(result.stages.candidate_ids) == {lexical, dense, both}
    assert result.stages.ranked_ids[0] == both


def test_semantic_flag_off_falls_back_to_sparse_and_says_so(bank, settings):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = False
    encoder = MappedEncoder({"passport": basis(0)})
    lexical, _dense = _two_worlds(bank, encoder)
    for requested in (None, "hybrid", "dense"):
        result = bank.recall("passport", channel=requested, encoder=encoder)
        assert (result.channel, result.fallback_reason) == ("sparse", "semantic_disabled")
        assert result.requested_channel == (requested or "hybrid")
        assert result.stages.dense_ids == () and result.stages.candidate_ids == (lexical,)
    assert encoder.calls == 0
    explicit = bank.recall("passport", channel="sparse", encoder=encoder)
    assert (explicit.channel, explicit.fallback_reason) == ("sparse", "")


@pytest.mark.parametrize("failure", ["get_encoder none", "get_encoder raises", "encode raises", "wrong dimensions"])
def test_unavailable_encoder_falls_back_to_sparse_and_says_so(bank, semantic_on, monkeypatch, failure):
    encoder = MappedEncoder({"passport": basis(0)})
    lexical, _dense = _two_worlds(bank, encoder)
    kwargs = {}
    if failure == "get_encoder none":
        monkeypatch.setattr(encoders, "get_encoder", lambda: None)
    elif failure == "get_encoder raises":
        def refuse():
            raise encoders.EncoderUnavailable("test")
        monkeypatch.setattr(encoders, "get_encoder", refuse)
    elif failure == "encode raises":
        kwargs["encoder"] = FailingEncoder()
    else:
        kwargs["encoder"] = MappedEncoder({"passport": [1.0, 0.0, 0.0]})
    result = bank.recall("passport", channel="dense", **kwargs)
    assert (result.channel, result.requested_channel, result.fallback_reason) == ("sparse", "dense", "encoder_unavailable")
    assert result.stages.dense_ids == () and result.stages.candidate_ids == (lexical,)
    with owner_context(bank.principal):
        trace = RecallTrace.objects.get(id=result.trace_id)
    assert (trace.channel, trace.requested_channel, trace.fallback_reason, trace.space) == (
        "sparse", "dense", "encoder_unavailable", "")


def test_default_encoder_comes_from_get_encoder(bank, semantic_on, monkeypatch):
    encoder = MappedEncoder({"passport": basis(0)})
    _lexical, dense = _two_worlds(bank, encoder)
    monkeypatch.setattr(encoders, "get_encoder", lambda: encoder)
    result = bank.recall("passport", channel="dense")
    assert result.channel == "dense" and result.stages.dense_ids[0] == dense


def test_query_vectors_go_through_the_query_cache(bank, semantic_on):
    encoder = MappedEncoder({"passport": basis(0)})
    _two_worlds(bank, encoder)
    bank.recall("passport", channel="dense", encoder=encoder)
    bank.recall("passport", channel="dense", encoder=encoder)
    assert encoder.calls == 1
    key = query_cache.cache_key("passport", retriever.SEMANTIC_POLICY, encoder.tuple.space)
    assert query_cache.default_cache().get(key) == basis(0)


def test_vectors_of_another_space_are_never_used(bank, semantic_on):
    encoder, other_space = MappedEncoder({"q": basis(0)}), MappedEncoder({"q": basis(0)})
    memory_id = bank.add("Anything.", subject="a", belief_type="fact")
    bank.vector(memory_id, basis(0), other_space)
    assert bank.recall("q", channel="dense", encoder=encoder).stages.dense_ids == ()


def test_index_mode_enables_iterative_scans_and_returns_only_own_vectors_in_cosine_order(bank, semantic_on, settings):
    settings.RECALL_EXACT_SEARCH_MAX_VECTORS = 0  # always use the index
    encoder = MappedEncoder({"q": basis(0)})
    other = Bank.new("Neighbour")
    theirs = other.add_many([dict(statement=f"T {n}.", subject=f"t {n}", belief_type="fact") for n in range(150)])
    for n, memory_id in enumerate(theirs):
        other.vector(memory_id, blend(0, 1 + n, 0.99), encoder)  # all nearer than any of ours
    mine = bank.add_many([dict(statement=f"M {n}.", subject=f"m {n}", belief_type="fact") for n in range(70)])
    for n, memory_id in enumerate(mine):
        bank.vector(memory_id, blend(0, 200 + n, 0.5 - n / 200), encoder)
    with owner_context(bank.principal):
        assert semantic.use_exact_search(encoder.tuple.space) is False
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('hnsw.iterative_scan')")
            assert cursor.fetchone()[0] == "relaxed_order"
    # Whether the planner takes the HNSW index here depends on statistics (dead entries of
    # earlier rolled-back tests grow the index), and an approximate scan over this test's
    # near-duplicate vectors may find few rows; so this checks what must hold on any plan.
    # How many rows the index path finds at scale is measured on committed data instead.
    result = bank.recall("q", channel="dense", encoder=encoder, max_items=5)
    assert set(result.stages.dense_ids) <= set(mine)
    rank = {memory_id: n for n, memory_id in enumerate(mine)}  # mine are in falling cosine order
    assert [rank[i] for i in result.stages.dense_ids] == sorted(rank[i] for i in result.stages.dense_ids)


def test_exact_search_is_used_at_or_below_the_threshold(bank, semantic_on, settings):
    settings.RECALL_EXACT_SEARCH_MAX_VECTORS = 1
    encoder = MappedEncoder({"q": basis(0)})
    memory_id = bank.add("One.", subject="one", belief_type="fact")
    bank.vector(memory_id, basis(0), encoder)
    with owner_context(bank.principal):
        assert semantic.use_exact_search(encoder.tuple.space) is True


def test_the_owners_vector_count_is_reused_within_its_cache_time_then_retaken(bank, semantic_on, settings, monkeypatch):
    settings.RECALL_EXACT_SEARCH_MAX_VECTORS = 1
    settings.RECALL_VECTOR_COUNT_CACHE_SECONDS = 60
    monkeypatch.setattr(semantic, "_vector_counts", {})
    clock = [1000.0]
    monkeypatch.setattr(semantic.time, "monotonic", lambda: clock[0])
    encoder = MappedEncoder({"q": basis(0)})
    owner = (bank.principal.tenant_id, bank.principal.principal_id)
    first, second = bank.add_many([dict(statement="One.", subject="one"), dict(statement="Two.", subject="two")])
    bank.vector(first, basis(0), encoder)
    with owner_context(bank.principal):
        assert semantic.use_exact_search(encoder.tuple.space, owner=owner) is True  # 1 vector: at the threshold
        bank.vector(second, basis(1), encoder)
        clock[0] += 59.9
        assert semantic.use_exact_search(encoder.tuple.space, owner=owner) is True  # the cached count
        assert semantic.use_exact_search(encoder.tuple.space) is False  # no owner: counted now, 2 > 1
        clock[0] += 0.2
        assert semantic.use_exact_search(encoder.tuple.space, owner=owner) is False  # expired: 2 vectors


def test_semantic_arm_sql_orders_exact_mode_by_a_computed_column_the_index_cannot_serve():
    exact, index = semantic.semantic_arm(False, exact=True), semantic.semantic_arm(False, exact=False)
    assert "ORDER BY d.distance" in exact and "OFFSET 0" in exact
    assert "ORDER BY (v.embedding <=> %(query_vector)s::vector)" not in exact
    assert "ORDER BY (v.embedding <=> %(query_vector)s::vector)" in index


def test_surface_must_be_known(bank):
    with pytest.raises(ValueError):
        retriever.recall(principal=bank.principal, request=RecallRequest(query="q", ceiling="internal"), surface="web")


# --- trace ----------------------------------------------------------------------------------

def test_trace_records_the_recall_without_any_content(bank, semantic_on):
    encoder = MappedEncoder({"zebra passport renewal": basis(0)})
    memory_id = bank.add("Secretstatement zebra passport renewal.", subject="Secretsubject", belief_type="fact")
    bank.vector(memory_id, basis(0), encoder)
    as_of = NOW - timedelta(days=1)
    result = bank.recall("zebra passport renewal", encoder=encoder, max_items=7, max_tokens=900, as_of=as_of,
                         surface="api")
    with owner_context(bank.principal):
        trace = RecallTrace.objects.get(id=result.trace_id)
    assert (trace.tenant_id, trace.principal_id) == (bank.principal.tenant_id, bank.principal.principal_id)
    assert trace.created_at == NOW and trace.surface == "api"
    assert trace.policy == ["recall@1", "semantic@2", "expansion@2", "floor@1"] and trace.space == encoder.tuple.space
    # The relevance floor in force (the nearest similarity 1 minus the default margin) and
    # how many ranked originals it withheld: numbers, no content.
    assert trace.floor_min_similarity == pytest.approx(1 - semantic_on.RECALL_RELEVANCE_SIMILARITY_MARGIN, abs=1e-6)
    assert trace.floor_withheld == 0
    assert (trace.selection_mode, trace.channel, trace.requested_channel, trace.fallback_reason) == (
        "relevance", "hybrid", "hybrid", "")
    assert (trace.ceiling, trace.max_items, trace.max_tokens, trace.as_of) == ("internal", 7, 900, as_of)
    assert tuple(trace.candidate_ids) == result.stages.candidate_ids == (memory_id,)
    assert tuple(trace.dense_ids) == result.stages.dense_ids
    assert tuple(trace.ranked_ids) == result.stages.ranked_ids
    assert tuple(trace.rendered_ids) == result.stages.rendered_ids == (memory_id,)
    assert trace.rendered_sha256 == rendered_sha256(result.rendered)
    assert trace.rendered_tokens == result.rendered_tokens > 0
    assert trace.elapsed_ms > 0
    stored = json.dumps({f.name: getattr(trace, f.name) for f in RecallTrace._meta.fields}, default=str).lower()
    for text in ("secretstatement", "secretsubject", "zebra", "renewal", "passport"):
        assert text not in stored


def test_sparse_trace_names_no_semantic_policy_or_space(bank):
    bank.add("Passport.", subject="p", belief_type="fact")
    result = bank.recall("passport", channel="sparse", surface="cli")
    with owner_context(bank.principal):
        trace = RecallTrace.objects.get(id=result.trace_id)
    assert (trace.policy, trace.space, trace.surface, trace.dense_ids) == (["recall@1"], "", "cli", [])


def test_trace_is_written_in_the_owners_context_only(bank):
    other = Bank.new("Other")
    result = bank.recall("passport", channel="sparse")
    with owner_context(other.principal):
        assert not RecallTrace.objects.filter(id=result.trace_id).exists()
    with owner_context(bank.principal):
        assert RecallTrace.objects.filter(id=result.trace_id).exists()


def test_stages_are_excluded_from_serialization(bank):
    bank.add("Passport.", subject="p", belief_type="fact")
    result = bank.recall("passport", channel="sparse")
    dumped = result.model_dump(mode="json")
    assert "stages" not in dumped and result.stages.ranked_ids
    assert set(dumped) == {"query", "channel", "requested_channel", "fallback_reason", "selection_mode", "items",
                           "rendered", "rendered_tokens", "trace_id"}


def test_rendered_items_carry_their_sources(bank):
    memory_id = bank.add("Passport.", subject="p", belief_type="fact")
    event = bank.event()
    result = bank.recall("passport", channel="sparse")
    assert result.items[0].id == memory_id
    assert [(s.event, s.part) for s in result.items[0].sources] == [(event.id, event.parts[0].id)]


def test_recall_at_a_fixed_clock_is_deterministic(bank):
    bank.add_many([dict(statement=f"Passport note {n}.", subject=f"p {n}", belief_type="fact") for n in range(30)],
                  at=T0)
    first = bank.recall("passport note", channel="sparse")
    second = bank.recall("passport note", channel="sparse")
    assert first.rendered == second.rendered and first.stages.ranked_ids == second.stages.ranked_ids


def test_candidates_no_longer_permitted_at_the_rejoin_are_dropped_before_ranking(bank, semantic_on, monkeypatch):
    """An arm's answer is not trusted: a belief retracted between the arm's statement and
    the rejoin (simulated by an arm that returns it) is neither ranked nor rendered."""
    from memory.domain import MemoryChanges
    from memory.services import memory_revise

    encoder = MappedEncoder({"passport": basis(0)})
    kept = bank.add("Passport renewed.", subject="p", belief_type="fact")
    gone = bank.add("Passport lost.", subject="q", belief_type="fact")
    bank.vector(kept, basis(0), encoder)
    memory_revise(principal=bank.principal, memory_id=gone, changes=MemoryChanges(status="retracted"),
                  now=NOW - timedelta(days=1))
    real_sparse, real_semantic = sparse.sparse, semantic.semantic

    def stale_sparse(*args, **kwargs):
        lexical, structured = real_sparse(*args, **kwargs)
        return [permitted.Candidate(id=gone, store_position=10**6, signal=9.0), *lexical], structured

    def stale_semantic(*args, **kwargs):
        return [permitted.Candidate(id=gone, store_position=10**6, signal=0.0), *real_semantic(*args, **kwargs)]

    monkeypatch.setattr(sparse, "sparse", stale_sparse)
    monkeypatch.setattr(semantic, "semantic", stale_semantic)
    result = bank.recall("passport", encoder=encoder)
    assert gone in result.stages.candidate_ids  # the arms said so...
    assert gone not in result.stages.ranked_ids and gone not in result.stages.rendered_ids  # ...the rejoin did not
    assert [item.id for item in result.items] == [kept]

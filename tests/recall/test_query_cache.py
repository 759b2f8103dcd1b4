"""The bounded query-vector cache: hits, five-minute expiry, LRU eviction at 129,
keys bound to query + policy + space, vectors only, thread safety."""
from __future__ import annotations

import threading

import pytest

from recall import query_cache
from recall.domain import EmbeddingTuple
from recall.encoders import EncoderUnavailable
from recall.query_cache import QueryVectorCache, query_vector


class CountingEncoder:
    def __init__(self, model: str = "count") -> None:
        self.tuple = EmbeddingTuple(provider="local", model=model, model_revision="1", dimensions=3)
        self.calls: list[str] = []
        self.fail = False

    def encode(self, texts):
        if self.fail:
            raise EncoderUnavailable("down")
        self.calls.extend(texts)
        return [[float(len(self.calls)), float(len(text)), 1.0] for text in texts]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def cache(clock):
    return QueryVectorCache(entries=128, seconds=300, clock=clock)


def test_identical_query_and_policy_is_served_from_the_cache(cache):
    encoder = CountingEncoder()
    first = query_vector(encoder, "what units?", "recall@1", cache=cache)
    second = query_vector(encoder, "what units?", "recall@1", cache=cache)
    assert first == second and encoder.calls == ["what units?"]
    assert (cache.hits, cache.misses) == (1, 1)


def test_a_cached_vector_expires_five_minutes_after_it_was_computed(cache, clock):
    encoder = CountingEncoder()
    query_vector(encoder, "q", "p", cache=cache)
    clock.now += 299.999
    query_vector(encoder, "q", "p", cache=cache)  # a hit does not extend the expiry
    assert len(encoder.calls) == 1
    clock.now += 0.001
    query_vector(encoder, "q", "p", cache=cache)
    assert len(encoder.calls) == 2


def test_the_129th_query_evicts_the_least_recently_used(cache):
    encoder = CountingEncoder()
    for n in range(128):
        query_vector(encoder, f"q{n}", "p", cache=cache)
    query_vector(encoder, "q0", "p", cache=cache)  # q0 is now the most recent; q1 the least
    assert len(encoder.calls) == 128
    query_vector(encoder, "q128", "p", cache=cache)
    assert len(cache) == 128
    query_vector(encoder, "q0", "p", cache=cache)
    assert len(encoder.calls) == 129  # q0 survived
    query_vector(encoder, "q1", "p", cache=cache)
    assert len(encoder.calls) == 130  # q1 was evicted


def test_keys_differ_by_policy(cache):
    encoder = CountingEncoder()
    query_vector(encoder, "q", "recall@1", cache=cache)
    query_vector(encoder, "q", "recall@2", cache=cache)
    assert encoder.calls == ["q", "q"]


def test_keys_differ_by_embedding_space(cache):
    one, other = CountingEncoder("a"), CountingEncoder("b")
    query_vector(one, "q", "p", cache=cache)
    query_vector(other, "q", "p", cache=cache)
    assert one.calls == ["q"] and other.calls == ["q"]


def test_keys_use_the_complete_query_text(cache):
    encoder = CountingEncoder()
    long = "x" * 5000
    query_vector(encoder, long + "a", "p", cache=cache)
    query_vector(encoder, long + "b", "p", cache=cache)
    assert len(encoder.calls) == 2


def test_the_cache_holds_digests_and_vectors_but_no_query_text(cache):
    encoder = CountingEncoder()
    query_vector(encoder, "my secret query", "p", cache=cache)
    assert "secret" not in repr(cache._items)
    (key,) = cache._items
    assert len(key) == 64


def test_an_encoder_failure_is_not_cached(cache):
    encoder = CountingEncoder()
    encoder.fail = True
    with pytest.raises(EncoderUnavailable):
        query_vector(encoder, "q", "p", cache=cache)
    assert len(cache) == 0
    encoder.fail = False
    query_vector(encoder, "q", "p", cache=cache)
    assert encoder.calls == ["q"]


def test_a_returned_vector_cannot_change_the_cached_one(cache):
    encoder = CountingEncoder()
    vector = query_vector(encoder, "q", "p", cache=cache)
    vector[0] = 999.0
    assert query_vector(encoder, "q", "p", cache=cache)[0] != 999.0


def test_the_process_cache_takes_its_bounds_from_settings(settings, monkeypatch):
    monkeypatch.setattr(query_cache, "_default", None)
    settings.RECALL_QUERY_CACHE_ENTRIES = 128
    settings.RECALL_QUERY_CACHE_SECONDS = 300
    default = query_cache.default_cache()
    assert (default.entries, default.seconds) == (128, 300)
    encoder = CountingEncoder()
    query_vector(encoder, "q", "p")
    query_vector(encoder, "q", "p")
    assert encoder.calls == ["q"]


def test_concurrent_queries_never_exceed_the_bound(clock):
    cache = QueryVectorCache(entries=16, seconds=300, clock=clock)
    encoder = CountingEncoder()
    errors = []

    def worker(offset: int):
        try:
            for n in range(300):
                vector = query_vector(encoder, f"q{(n * 7 + offset) % 40}", "p", cache=cache)
                assert len(vector) == 3
                assert len(cache._items) <= 16
        except Exception as error:  # surfaced below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(cache) == 16

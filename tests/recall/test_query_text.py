"""The query's owner-perspective form and the combined query vector (recall.query_text)."""
from __future__ import annotations

import math

import pytest

from recall import query_text
from recall.query_cache import QueryVectorCache, query_vector
from tests.recall.test_query_cache import CountingEncoder


@pytest.mark.parametrize("asked, rewritten", [
    ("What does my brother do for a living?", "What does the owner's brother do for a living?"),
    ("Where did I put my travel ID?", "Where did the owner put the owner's travel ID?"),
    ("Who looks after the greenery while I'm away?", "Who looks after the greenery while the owner is away?"),
    ("My sister and me", "The owner's sister and the owner"),
    ("Where and when is our company retreat?", "Where and when is the owner's company retreat?"),
    ("Is this mine or did I lend it to myself?", "Is this the owner's or did the owner lend it to the owner?"),
])
def test_first_person_words_become_the_owner(asked, rewritten):
    assert query_text.owner_perspective(asked) == rewritten


@pytest.mark.parametrize("query", [
    "Where does Caroline live?", "Which Indian dishes are mild?", "Summary of item 7", "ME/CFS symptoms",
])
def test_a_query_without_first_person_words_is_encoded_alone(query):
    assert query_text.texts(query) == [query]


def test_a_first_person_query_is_encoded_twice_in_one_call_and_cached_once():
    encoder = CountingEncoder()
    cache = QueryVectorCache(entries=4, seconds=60)
    first = query_vector(encoder, "Where do I live?", "p", cache=cache)
    assert encoder.calls == ["Where do I live?", "Where do the owner live?"]
    assert query_vector(encoder, "Where do I live?", "p", cache=cache) == first
    assert len(encoder.calls) == 2  # the combined vector was cached under the query as asked


def test_the_combined_vector_is_the_normalised_mean():
    combined = query_text.combine([[1.0, 0.0], [0.0, 1.0]])
    assert combined == pytest.approx([math.sqrt(0.5), math.sqrt(0.5)])
    assert query_text.combine([[3.0, 4.0]]) == [3.0, 4.0]  # one text: its own vector


def test_an_encoder_returning_too_few_vectors_is_unavailable_and_nothing_is_cached():
    from recall.encoders import EncoderUnavailable

    class Short(CountingEncoder):
        def encode(self, texts):
            return super().encode(texts)[:1]

    cache = QueryVectorCache(entries=4, seconds=60)
    with pytest.raises(EncoderUnavailable):
        query_vector(Short(), "What do I like?", "p", cache=cache)
    assert len(cache) == 0

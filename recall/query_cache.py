"""A bounded, short-lived cache of query vectors (the local semantic query lookup).

A query's vector is computed from the query and its owner-perspective form
(``recall.query_text``), encoded in one call. Keyed by a SHA-256 of the complete query
text, the recall policy string and the embedding space, so a vector is reused only for the identical query under the identical
policy in the identical space. It holds vectors and digests only: never a query in
clear, never source content (originals are resolved on every recall).

Bounds: settings.RECALL_QUERY_CACHE_ENTRIES entries (least recently used evicted first)
and settings.RECALL_QUERY_CACHE_SECONDS from when a vector was computed (a hit does not
extend it). Thread-safe; the encoder runs outside the lock, so one slow miss never
blocks other queries' hits (two concurrent misses of one key both encode; the second
write wins and is identical).
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from typing import Callable, Optional

from django.conf import settings

from recall import query_text
from recall.encoders import Encoder, EncoderUnavailable


def cache_key(query: str, policy: str, space: str) -> str:
    payload = json.dumps([query, policy, space], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class QueryVectorCache:
    def __init__(self, *, entries: int, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        if entries < 1 or seconds <= 0:
            raise ValueError("cache bounds must be positive")
        self.entries = entries
        self.seconds = seconds
        self.clock = clock
        self._items: OrderedDict[str, tuple[float, tuple[float, ...]]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def get(self, key: str) -> Optional[list[float]]:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            expires_at, vector = item
            if self.clock() >= expires_at:
                del self._items[key]
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return list(vector)

    def put(self, key: str, vector: list[float]) -> None:
        with self._lock:
            self._items[key] = (self.clock() + self.seconds, tuple(vector))
            self._items.move_to_end(key)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def query_vector(self, encoder: Encoder, query: str, policy: str) -> list[float]:
        key = cache_key(query, policy, encoder.tuple.space)
        vector = self.get(key)
        if vector is None:
            texts = query_text.texts(query)
            vectors = encoder.encode(texts)  # EncoderUnavailable propagates; nothing cached
            if len(vectors) != len(texts):
                raise EncoderUnavailable(f"the encoder returned {len(vectors)} vectors for {len(texts)} texts")
            vector = query_text.combine(vectors)
            self.put(key, vector)
        return list(vector)


_default: Optional[QueryVectorCache] = None
_default_lock = threading.Lock()


def default_cache() -> QueryVectorCache:
    """The process-wide cache, sized from settings on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = QueryVectorCache(
                entries=settings.RECALL_QUERY_CACHE_ENTRIES, seconds=settings.RECALL_QUERY_CACHE_SECONDS,
            )
        return _default


def query_vector(encoder: Encoder, query: str, policy: str, *, cache: Optional[QueryVectorCache] = None) -> list[float]:
    """The query's vector in ``encoder``'s space, from the cache when fresh."""
    return (cache if cache is not None else default_cache()).query_vector(encoder, query, policy)

"""Shared builders of the recall tests: a bank of real originals written through the real
creation path, controlled vectors, and a small test encoder.

``MappedEncoder`` implements the Encoder interface (``tuple`` + ``encode``) by mapping
known texts to chosen 384-d unit vectors; its space is unique per instance, so the
process-wide query-vector cache can never hand one test another test's vector. Vectors
for originals are written directly into ``MemoryVector`` rows with the original's
*current* content revision — also for rows that must never be recalled (retracted,
erased, other owner...), so a test proves the retriever's predicates exclude them, not
merely that no vector existed.
"""
from __future__ import annotations

import math
import uuid
from datetime import datetime, timedelta
from typing import Iterable, Optional, Sequence
from uuid import UUID

import pytest

from memory.models import Memory
from memory.services.originals import insert_memories
from recall.domain import EmbeddingTuple, RecallRequest, RecallResult
from recall.models import EMBEDDING_DIMENSIONS, MemoryVector
from recall.retriever import recall
from tests.factories import T0, draft, make_owner, owner_message
from veetbot.identity import Principal
from veetbot.rls import owner_context

NOW = T0 + timedelta(days=30)


def basis(index: int) -> list[float]:
    vector = [0.0] * EMBEDDING_DIMENSIONS
    vector[index] = 1.0
    return vector


def blend(index: int, other: int, cosine: float) -> list[float]:
    """A unit vector whose cosine similarity with ``basis(index)`` is ``cosine``."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    vector[index] = cosine
    vector[other] = math.sqrt(1.0 - cosine * cosine)
    return vector


class MappedEncoder:
    """Known texts → chosen unit vectors; anything else → ``default`` (or unavailable).

    A known query's owner-perspective form (``recall.query_text``), which the retriever
    encodes beside it, maps to the query's own vector, so the combined vector is the
    chosen direction."""

    def __init__(self, mapping: Optional[dict[str, list[float]]] = None, *, default: Optional[list[float]] = None):
        self.tuple = EmbeddingTuple(provider="test", model="mapped", model_revision=uuid.uuid4().hex,
                                    dimensions=EMBEDDING_DIMENSIONS)
        self.mapping = dict(mapping or {})
        self.default = default
        self.calls = 0

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        from recall.encoders import EncoderUnavailable
        from recall.query_text import owner_perspective

        self.calls += 1
        out = []
        for text in texts:
            vector = self.mapping.get(text)
            if vector is None:
                vector = next((v for known, v in self.mapping.items() if owner_perspective(known) == text), self.default)
            if vector is None:
                raise EncoderUnavailable("unknown test text")
            out.append(list(vector))
        return out


class FailingEncoder(MappedEncoder):
    def encode(self, texts):
        from recall.encoders import EncoderUnavailable

        raise EncoderUnavailable("test failure")


class Bank:
    """One owner's memories, made through ``insert_memories`` (the creation path import uses)."""

    def __init__(self, principal: Principal):
        self.principal = principal
        self._event = None

    @classmethod
    def new(cls, name: str = "Recall owner") -> "Bank":
        principal, _token = make_owner(name)
        return cls(principal)

    def event(self):
        if self._event is None:
            self._event = owner_message(self.principal, "Things I told my assistant.")
        return self._event

    def add(self, statement: str, *, subject: str = "note", at: datetime = T0, **overrides) -> UUID:
        return self.add_many([dict(statement=statement, subject=subject, **overrides)], at=at)[0]

    def add_many(self, specs: Iterable[dict], *, at: datetime = T0) -> list[UUID]:
        """Memories created at ``at`` (store positions in list order, after older ones)."""
        drafts = []
        for offset, spec in enumerate(specs):
            spec = dict(spec)
            created = at + timedelta(microseconds=offset)
            spec.setdefault("created_at", created)
            drafts.append(draft(self.event(), at=spec.pop("at", at), **spec))
        with owner_context(self.principal):
            ids = insert_memories(self.principal, drafts, at)
        return ids  # insert_memories orders by (created_at, id): the order of ``specs``

    def revision(self, memory_id: UUID) -> int:
        with owner_context(self.principal):
            return Memory.objects.get(id=memory_id).content_revision

    def vector(self, memory_id: UUID, vector: list[float], encoder: MappedEncoder, *, revision: Optional[int] = None) -> None:
        with owner_context(self.principal):
            row = Memory.objects.get(id=memory_id)
            MemoryVector.objects.update_or_create(
                memory_id=memory_id, space=encoder.tuple.space,
                defaults=dict(
                    tenant_id=self.principal.tenant_id, principal_id=self.principal.principal_id,
                    content_revision=revision or row.content_revision, provider=encoder.tuple.provider,
                    model=encoder.tuple.model, model_revision=encoder.tuple.model_revision,
                    dimensions=encoder.tuple.dimensions, text_version=encoder.tuple.text_version,
                    text_sha256="0" * 64, embedding=vector, created_at=T0,
                ),
            )

    def recall(self, query: str, *, surface: str = "eval", encoder=None, now: datetime = NOW, **fields) -> RecallResult:
        fields.setdefault("ceiling", "internal")
        request = RecallRequest(query=query, **fields)
        kwargs = {} if encoder is None else {"encoder": encoder}
        return recall(principal=self.principal, request=request, surface=surface, now=now, **kwargs)


@pytest.fixture
def bank(db) -> Bank:
    return Bank.new()


@pytest.fixture
def semantic_on(settings):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    return settings

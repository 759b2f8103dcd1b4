"""What the semantic arm encodes for a query: the query as asked, and in the owner's voice.

Originals speak about the owner in the third person — "The owner's brother works as a
firefighter" (memory-text@1 is subject + statement as stored) — while the owner asks in the
first person: "what does my brother do for a living?". A small sentence encoder keeps "my"
and "the owner's" apart, so the first-person question sits measurably farther from the
belief than the same question in the beliefs' own voice. The query vector is therefore the
normalised mean of two encodings: the query as asked, and its *owner-perspective form*, in
which first-person words become "the owner" (``owner_perspective``). Keeping the original
in the mean keeps what a plain rewrite loses (questions that are not about the owner, and
quoted first person).

Tuned on the recall diagnostic's development split only; the measurements, before and
after and on the holdout, are in the README's recall reports.

Pure: no database, no encoder. The query-vector cache keys on the query as asked, and
``recall.retriever.SEMANTIC_POLICY`` names this version (``QUERY_TEXT_VERSION``).
"""
from __future__ import annotations

import math
import re
from typing import Sequence

QUERY_TEXT_VERSION = "query-text@2"  # @1 was the query alone

# Whole words, case-sensitive where English is ("I" is a pronoun, "i" is not), in order:
# contractions before the bare pronoun they start with.
_OWNER_VOICE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement) for pattern, replacement in (
        (r"\bI'm\b|\bI’m\b", "the owner is"),
        (r"\bI've\b|\bI’ve\b", "the owner has"),
        (r"\bI'd\b|\bI’d\b", "the owner would"),
        (r"\bI'll\b|\bI’ll\b", "the owner will"),
        (r"\b[Mm]yself\b", "the owner"),
        (r"\bMy\b", "The owner's"),
        (r"\bmy\b", "the owner's"),
        (r"\b[Mm]ine\b", "the owner's"),
        (r"\bI\b", "the owner"),
        (r"\b[Mm]e\b", "the owner"),
        (r"\bWe\b", "The owner"),
        (r"\bwe\b", "the owner"),
        (r"\bOur\b", "The owner's"),
        (r"\bour\b", "the owner's"),
        (r"\bus\b", "the owner"),
    )
)


def owner_perspective(query: str) -> str:
    """``query`` with first-person words replaced by "the owner" (unchanged when it has none)."""
    for pattern, replacement in _OWNER_VOICE:
        query = pattern.sub(replacement, query)
    return query


def texts(query: str) -> list[str]:
    """The texts to encode for ``query``: itself, then its owner-perspective form if different."""
    rewritten = owner_perspective(query)
    return [query] if rewritten == query else [query, rewritten]


def combine(vectors: Sequence[Sequence[float]]) -> list[float]:
    """One text's vector as it is; for two, their normalised mean (cosine ignores scale)."""
    if len(vectors) == 1:
        return list(vectors[0])
    summed = [math.fsum(values) for values in zip(*vectors)]
    norm = math.sqrt(math.fsum(x * x for x in summed))
    if not norm or not math.isfinite(norm):
        return summed  # the retriever's finiteness check decides what to do with it
    return [x / norm for x in summed]

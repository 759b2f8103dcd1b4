"""Token-level answer F1 for probe answers (SQuAD v1.1 style), pinned by the reconsolidation
manifest.

Normalisation is SQuAD's: lowercase, drop ASCII punctuation, drop the articles "a", "an" and
"the", split on whitespace. F1 is the harmonic mean of token precision and recall over the
multiset of tokens; a prediction is scored against every alias and the best score counts.

One deliberate difference from the SQuAD v2 script: an empty side (a missing answer, or an alias
that normalises to nothing) scores 0.0, never 1.0, so emptiness can never look like a match.

Pure: no Django, no database, no I/O. Changing any byte of this file requires a new VERSION and
a new manifest (reconsolidation/evidence/corpus/memory-reconsolidation.manifest.json).
"""
from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable, Sequence

VERSION = "answer-token-f1@1"

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lowercase, strip punctuation, strip articles, collapse whitespace (in SQuAD's order)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


def f1_tokens(prediction: Sequence[str], gold: Sequence[str]) -> float:
    """F1 of two normalised token sequences; 0.0 when either is empty."""
    if not prediction or not gold:
        return 0.0
    same = sum((Counter(prediction) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision = same / len(prediction)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, gold: str) -> float:
    return f1_tokens(answer_tokens(prediction), answer_tokens(gold))


def max_f1(prediction: str, aliases: Iterable[str]) -> float:
    """The best F1 of ``prediction`` over the gold ``aliases`` (0.0 without aliases)."""
    return max((token_f1(prediction, alias) for alias in aliases), default=0.0)

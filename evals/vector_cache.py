"""A text -> vector cache for the evaluations' banks: the real encoder's own vectors, kept in
a ``.npz`` file between runs, so a benchmark at 100,000 memories spends its time measuring,
not encoding. A cache is bound to one embedding space; a file of another space is ignored.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Optional, Sequence

from evals.recall import report as rpt


class CachedEncoder:
    """The real encoder behind a text → vector cache (same tuple, same vectors)."""

    def __init__(self, encoder, cache: Optional[dict[str, list[float]]] = None) -> None:
        self.inner = encoder
        self.tuple = encoder.tuple
        self.cache = cache if cache is not None else {}
        self.encoded = 0

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if self.key(t) not in self.cache))
        if missing:
            for text, vector in zip(missing, self.inner.encode(missing)):
                self.cache[self.key(text)] = vector
            self.encoded += len(missing)
        return [list(self.cache[self.key(t)]) for t in texts]


def load_vector_cache(path: Optional[Path], space: str) -> dict[str, list[float]]:
    if path is None or not path.exists():
        return {}
    import numpy as np

    with np.load(path) as data:
        if str(data["space"]) != space:
            rpt.note(f"vector cache {path} is for another embedding space; ignored")
            return {}
        return {k: v.tolist() for k, v in zip(data["keys"].tolist(), data["vectors"])}


def save_vector_cache(path: Optional[Path], space: str, cache: dict[str, list[float]]) -> None:
    if path is None or not cache:
        return
    import numpy as np

    keys = sorted(cache)
    partial = path.with_name(path.name + ".partial.npz")
    np.savez(partial, space=np.array(space), keys=np.array(keys),
             vectors=np.array([cache[k] for k in keys], dtype=np.float32))
    os.replace(partial, path)

"""The relevance floor: which ranked originals are related enough to the query to render.

Fusion is rank-based, so its score says nothing about whether a candidate is related at
all: the twentieth of 160 candidates fills the twentieth slot whether it paraphrases the
question or is a bedtime routine after the coffee ones. The floor therefore reads the
channels' own signals, not the fused score, and — since absolute cosine values do not carry
from one query to the next — measures similarity against the query's own nearest original.

It applies only where a similarity exists: hybrid and dense recall whose semantic arm
returned something. Sparse recall (every semantic fallback included) and the ``recent``
selection stay unfloored: without a vector there is no calibrated signal. A margin of 0
switches it off. It withholds from rendering only: the ranked stage keeps the whole fused
order, and the trace records the threshold and how many ranked originals it withheld.
Items a read-time view offers after the originals are not floored here (they only take
slots the floored originals leave).

Pure: no database; the setting is read only when ``margin`` is left out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence
from uuid import UUID

from django.conf import settings

SIMILARITY_ARMS = ("semantic", "expansion")  # signal = cosine distance to the query vector
EXACT_STRUCTURED_TIER = 0.0


class _Signal:  # what the floor needs of a candidate (recall.arms.permitted.Candidate)
    id: UUID
    signal: float


@dataclass(frozen=True)
class Floor:
    min_similarity: float  # this recall's threshold: the nearest similarity − the margin
    above: frozenset[UUID]

    def split(self, ids: Sequence[UUID]) -> tuple[list[UUID], list[UUID]]:
        """(kept, withheld) of ``ids``, each in the given order."""
        kept = [i for i in ids if i in self.above]
        return kept, [i for i in ids if i not in self.above]


def configured() -> float:
    return float(settings.RECALL_RELEVANCE_SIMILARITY_MARGIN)


def relevance_floor(
    lists: Mapping[str, Sequence[_Signal]], *, lexical_min: Optional[float], margin: Optional[float] = None,
) -> Optional[Floor]:
    """The floor for one recall's arm lists, or None when it does not apply (the semantic
    arm found nothing, or the margin is 0). ``lexical_min``: the hybrid lexical vote floor
    (None in dense, where the lexical and structured arms do not run).

    With s* the best cosine similarity (1 − cosine distance) in the semantic arm's list, a
    ranked original is above the floor when any of these holds:

    * **meaning**: its cosine similarity to the query vector (the better of the semantic and
      expansion arms') is at least s* − ``margin`` (RECALL_RELEVANCE_SIMILARITY_MARGIN);
    * **words** (hybrid only): it covers at least the hybrid lexical vote floor of the
      query's lexemes (``recall.ranking.fusion.lexical_floor``) — a lexical hit that votes
      in fusion is never withheld, however far its vector is from the query's;
    * **identity** (hybrid only): the structured arm matched it exactly (tier 0: an entity
      ID of the request or a subject that is a whole phrase of the query; broad type
      anchors, tier 1, say what kind of belief it is, not that it is the one asked about),
      or the expansion arm returned it: a sibling of one of the first fusion's top results
      is related through its seed ("what does my mum's sister do" → her job), so its own
      cosine says nothing.

    A candidate outside the semantic and expansion lists has no similarity (it is below the
    arm's last nearest) and passes only by words or identity.
    """
    margin = configured() if margin is None else float(margin)
    nearest = max((1.0 - c.signal for c in lists.get("semantic", ())), default=None)
    if margin <= 0 or nearest is None:
        return None
    threshold = nearest - margin
    above: set[UUID] = set()
    for arm in SIMILARITY_ARMS:
        above.update(c.id for c in lists.get(arm, ()) if 1.0 - c.signal >= threshold)
    above.update(c.id for c in lists.get("expansion", ()))
    if lexical_min is not None:
        above.update(c.id for c in lists.get("lexical", ()) if c.signal >= lexical_min)
        above.update(c.id for c in lists.get("structured", ()) if c.signal == EXACT_STRUCTURED_TIER)
    return Floor(min_similarity=threshold, above=frozenset(above))

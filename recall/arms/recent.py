"""The recent arm: the bounded newest-first selection of ``selection_mode="recent"``.

It ranks by store position alone, with no relevance; kept for frozen controls that compare
against it. It runs instead of every other arm, and recall with it stays sparse.
"""
from __future__ import annotations

from recall.arms.permitted import Candidate, Read, permitted, run


def recent_arm(historical: bool) -> str:
    """The legacy bounded newest-first selection (frozen controls only)."""
    return permitted(historical) + """
    SELECT p.id, p.store_position FROM permitted p
    ORDER BY p.store_position DESC, p.id
    LIMIT %(limit)s
    """


def recent(read: Read) -> list[Candidate]:
    rows = run(recent_arm(read.historical), {**read.params, "limit": read.limit})
    return [Candidate(id=r[0], store_position=r[1], signal=0.0) for r in rows]

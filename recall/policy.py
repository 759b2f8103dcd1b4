"""The registry of recall policy tags: the names a trace gives the stages that ran.

A recall's policy identity is the list of tags of the stages that ran, in pipeline order —
``recall@1`` always, then ``semantic@2``, ``expansion@2``, ``floor@1`` and
``reconsolidation@3`` and ``excerpts@1`` when they did — stored as ``RecallTrace.policy`` (``text[]``, never
empty). A list cannot overflow a column whatever stages a later version adds, and nothing
is ever cut to fit. Each tag names one versioned behaviour; a change of behaviour is a new
tag, registered here — every tag is defined here and nowhere else, including the one for
the read-time view another app registers in ``recall.hooks``.

``tags`` is the only way a trace's policy is built: an unregistered, repeated or
out-of-order tag is a programming error, raised before anything is written. This module
never writes and never reads a row, and imports nothing of the project.
"""
from __future__ import annotations

from typing import Optional

RECALL = "recall@1"  # lexical coverage + structured tiers + RRF, whole-item budget
SEMANTIC = "semantic@2"  # cosine rank of memory-text@1 vectors to a query-text@2 vector, rejoined
EXPANSION = "expansion@2"  # specific same-subject / same-entity siblings of the fused top, by query cosine
FLOOR = "floor@1"  # the relevance floor withheld unrelated ranked originals from rendering
RECONSOLIDATION = "reconsolidation@3"  # the read-time view registered in recall.hooks offered the items
EXCERPTS = "excerpts@1"  # recall.excerpts: the kept originals were offered their owner source excerpts

# Pipeline order: a trace lists the stages that ran in this order.
REGISTERED: tuple[str, ...] = (RECALL, SEMANTIC, EXPANSION, FLOOR, RECONSOLIDATION, EXCERPTS)


class UnregisteredPolicyTag(ValueError):
    """A trace was about to record a policy that this registry does not name."""


def check(policy: tuple[str, ...]) -> tuple[str, ...]:
    """``policy`` itself when it is a valid identity: non-empty, every tag registered,
    none repeated, in pipeline order."""
    unknown = [tag for tag in policy if tag not in REGISTERED]
    if unknown:
        raise UnregisteredPolicyTag(f"unregistered recall policy tag(s): {', '.join(map(repr, unknown))}")
    positions = [REGISTERED.index(tag) for tag in policy]
    if not positions or positions != sorted(set(positions)):
        raise UnregisteredPolicyTag(f"a recall policy is registered tags, each once, in pipeline order: {policy!r}")
    return policy


def tags(*ran: Optional[str]) -> tuple[str, ...]:
    """The policy identity of one recall from the tags of its stages (None: did not run)."""
    return check(tuple(tag for tag in ran if tag is not None))

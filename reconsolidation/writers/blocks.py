"""Owner blocks: hash-only signatures that stop an undone or rejected operation recurring.

Signatures are SHA-256 over opaque identities and normalised claim hashes, never prose,
and never over a subject label, policy or model identity — so neither a retry, a renamed
subject, a policy upgrade nor another model evades them:

* ``exact`` — the operation kind and its sorted source IDs (any kind);
* ``member_pairs`` — every pair of merge members: an undone set blocks any later set
  containing one of its pairs, subsets and supersets alike;
* ``claim_event_pairs`` — every pair of (claim hash, original-event identity) of merge
  members: copying the same evidence under new belief IDs still matches;
* ``summary_claims`` — the attribution and the case-folded normalised clause set of a
  summary, independent of order, subject and source IDs.
"""
from __future__ import annotations

import hashlib
from itertools import combinations
from typing import Iterable, Mapping, Sequence
from uuid import UUID

from memory.claims import normalize_text
from reconsolidation.models import ReconsolidationBlock


def _sha(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def exact(kind: str, memory_ids: Iterable[UUID]) -> str:
    return _sha(kind, *sorted(str(i) for i in memory_ids))


def member_pairs(memory_ids: Iterable[UUID]) -> set[str]:
    ids = sorted(str(i) for i in memory_ids)
    return {_sha("merge_member_pair", a, b) for a, b in combinations(ids, 2)}


def claim_event_pairs(claims: Mapping[UUID, str], events: Mapping[UUID, Sequence[UUID]]) -> set[str]:
    """``claims``: each member's claim hash; ``events``: its original leaf events."""
    leaves = {
        memory_id: f"{claims[memory_id]}:{','.join(sorted(str(e) for e in events.get(memory_id, ())))}"
        for memory_id in claims
    }
    return {_sha("merge_claim_event_pair", *sorted((leaves[a], leaves[b])))
            for a, b in combinations(sorted(leaves, key=str), 2)}


def summary_claims(attribution: str, texts: Iterable[str]) -> str:
    return _sha("summary_claims", attribution, *sorted({normalize_text(text) for text in texts}))


def any_blocked(signatures: Iterable[str]) -> bool:
    wanted = list(set(signatures))
    return bool(wanted) and ReconsolidationBlock.objects.filter(signature__in=wanted).exists()


def install(principal, signatures: Iterable[str], *, reason: str, operation_id: UUID, now) -> int:
    rows = [
        ReconsolidationBlock(tenant_id=principal.tenant_id, principal_id=principal.principal_id, signature=signature,
                             reason=reason, operation_id=operation_id, created_at=now)
        for signature in sorted(set(signatures))
    ]
    ReconsolidationBlock.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)

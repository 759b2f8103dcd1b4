"""Owner blocks: hash-only signatures that stop an undone or rejected operation recurring.

Signatures are SHA-256 over opaque identities and normalised claim hashes, never prose,
and never over a subject label, policy or model identity — so neither a retry, a renamed
subject, a policy upgrade nor another model evades them. Each signature function says what
it catches: ``exact`` (any kind); ``member_pairs`` and ``claim_event_pairs`` (merges,
subsets, supersets and copies alike); ``summary_claims`` and ``summary_claim_pairs``
(summaries); ``hypothesis_claim`` (a connection, whatever its support).

``any_rejected`` is the other gate every merge, summary and hypothesis passes at commit:
the memory app's own rejections (``memory.models.Rejection``, the owner said "not true"),
matched by claim hash, so a live copy of a rejected claim is never merged, summarised
or connected.
"""
from __future__ import annotations

import hashlib
from itertools import combinations
from typing import Iterable, Mapping, Sequence
from uuid import UUID

from memory.claims import normalize_text
from memory.models import Rejection
from reconsolidation.models import ReconsolidationBlock


def _sha(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def exact(kind: str, memory_ids: Iterable[UUID]) -> str:
    """The operation kind and its sorted source IDs (any kind)."""
    return _sha(kind, *sorted(str(i) for i in memory_ids))


def member_pairs(memory_ids: Iterable[UUID]) -> set[str]:
    """Every pair of merge members: an undone set blocks any later set containing one of its
    pairs, subsets and supersets alike.
    """
    ids = sorted(str(i) for i in memory_ids)
    return {_sha("merge_member_pair", a, b) for a, b in combinations(ids, 2)}


def claim_event_pairs(claims: Mapping[UUID, str], events: Mapping[UUID, Sequence[UUID]]) -> set[str]:
    """``claims``: each member's claim hash; ``events``: its original leaf events.

    Every pair of (claim hash, original-event identity) of merge members: copying the same
    evidence under new belief IDs still matches.
    """
    leaves = {
        memory_id: f"{claims[memory_id]}:{','.join(sorted(str(e) for e in events.get(memory_id, ())))}"
        for memory_id in claims
    }
    return {_sha("merge_claim_event_pair", *sorted((leaves[a], leaves[b])))
            for a, b in combinations(sorted(leaves, key=str), 2)}


def summary_claims(attribution: str, texts: Iterable[str]) -> str:
    """The attribution and the case-folded normalised clause set of a summary, independent of
    order, subject and source IDs.
    """
    return _sha("summary_claims", attribution, *sorted({normalize_text(text) for text in texts}))


def summary_claim_pairs(clause_claims: Iterable[str]) -> set[str]:
    """``clause_claims``: the claim hash of each clause's source.

    Every pair of those hashes (a clause's source claim survives erasure): a rejected summary
    blocks any later summary holding two of its clauses — a subset, a superset, or the same
    claims copied under new belief IDs and events (a summary always has at least two clauses).
    """
    claims = sorted(set(clause_claims))
    return {_sha("summary_claim_pair", a, b) for a, b in combinations(claims, 2)}


def hypothesis_claim(attribution: str, text: str) -> str:
    """The attribution and the case-folded normalised wording of a connection, independent of
    its support: a rejected hypothesis does not return over a subset, a superset or copies of
    its support, nor from new evidence.
    """
    return _sha("hypothesis_claim", attribution, normalize_text(text))


def any_rejected(claim_hashes: Iterable[str]) -> bool:
    """Whether the owner rejected (said "not true" of) any of these claims."""
    wanted = sorted(set(claim_hashes))
    return bool(wanted) and Rejection.objects.filter(claim_sha256__in=wanted).exists()


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

"""Hypotheses (``infer_connection``): the local rules and the erasable projection.

A connection is the one place novelty is allowed, so it gets its own, stricter lane: the
provider proposes one tentative clause citing every selected original, the verifier must
call it supported (``operations`` refuses an unverified one), and ``check`` then applies
local rules against the locked sources — enough distinct owner evidence, no synthesis as
evidence for another, nothing named or counted that the sources lack, not a copy of a
source — and bounds its lifetime (``clocks``).

``record`` writes the ``DerivedMemory`` when the operation is recorded; it is invisible
until the operation is ``committed``, and no reconsolidation step resets a clock.

Tentativeness is carried by the record, not the wording: kind ``hypothesis``, authority
inferred, bounded confidence, and recall renders it under the fixed heading "Hypothesis
(tentative, inferred; not stated by the owner)" (``recall.render``). Requiring a hedge word
would refuse a plainly worded, well-supported connection and turn a wording habit into a
validity rule; hedge words are still ignored when checking for a copy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Optional, Sequence
from uuid import UUID

from django.db import connection

from memory import vocabulary
from memory.claims import claim_sha256
from memory.egress import pattern_reason
from memory.services.owner_state import allocate
from reconsolidation import bounds
from reconsolidation.domain import ClauseDraft
from reconsolidation.models import DerivedMemory, ReconsolidationOperation
from reconsolidation.rows import owner_fields
from reconsolidation.providers.rules.equivalence import normalize
from reconsolidation.sources import EVIDENCE, SourceView
from veetbot.identity import Principal

HEDGES = frozenset({"perhaps", "maybe", "possibly", "might", "may", "could", "likely", "probably", "seems", "seem",
                    "appears", "appear", "apparently", "suggests", "suggest", "tends", "tend", "possible"})
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"})
NUMBER_WORDS = frozenset({"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                          "eleven", "twelve", "twenty", "thirty", "hundred", "thousand", "million", "dozen",
                          "half", "once", "twice", "first", "second", "third"})
FILLER = frozenset({"it", "that", "is", "be", "to", "the", "a", "an", "and"})
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


@dataclass(frozen=True)
class Clocks:
    confidence: float
    evidence_at: datetime
    expires_at: datetime


def _stem(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def support_events(principal: Principal, ids: Sequence[UUID]) -> dict[UUID, list[tuple[UUID, datetime]]]:
    """Each original's admitted owner events with their instants (inside the caller's unit)."""
    with connection.cursor() as cursor:
        cursor.execute(EVIDENCE, {**owner_fields(principal), "ids": list(ids)})
        found: dict[UUID, list[tuple[UUID, datetime]]] = {}
        for memory_id, event_id, _session, at in cursor.fetchall():
            found.setdefault(memory_id, []).append((event_id, at))
    return found


def clocks(views: Sequence[SourceView], events: dict[UUID, list[tuple[UUID, datetime]]]) -> Clocks:
    latest = max(at for found in events.values() for _, at in found)
    ends = [latest + timedelta(days=bounds.RECON_HYPOTHESIS_MAX_DAYS)] + [v.expires_at for v in views if v.expires_at]
    return Clocks(confidence=min([bounds.RECON_HYPOTHESIS_MAX_CONFIDENCE, *(v.confidence for v in views)]),
                  evidence_at=latest, expires_at=min(ends))


def text_reason(text: str, views: Sequence[SourceView]) -> Optional[str]:
    """Why this clause is not an admissible tentative connection over ``views`` (or None)."""
    words = _WORD.findall(text)
    lower = [w.lower() for w in words]
    sources = " ".join(f"{v.subject} {v.statement}" for v in views)
    source_words = {w.lower() for w in _WORD.findall(sources)}
    if NEGATIONS.intersection(lower) or any(w.endswith("n't") for w in lower):
        return "hypothesis_negation"
    if any(n not in _NUMBER.findall(sources) for n in _NUMBER.findall(text)) or any(
            w in NUMBER_WORDS and w not in source_words for w in lower):
        return "hypothesis_new_quantity"
    if any(w[:1].isupper() and i > 0 and w != "I" and w.lower() not in source_words for i, w in enumerate(words)):
        return "hypothesis_new_name"
    if pattern_reason(text) is not None:
        return "hypothesis_sensitive_trait"
    content = {_stem(w) for w in lower if w not in HEDGES and w not in FILLER}
    if any(content <= {_stem(w) for w in _WORD.findall(v.statement)} for v in views):
        return "hypothesis_source_copy"
    return None


def check(principal: Principal, views: dict[UUID, SourceView], clauses: Sequence[ClauseDraft],
          now: Optional[datetime]) -> Optional[str]:
    """The reason code refusing a hypothesis clause against the locked sources, or None.

    * support: at least ``RECON_HYPOTHESIS_MIN_EVENTS`` distinct admitted owner events from
      at least two originals, every original with such evidence, none in the future; one
      identical attribution and scope; no inferred (generated) original as support — a
      synthesis is never fresh evidence for another;
    * the clause: no name and no quantity absent from the sources; no negation; no secret,
      credential, injection or sensitive-trait pattern; not a copy of one source statement,
      with or without a hedge added; and not the same claim repeated across events (identical
      statements connect nothing);
    * clocks: expiry = min(latest supporting event + ``RECON_HYPOTHESIS_MAX_DAYS`` days, every
      support's expiry); already expired at this instant → no hypothesis.
    """
    ordered = list(views.values())
    if len(clauses) != 1:
        return "hypothesis_clause_count"
    if set(clauses[0].source_ids) != set(views) or len(views) < 2:
        return "hypothesis_incomplete_support"
    if len({v.attribution for v in ordered}) != 1:
        return "hypothesis_mixed_attribution"
    if len({v.scope for v in ordered}) != 1:
        return "hypothesis_mixed_scope"
    if any(v.derivation == "inferred" for v in ordered):
        return "hypothesis_inferred_support"
    if len({normalize(v.statement) for v in ordered}) == 1:
        return "hypothesis_repeated_claim"
    events = support_events(principal, list(views))
    if set(events) != set(views):
        return "hypothesis_evidence_missing"
    if len({event for found in events.values() for event, _ in found}) < bounds.RECON_HYPOTHESIS_MIN_EVENTS:
        return "hypothesis_needs_two_events"
    if now is not None and any(at > now for found in events.values() for _, at in found):
        return "hypothesis_future_evidence"
    reason = text_reason(clauses[0].text, ordered)
    if reason:
        return reason
    if now is not None and clocks(ordered, events).expires_at <= now:
        return "hypothesis_expired"
    return None


def clause_claims(views: Sequence[SourceView], text: str) -> set[str]:
    """The claim hashes the clause would carry as an original of each source's kind,
    polarity and attribution: what a memory rejection of the same claim matches."""
    return {claim_sha256(statement=text, claim_kind=v.claim_kind, polarity=v.polarity, attribution=v.attribution)
            for v in views}


def record(principal: Principal, operation: ReconsolidationOperation, views: dict[UUID, SourceView],
           clause: ClauseDraft, now: datetime) -> DerivedMemory:
    """The hypothesis projection of a just-recorded operation (visible only once committed).

    Written now because the verified wording exists only at recording (kind hypothesis, id =
    operation id); approval re-runs ``check`` and moves ``valid_from`` to the commit instant.
    Authority is inferred, confidence = min(``RECON_HYPOTHESIS_MAX_CONFIDENCE``,
    least-confident support), ``evidence_at`` = the latest supporting event.
    """
    ordered = list(views.values())
    found = clocks(ordered, support_events(principal, list(views)))
    subjects = {v.subject for v in ordered}
    types = {v.belief_type for v in ordered}
    return DerivedMemory.objects.create(
        **owner_fields(principal), id=operation.id, operation_id=operation.id, kind="hypothesis",
        clauses=[{"text": normalize(clause.text), "source_ids": [str(i) for i in sorted(views, key=str)]}],
        subject=subjects.pop() if len(subjects) == 1 else "", belief_type=types.pop() if len(types) == 1 else
        ordered[0].belief_type, sensitivity=max((v.sensitivity for v in ordered),
                                                key=vocabulary.SENSITIVITY_RANK.__getitem__),
        scope=ordered[0].scope, portable=all(v.portable for v in ordered), confidence=found.confidence,
        evidence_at=found.evidence_at, valid_from=now, expires_at=found.expires_at, status="active", revision=1,
        store_position=allocate(principal, positions=1).store_position, created_at=now, updated_at=now,
    )


def stored_clause(operation: ReconsolidationOperation) -> tuple[ClauseDraft, ...]:
    """The verified wording kept with the projection (empty once erased or purged)."""
    row = DerivedMemory.objects.filter(operation_id=operation.id, kind="hypothesis").first()
    if row is None or not row.clauses:
        return ()
    return tuple(ClauseDraft(text=c["text"], source_ids=tuple(UUID(i) for i in c["source_ids"])) for c in row.clauses)

"""Recall through reconsolidation: merge suppression, summaries in the slots left, historical
group state, and the request's hard filters over derived items (``reconsolidate``).

The retriever hands over its ranked originals (every hard predicate already applied) and
gets back the items to offer the budget and an ``admit`` rule. Originals keep their order
and scores; an active merge set renders once, in its best-ranked visible member's slot,
suppressing the others *in this rendering only*; summaries use only the capacity left.

Invariants: reads honour invalidation before any sweep runs; only committed operations
whose support still holds have an effect (unattended ones only while their evidence
verifies); the ceiling, scope, owner controls and hard filters hold for derived items
too; a source erased *now* ends a set for every instant ("erasure hides every revision").
Switched off (``AGENT_MEMORY_RECONSOLIDATION_ENABLED``), recall is plain atomic recall.

At most four owner-scoped statements per recall, each bounded by the candidate list. This
module never writes, never widens a recall predicate, and never puts text in a trace.
"""
from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence
from uuid import UUID

from django.conf import settings
from django.db import connection

from memory import vocabulary
from recall.domain import RecallItem, RecallRequest, SummaryClause
from reconsolidation.evidence import admission
from reconsolidation.models import ReconsolidationBlock
from reconsolidation.writers import blocks

POLICY = "retrieval-reconsolidation@3"  # @3: historical group state; filters hold for derived items
# The bounds of one read (spec: "at most 1000 original candidate IDs per read", summary
# lookup "capped at 1,000 operations"); a deployment may tighten them in settings. Ranked
# originals past the first bound are not offered at all (an item budget of at most 100
# reaches them only when hundreds of better items are skipped for tokens), so a member
# past it can never render beside its set's representative.
RECON_RECALL_MAX_CANDIDATE_IDS: int = getattr(settings, "RECON_RECALL_MAX_CANDIDATE_IDS", 1000)
RECON_RECALL_MAX_SUMMARIES: int = getattr(settings, "RECON_RECALL_MAX_SUMMARIES", 1000)

_SPACE = re.compile(r"\s+")

# A dependency (its original ``m`` and leaf event ``e``) that no longer certifies its
# operation: gone, erased, at another content revision, or its evidence erased or excluded.
# Merges and summaries both stop at this.
_BROKEN = """(
    m.id IS NULL OR m.erased_at IS NOT NULL OR m.content_revision <> d.content_revision
    OR e.id IS NULL OR e.erased_at IS NOT NULL OR e.excluded
)"""
# For a historical read the recorded revision was current at the instant whenever the
# operation was live then (a later revision invalidated it, ``_LIVE_AT``): only what is
# gone *now* breaks it.
_BROKEN_NOW = """(
    m.id IS NULL OR m.erased_at IS NOT NULL OR e.id IS NULL OR e.erased_at IS NOT NULL OR e.excluded
)"""
# ... and, for a summary, a dependency this request may not see (a summary shows text
# derived from every input, so each must pass the request's ceiling, scope and validity).
# The request's hard filters count too: an excluded dependency, or one outside a type filter,
# hides the summary (its clauses would carry that original's text and citation).
_HIDDEN = """(
    NOT (m.status = ANY(%(current_statuses)s::text[]))
    OR m.valid_from > %(at)s OR (m.expires_at IS NOT NULL AND m.expires_at <= %(at)s)
    OR NOT (m.sensitivity = ANY(%(sensitivities)s::text[]))
    OR NOT (m.scope = %(scope)s OR (%(scope)s <> 'user' AND m.scope = 'user' AND m.portable))
    OR m.id = ANY(%(exclude_ids)s::uuid[])
    OR (cardinality(%(belief_types)s::text[]) > 0 AND NOT (m.belief_type = ANY(%(belief_types)s::text[])))
)"""
# An operation committed without owner review (unattended mode leaves the audit event
# operation_committed; an approval leaves operation_approved) counts only while the
# unattended evidence verifies now (reconsolidation.admission.unattended_admitted).
_REVIEWED_OR_ADMITTED = """(%(unattended_admitted)s OR NOT EXISTS (
    SELECT 1 FROM reconsolidation_reconsolidationaudit u
    WHERE u.operation_id = o.id AND u.event = 'operation_committed'))"""
# Group state: today's, or that of the historical instant %(as_of)s.
_LIVE_NOW = f"(o.state = 'committed' AND {_REVIEWED_OR_ADMITTED})"
_LIVE_AT = f"""(o.committed_at <= %(as_of)s AND (o.undone_at IS NULL OR o.undone_at > %(as_of)s)
    AND (o.invalidated_at IS NULL OR o.invalidated_at > %(as_of)s) AND {_REVIEWED_OR_ADMITTED})"""
_MEMBER_NOW = "{x}.active"
_MEMBER_AT = "({x}.created_at <= %(as_of)s AND ({x}.deactivated_at IS NULL OR {x}.deactivated_at > %(as_of)s))"


def _support(ops: str, *, historical: bool = False) -> str:
    """CTEs checking the complete support of the operations in CTE ``ops`` (column ``id``):
    ``checked`` holds, per operation with any dependency, its supporting IDs, whether all
    are intact, whether all are also visible to this request, and their authorities,
    attributions and polarities.

    Owner scoping: the entry lookups (memberships and dependencies of the candidate IDs)
    name the owner and use owner-prefixed indexes; the rows reached from them by ID are
    scoped by forced RLS. Originals and events are read in one ``= ANY`` scan each, not
    probed per dependency: without statistics (a fresh bank) the planner serves an ID probe
    from an owner-prefixed index and would read the owner's whole table per probe.
    """
    broken = _BROKEN_NOW if historical else _BROKEN
    return f"""
    deps AS MATERIALIZED (
        SELECT d.operation_id, d.memory_id, d.content_revision, d.event_id
        FROM reconsolidation_reconsolidationdependency d WHERE d.operation_id IN (SELECT id FROM {ops})
    ), mem AS MATERIALIZED (
        SELECT id, erased_at, content_revision, status, valid_from, expires_at, sensitivity, scope, portable,
               authority, attribution, polarity, belief_type
        FROM memory_memory WHERE id = ANY(ARRAY(SELECT memory_id FROM deps))
    ), ev AS MATERIALIZED (
        SELECT id, erased_at, excluded FROM memory_event WHERE id = ANY(ARRAY(SELECT event_id FROM deps))
    ), checked AS MATERIALIZED (
        SELECT d.operation_id, array_agg(DISTINCT d.memory_id) AS ids,
               bool_and(COALESCE(NOT {broken}, false)) AS intact,
               bool_and(COALESCE(NOT ({broken} OR {_HIDDEN}), false)) AS visible,
               array_agg(DISTINCT m.authority) AS authorities, array_agg(DISTINCT m.attribution) AS attributions,
               array_agg(DISTINCT m.polarity) AS polarities
        FROM deps d LEFT JOIN mem m ON m.id = d.memory_id LEFT JOIN ev e ON e.id = d.event_id
        GROUP BY d.operation_id
    )"""


def _merges(historical: bool) -> str:
    """Merge sets live (now, or at the instant) holding any candidate, with intact and
    complete support (every recorded input has a dependency edge); all of their members
    active at that time."""
    live = _LIVE_AT if historical else _LIVE_NOW
    member = _MEMBER_AT if historical else _MEMBER_NOW
    return f"""
    WITH live AS MATERIALIZED (
        SELECT o.id, o.revision, o.input_ids FROM reconsolidation_reconsolidationoperation o
        WHERE {live} AND o.kind = 'merge_equivalent' AND o.id IN (
            SELECT x.operation_id FROM reconsolidation_reconsolidationmember x
            WHERE x.tenant_id = %(tenant_id)s AND x.principal_id = %(principal_id)s AND {member.format(x="x")}
              AND x.member_id = ANY(%(ids)s::uuid[])
        )
    ), {_support("live", historical=historical)}
    SELECT live.id, live.revision, s.canonical_id, s.member_id
    FROM live
    JOIN checked c ON c.operation_id = live.id AND c.intact AND c.ids @> live.input_ids
    JOIN reconsolidation_reconsolidationmember s ON s.operation_id = live.id AND {member.format(x="s")}
    ORDER BY live.id, s.member_id
"""


MERGES, MERGES_AT = _merges(False), _merges(True)


def _summaries(historical: bool) -> str:
    """Visible, unretired summaries and hypotheses anchored on a candidate (any dependency,
    rendered or omitted), live now or at the instant, every dependency intact and visible,
    best anchor rank first, at most %(limit)s."""
    live = _LIVE_AT if historical else _LIVE_NOW
    made = "s.created_at <= %(as_of)s" if historical else "true"
    return f"""
    WITH anchored AS MATERIALIZED (
        SELECT a.operation_id, min(array_position(%(ids)s::uuid[], a.memory_id)) AS anchor_rank
        FROM reconsolidation_reconsolidationdependency a
        WHERE a.tenant_id = %(tenant_id)s AND a.principal_id = %(principal_id)s
          AND a.memory_id = ANY(%(ids)s::uuid[])
        GROUP BY a.operation_id
    ), live AS MATERIALIZED (
        SELECT o.id, o.revision, o.input_ids, anchored.anchor_rank
        FROM anchored JOIN reconsolidation_reconsolidationoperation o ON o.id = anchored.operation_id
        WHERE {live} AND o.kind IN ('summarize_related', 'infer_connection')
    ), {_support("live", historical=historical)}
    SELECT s.id, s.operation_id, live.revision, s.clauses, s.subject, s.belief_type, s.sensitivity,
           s.confidence, s.evidence_at, s.valid_from, s.expires_at, s.revision, live.anchor_rank,
           c.ids, c.authorities, c.attributions, c.polarities, live.input_ids, s.kind
    FROM live
    JOIN checked c ON c.operation_id = live.id AND c.visible AND c.ids @> live.input_ids
    JOIN reconsolidation_derivedmemory s ON s.operation_id = live.id
    WHERE s.kind IN ('summary', 'hypothesis') AND s.status = 'active' AND s.erased_at IS NULL AND s.retired_at IS NULL
      AND {made}
      AND jsonb_typeof(s.clauses) = 'array' AND jsonb_array_length(s.clauses) > 0
      AND s.sensitivity = ANY(%(sensitivities)s::text[])
      AND (s.scope = %(scope)s OR (%(scope)s <> 'user' AND s.scope = 'user' AND s.portable
           AND s.restricted_at IS NULL))  -- the owner's "not here" overlay (reconsolidation.services.derived)
      AND s.valid_from <= %(at)s AND (s.expires_at IS NULL OR s.expires_at > %(at)s)
      AND (cardinality(%(belief_types)s::text[]) = 0 OR s.belief_type = ANY(%(belief_types)s::text[]))
    ORDER BY live.anchor_rank, s.store_position DESC NULLS LAST, s.id
    LIMIT %(limit)s
"""


SUMMARIES, SUMMARIES_AT = _summaries(False), _summaries(True)


def applies(request: RecallRequest) -> bool:
    """Whether this recall reads through reconsolidation (checked at call time, so flipping
    the switch takes effect at once)."""
    return bool(settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED)


def atom_key(text: str) -> str:
    """The equivalence normalisation (NFC + whitespace collapse): what "repeats" means."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


@dataclass(frozen=True)
class MergeSet:
    operation_id: UUID
    revision: int
    canonical_id: UUID
    member_ids: frozenset[UUID]


@dataclass
class Reconsolidated:
    """What the retriever renders instead of its plain ranked list."""

    items: Iterator[RecallItem]  # originals (one per merge set), then summaries
    suppressed_ids: list[UUID] = field(default_factory=list)
    summary_ids: list[UUID] = field(default_factory=list)
    # rendered representative -> every member of its set (the atoms it stands for)
    represented: dict[UUID, frozenset[UUID]] = field(default_factory=dict)

    def admit(self, item: RecallItem, kept: Sequence[RecallItem]) -> bool:
        """Originals always; a summary only when none of its clauses repeats a kept atom."""
        if item.record_kind != "summary":
            return True
        ids: set[UUID] = set()
        texts: set[str] = set()
        for selected in kept:
            if selected.record_kind == "summary":
                for clause in selected.clauses:
                    ids.update(clause.source_ids)
                    texts.add(atom_key(clause.text))
            else:
                ids.update(self.represented.get(selected.id, (selected.id,)))
                texts.add(atom_key(selected.statement))
        return not any(
            ids.intersection(clause.source_ids) or atom_key(clause.text) in texts for clause in item.clauses
        )


def _run(statement: str, params: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


def merge_sets(params: dict, ids: Sequence[UUID]) -> dict[UUID, MergeSet]:
    """member ID -> its active, fully supported merge set, for the members among ``ids``."""
    found: dict[UUID, tuple[int, UUID, set[UUID]]] = {}
    statement = MERGES if params.get("as_of") is None else MERGES_AT
    for operation_id, revision, canonical_id, member_id in _run(statement, {**params, "ids": list(ids)}):
        found.setdefault(operation_id, (revision, canonical_id, set()))[2].add(member_id)
    by_member: dict[UUID, MergeSet] = {}
    for operation_id, (revision, canonical_id, members) in found.items():
        merge = MergeSet(operation_id=operation_id, revision=revision, canonical_id=canonical_id,
                         member_ids=frozenset(members | {canonical_id}))
        for member_id in merge.member_ids:
            by_member[member_id] = merge
    return by_member


def _weakest(values: Sequence[str], order: Sequence[str]) -> str:
    return max(values, key=lambda v: order.index(v) if v in order else len(order))


def _uniform(values: Sequence[str], mixed: str) -> str:
    return values[0] if len(values) == 1 else mixed


def _signatures(input_ids: Sequence[UUID], attributions: Sequence[str], clauses: Sequence[SummaryClause]) -> set[str]:
    """The owner-block signatures a rejection of this summary (or of an equivalent one)
    installs: its exact inputs, and its attribution + normalised clause set."""
    texts = [clause.text for clause in clauses]
    return {blocks.exact("summarize_related", input_ids), *(blocks.summary_claims(a, texts) for a in attributions)}


def _blocked(signatures: set[str]) -> set[str]:
    return set(ReconsolidationBlock.objects.filter(signature__in=sorted(signatures)).values_list("signature", flat=True))


def summaries(params: dict, ids: Sequence[UUID], scores: dict[UUID, float]) -> list[RecallItem]:
    """Visible, fully valid, unblocked summaries anchored on ``ids``, best-anchored first."""
    statement = SUMMARIES if params.get("as_of") is None else SUMMARIES_AT
    rows = _run(statement, {**params, "ids": list(ids), "limit": RECON_RECALL_MAX_SUMMARIES})
    items, signatures = [], {}
    for (derived_id, operation_id, operation_revision, clauses, subject, belief_type, sensitivity, confidence,
         evidence_at, valid_from, expires_at, revision, anchor_rank, support, authorities, attributions,
         polarities, input_ids, kind) in rows:
        try:
            if isinstance(clauses, str):  # Django's psycopg setup hands raw jsonb over as text
                clauses = json.loads(clauses)
            parsed = tuple(SummaryClause(text=c["text"], source_ids=tuple(UUID(str(i)) for i in c["source_ids"]))
                           for c in clauses)
        except (KeyError, TypeError, ValueError):
            continue  # a malformed projection is withheld, never half-rendered
        if not all(c.source_ids and set(c.source_ids) <= set(support) for c in parsed):
            continue  # a clause citing anything outside the complete support is withheld
        signatures[derived_id] = (_signatures(input_ids, attributions, parsed) if kind == "summary"
                                  else {blocks.exact("infer_connection", input_ids)})
        if kind == "hypothesis":  # a tentative connection: inferred, never the sources' authority
            items.append(RecallItem(
                id=derived_id, score=scores[ids[anchor_rank - 1]], subject=subject, statement=parsed[0].text,
                belief_type=belief_type, polarity=_uniform(sorted(polarities), "mixed"), derivation="inferred",
                authority="INFERRED", attribution=_uniform(sorted(attributions), "mixed"), confidence=confidence,
                sensitivity=sensitivity, evidence_at=evidence_at, valid_from=valid_from, expires_at=expires_at,
                content_revision=revision, sources=(), record_kind="hypothesis", operation_id=operation_id,
                operation_revision=operation_revision, clauses=parsed, support_ids=tuple(sorted(support, key=str)),
            ))
            continue
        items.append(RecallItem(
            id=derived_id, score=scores[ids[anchor_rank - 1]], subject=subject,
            statement="; ".join(c.text for c in parsed), belief_type=belief_type,
            polarity=_uniform(sorted(polarities), "mixed"), derivation="summary",
            authority=_weakest(authorities, vocabulary.AUTHORITIES),
            attribution=_uniform(sorted(attributions), "mixed"), confidence=confidence, sensitivity=sensitivity,
            evidence_at=evidence_at, valid_from=valid_from, expires_at=expires_at, content_revision=revision,
            sources=(), record_kind="summary", operation_id=operation_id, operation_revision=operation_revision,
            clauses=parsed, support_ids=tuple(sorted(support, key=str)),
        ))
    # Owner blocks apply to readers too: one lookup for every offered summary's signatures.
    blocked = _blocked(set().union(*signatures.values())) if signatures else set()
    return [item for item in items if not signatures[item.id] & blocked]


def reconsolidate(
    *, request: RecallRequest, params: dict, ranked: Sequence, rows: dict[UUID, tuple],
    rejoin: Callable[[Sequence[UUID]], dict[UUID, tuple]], build: Callable[[tuple, float], RecallItem],
) -> Optional[Reconsolidated]:
    """The reconsolidated offer for one recall, or None when plain atomic recall applies.

    ``ranked``: the fused candidates (``id``, ``score``) permitted by ``rows`` (the
    retriever's rejoin), best first; ``params``: the recall's ``base_params``;
    ``rejoin(ids)``: the same permitted relation for more IDs; ``build(row, score)``:
    the retriever's item builder. Call inside the recall's owner context.

    * An **active merge set** (operation ``committed``, membership ``active``, complete
      support still valid) renders once, in the slot of its best-ranked visible member: the
      canonical when this request's predicates permit it (fetched even when it was not a
      candidate), otherwise that best-ranked visible member itself, keeping the slot's score.
      The other members are suppressed in this rendering only; they stay recallable by every
      other read.
    * A merge whose support no longer holds (a member erased, corrected, retracted — any
      content revision other than the recorded one — or its leaf event erased or excluded)
      suppresses nothing: every member is back exactly as after an undo.
    * **Summaries** (``DerivedMemory`` kind summary, status active, operation committed)
      follow every original. A summary is offered only when it is itself visible (ceiling,
      scope, validity, type filter) and every dependency — rendered clause or omitted input —
      is un-erased at its recorded content revision, active, valid now, within the ceiling and
      scope, with its leaf event intact. ``admit`` omits a summary that repeats an atom
      already selected (an original, a member suppressed in its favour, or a clause of a
      summary already selected). A retired ("not true") summary, a restricted ("not here") one outside
      its own scope, and any summary matching an owner block are withheld.
    * Proposed, rejected, stale, invalidated and undone operations have no effect, and neither
      has one committed without owner review (unattended mode) while the unattended evidence
      does not verify now: changing or losing the evidence file hides what it admitted.
    * Switched off (``AGENT_MEMORY_RECONSOLIDATION_ENABLED`` false) this returns None and the
      retriever runs plain atomic recall, byte for byte; the same switch hides derived
      recall while history, undo and erasure keep working elsewhere.
    * **Historical** (``as_of``) recall keeps the group state of that instant: a merge
      suppresses when its operation was committed by then and neither undone nor invalidated
      by then, through the memberships active at the instant; a summary or hypothesis renders
      when its operation was committed by then and its projection still holds its clauses (an
      invalidated projection is purged, so it never renders again, for any instant). A member
      or dependency erased *now*, or whose event is erased or excluded now, ends the set for
      every instant, and the current ceiling, scope and owner controls apply to the past too.
    * Hard filters: a summary or hypothesis with any dependency in ``exclude_ids``, or (with a
      ``belief_types`` filter) any dependency of another type, is withheld.

    Cost: active memberships of the first ``RECON_RECALL_MAX_CANDIDATE_IDS`` ranked originals
    (partial index ``reconmember_one_active_set``), the canonicals that were not candidates
    (through the retriever's own permitted relation), at most ``RECON_RECALL_MAX_SUMMARIES``
    summaries anchored on those originals (index ``recondep_by_source``), and the owner blocks
    matching those summaries' signatures; no per-item queries. The trace gets IDs only
    (``RecallStages.suppressed_ids`` / ``summary_ids``).
    """
    if not applies(request):
        return None
    ranked = list(ranked[: RECON_RECALL_MAX_CANDIDATE_IDS])
    ids = [r.id for r in ranked]
    params = {**params, "unattended_admitted": admission.unattended_admitted()}
    scores = {r.id: r.score for r in ranked}
    merges = merge_sets(params, ids) if ids else {}
    missing = sorted({m.canonical_id for m in merges.values()} - rows.keys(), key=str)
    visible = {**rows, **rejoin(missing)} if missing else rows
    offered_summaries = summaries(params, ids, scores) if ids else []
    result = Reconsolidated(items=iter(()), summary_ids=[s.id for s in offered_summaries])

    representative: dict[UUID, UUID] = {}  # merge operation -> the member rendered for it
    slots: list[tuple[tuple, float]] = []
    for r in ranked:
        merge = merges.get(r.id)
        if merge is None:
            slots.append((rows[r.id], r.score))
            continue
        if merge.operation_id not in representative:
            chosen = merge.canonical_id if merge.canonical_id in visible else r.id
            representative[merge.operation_id] = chosen
            result.represented[chosen] = merge.member_ids
            slots.append((visible[chosen], r.score))
        if r.id != representative[merge.operation_id]:
            result.suppressed_ids.append(r.id)

    def offered() -> Iterator[RecallItem]:
        for row, score in slots:
            item = build(row, score)
            merge = merges.get(item.id)
            if merge is not None:
                item = item.model_copy(update={"operation_id": merge.operation_id,
                                               "operation_revision": merge.revision})
            yield item
        yield from offered_summaries

    result.items = offered()
    return result

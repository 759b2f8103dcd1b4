"""Reads of the review dashboard, returning plain frozen values for the templates.

Every read is the owner's own and fresh, through reconsolidation's and memory's selectors:
a detail is the operation's allowlisted journal view (``reconsolidation.selectors.operation_views``)
with its originals re-read, and a source page reads the original again. Nothing is cached
between requests, nothing is inferred: a summary is labelled as derived, never as an
original, and an operation whose required support is unavailable shows opaque metadata
only — no statements, subjects, links or source counts.

The dashboard is the owner's own view, so it reads at the top sensitivity ceiling.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional
from uuid import UUID

from memory import selectors as memory_selectors
from memory import vocabulary
from memory.errors import NotFound as MemoryNotFound
from reconsolidation.selectors import operation_views
from reconsolidation.selectors.derived import DerivedView, operation_derived
from reconsolidation.selectors.operation_views import OwnerOperation
from review_ui import words
from veetbot.identity import Principal
from veetbot.rls import owner_context

CEILING = vocabulary.SENSITIVITIES[-1]
KIND_LABELS = words.KIND
STATE_LABELS = words.STATE
# Fixed text (spec: "conflicts ... a fixed uncertainty notice"): the flag chooses no winner.
CONFLICT_NOTICE = ("These originals appear to disagree. Veetbot has not decided which one is true: "
                   "both are kept unchanged and both can still be recalled.")
UNDO_EXPLANATION = ("Undo reverses only duplicate suppression: every original below stays exactly as it is "
                    "and can be recalled on its own again. Nothing is deleted, restored or rewritten, and "
                    "this merge will not be proposed again.")


@dataclass(frozen=True)
class SourceLine:
    memory_id: UUID
    statement: str
    subject: str
    omitted: bool = False
    canonical: bool = False


@dataclass(frozen=True)
class Claim:
    label: str
    text: str
    sources: tuple[SourceLine, ...]


@dataclass(frozen=True)
class Detail:
    operation: OwnerOperation
    kind_label: str
    state_label: str
    withheld: bool  # a required original is unavailable: opaque metadata only
    originals: tuple[SourceLine, ...] = ()
    claims: tuple[Claim, ...] = ()
    omitted: tuple[SourceLine, ...] = ()
    derived_id: Optional[UUID] = None
    derived_kind: str = ""
    derived_status: str = ""
    derived_revision: int = 0
    derived_flags: tuple[str, ...] = ()  # owner controls in force: "dismissed", "not here"
    notice: str = ""
    actions: frozenset[str] = field(default_factory=frozenset)

    @property
    def known_kind(self) -> bool:
        return self.operation.kind in KIND_LABELS


def operation_detail(principal: Principal, operation_id: UUID) -> Detail:
    """The operation as it is now, with its originals re-read (``NotFound`` when it is
    not the owner's)."""
    op = operation_views.operation_detail(principal=principal, operation_id=operation_id, ceiling=CEILING)
    base = dict(operation=op, kind_label=KIND_LABELS.get(op.kind, op.kind),
                state_label=STATE_LABELS.get(op.state, op.state))
    with owner_context(principal):
        originals = memory_selectors.memory_map(memory_ids=[link.memory_id for link in op.sources], ceiling=CEILING)
    if op.content is None or any(link.memory_id not in originals for link in op.sources):
        return Detail(**base, withheld=True, actions=_actions(op, withheld=True))
    canonical = op.content.canonical_id
    found = {i: SourceLine(memory_id=v.id, statement=v.statement, subject=v.subject,
                           canonical=v.id == canonical) for i, v in originals.items()}
    originals_in_order = tuple(found[link.memory_id] for link in op.sources)
    derived = operation_derived(principal=principal, operation_id=op.id, ceiling=CEILING)
    claims, omitted, notice = _claims(op, found)
    extra = {}
    if derived is not None:
        flags = tuple(label for label, on in (("dismissed", derived.dismissed_at is not None),
                                              ("not here", derived.restricted)) if on)
        extra = dict(derived_id=derived.id, derived_kind=derived.record_kind, derived_status=derived.status,
                     derived_revision=derived.revision, derived_flags=flags)
    return Detail(**base, withheld=False, originals=originals_in_order, claims=claims, omitted=omitted,
                  notice=notice, actions=_actions(op, withheld=False, derived=derived), **extra)


def _claims(op: OwnerOperation, found: dict[UUID, SourceLine]):
    if op.kind in ("summarize_related", "infer_connection"):
        label = "Summary clause" if op.kind == "summarize_related" else "Hypothesis (inferred, tentative)"
        clauses = op.content.clauses  # none once a projection ended: its history is the operation
        claims = tuple(Claim(label=label, text=c.text, sources=tuple(found[i] for i in c.source_ids if i in found))
                       for c in clauses)
        cited = {i for c in clauses for i in c.source_ids}
        omitted = tuple(replace(found[link.memory_id], omitted=True) for link in op.sources
                        if link.memory_id not in cited) if clauses else ()
        return claims, omitted, ""
    if op.kind == "merge_equivalent":
        sources = tuple(found[link.memory_id] for link in op.sources)
        head = found.get(op.content.canonical_id) or sources[0]
        return (Claim(label="Equivalent originals (one renders in recall)", text=head.statement, sources=sources),), (), ""
    if op.kind == "flag_conflict":
        sides = tuple(Claim(label=f"Side {n}", text=found[link.memory_id].statement, sources=(found[link.memory_id],))
                      for n, link in enumerate(op.sources, start=1))
        return sides, (), CONFLICT_NOTICE
    return (), (), ""  # an unknown kind stays inspectable, without claims or actions


def _actions(view: OwnerOperation, *, withheld: bool, derived: Optional[DerivedView] = None) -> frozenset[str]:
    if view.kind not in KIND_LABELS:
        return frozenset()
    actions = set()
    if view.state == "proposed":
        actions |= {"approve", "reject"}
    if view.kind == "merge_equivalent" and view.state == "committed" and not withheld:
        actions.add("undo")
    if derived is not None and derived.status == "active" and view.state == "committed":
        actions |= {"dismiss", "not_here", "not_true", "delete"}
    return frozenset(actions)


def source(principal: Principal, memory_id: UUID, *, operation_id: Optional[UUID] = None) -> tuple[SourceLine, dict]:
    """The original read again now, and (when reached from an operation) whether that
    operation cites it or lists it as an omitted input."""
    with owner_context(principal):
        view = memory_selectors.memory_get(memory_id=memory_id, ceiling=CEILING)
    facts = {"belief_type": view.belief_type, "derivation": view.derivation, "authority": view.authority,
             "evidence_at": view.evidence_at, "status": view.status, "content_revision": view.content_revision}
    line = SourceLine(memory_id=view.id, statement=view.statement, subject=view.subject)
    if operation_id is not None:
        try:
            detail = operation_detail(principal, operation_id)
        except MemoryNotFound:  # a foreign or vanished operation adds nothing, and says nothing
            detail = None
        if detail is not None and not detail.withheld:
            facts["omitted"] = any(o.memory_id == memory_id for o in detail.omitted)
            facts["operation_id"] = operation_id
    return line, facts

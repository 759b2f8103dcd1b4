"""Reads of the review dashboard, returning plain frozen values for the templates.

Every read is the owner's own (``owner_context`` of the signed-in principal) and fresh:
the journal (``review_ui.journal``) pages through ``reconsolidation.owner.reads``, a detail re-fetches
its operation with ``reads.get_operation`` and re-reads each original through
``memory.selectors.memory_get``, and a source page reads the original again. Nothing is
cached between requests, nothing is inferred: a summary is labelled as derived, never
as an original, and an operation whose required support is unavailable shows opaque
metadata only — no statements, subjects, links or source counts.

The dashboard is the owner's own view, so it reads at the top sensitivity ceiling.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional
from uuid import UUID

from memory import selectors as memory_selectors
from memory import vocabulary
from memory.errors import NotFound as MemoryNotFound
from reconsolidation.domain import OperationView
from reconsolidation.models import DerivedMemory, ReconsolidationMember, ReconsolidationOperation
from reconsolidation.owner import derived as derived_service
from reconsolidation.owner import reads
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
    operation: OperationView
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


def _original(memory_id: UUID) -> Optional[SourceLine]:
    try:
        view = memory_selectors.memory_get(memory_id=memory_id, ceiling=CEILING)
    except MemoryNotFound:
        return None
    return SourceLine(memory_id=view.id, statement=view.statement, subject=view.subject)


def _line(line: SourceLine, **changes) -> SourceLine:
    return replace(line, **changes)


def operation_detail(principal: Principal, operation_id: UUID) -> Detail:
    """The operation as it is now, with its originals re-read (``NotFound`` when it is
    not the owner's)."""
    view = reads.get_operation(principal, operation_id, ceiling=CEILING)
    base = dict(operation=view, kind_label=KIND_LABELS.get(view.kind, view.kind),
                state_label=STATE_LABELS.get(view.state, view.state))
    with owner_context(principal):
        row = ReconsolidationOperation.objects.get(id=operation_id)
        found = {ref.memory_id: _original(ref.memory_id) for ref in view.inputs}
        if any(line is None for line in found.values()):
            return Detail(**base, withheld=True, actions=_actions(view, withheld=True))
        derived_id = DerivedMemory.objects.filter(operation_id=view.id).values_list("id", flat=True).first()
        members = list(ReconsolidationMember.objects.filter(operation_id=view.id).values_list("canonical_id", "member_id"))
    derived = _derived(principal, derived_id)
    canonical = members[0][0] if members else None
    originals = tuple(_line(found[ref.memory_id], canonical=ref.memory_id == canonical) for ref in view.inputs)
    claims, omitted, notice = _claims(view, row, derived, found, canonical)
    extra = {}
    if derived is not None:
        flags = tuple(label for label, on in (("dismissed", derived.dismissed_at is not None),
                                              ("not here", derived.restricted)) if on)
        extra = dict(derived_id=derived.id, derived_kind=derived.record_kind, derived_status=derived.status,
                     derived_revision=derived.revision, derived_flags=flags)
    return Detail(**base, withheld=False, originals=originals, claims=claims, omitted=omitted, notice=notice,
                  actions=_actions(view, withheld=False, derived=derived), **extra)


def _derived(principal: Principal, derived_id: Optional[UUID]):
    """The governed derived detail (``reconsolidation.owner.derived``): content only while the
    projection is active and all of its support is available; None once deleted."""
    if derived_id is None:
        return None
    try:
        return derived_service.derived_get(principal, derived_id, ceiling=CEILING)
    except MemoryNotFound:
        return None


def _claims(view: OperationView, row: ReconsolidationOperation, derived, found: dict, canonical):
    if view.kind in ("summarize_related", "infer_connection"):
        label = "Summary clause" if view.kind == "summarize_related" else "Hypothesis (inferred, tentative)"
        if derived is not None and derived.content is not None:
            clauses = [(c.text, list(c.source_ids)) for c in derived.content.clauses]
        elif derived is None and view.state == "proposed":
            clauses = [(found[UUID(ids[0])].statement, [UUID(i) for i in ids]) for ids in row.clause_sources]
        else:
            clauses = []  # an ended projection keeps no text: its history is the operation
        claims = tuple(Claim(label=label, text=text, sources=tuple(found[i] for i in ids if i in found))
                       for text, ids in clauses)
        cited = {i for _text, ids in clauses for i in ids}
        omitted = tuple(_line(found[ref.memory_id], omitted=True) for ref in view.inputs
                        if ref.memory_id not in cited) if clauses else ()
        return claims, omitted, ""
    if view.kind == "merge_equivalent":
        head = found.get(canonical) or found[view.inputs[0].memory_id]
        sources = tuple(_line(found[ref.memory_id], canonical=ref.memory_id == canonical) for ref in view.inputs)
        return (Claim(label="Equivalent originals (one renders in recall)", text=head.statement, sources=sources),), (), ""
    if view.kind == "flag_conflict":
        sides = tuple(Claim(label=f"Side {n}", text=found[ref.memory_id].statement, sources=(found[ref.memory_id],))
                      for n, ref in enumerate(view.inputs, start=1))
        return sides, (), CONFLICT_NOTICE
    return (), (), ""  # an unknown kind stays inspectable, without claims or actions


def _actions(view: OperationView, *, withheld: bool, derived=None) -> frozenset[str]:
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

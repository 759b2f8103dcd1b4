"""Extractive summaries: whole source statements under a fixed heading, nothing invented.

A summary supplements its atoms; it never replaces them. It needs at least two related
(same subject or a shared entity) but not equivalent originals — equivalent ones are
merges — with one scope and one attribution: conflicting scopes or attributions abstain
rather than pick the broader one. Each clause is exactly one source statement; a clause
that does not fit is omitted whole, never cut, and stays a dependency (``plan``).
Metadata is inherited conservatively, never from the commit (``projection``).

A group must be *coherent* (``coherent``, ``components``): a chain of links that mixes two
people is split by anchor, never summarised as one. A newer statement about the same
holder may supersede an older one (``supersessions``); a component holding an unresolved
contradiction yields no summary, and the caller flags it (``contradictions``). When a rule
is unsure it does not supersede, and it never guesses which side of a contradiction is
true. These rules read only general English structure, never names or places of a bank.

Pure functions over ``SourceView`` values; ``check_clauses`` is the commit-time
validation of a proposal's clauses against the locked sources, with the rules of ``plan``.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Optional, Sequence
from uuid import UUID

from memory import vocabulary
from reconsolidation import bounds
from reconsolidation.domain import ClauseDraft
from reconsolidation.providers.rules.equivalence import creation_key, normalize
from reconsolidation.sources import SourceView

HEADING = "Summary of related memories:"
BULLET = "- "
MIXED_BELIEF_TYPES = "mixed"


def render(texts: Sequence[str]) -> str:
    return "\n".join([HEADING, *(BULLET + text for text in texts)])


@dataclass(frozen=True)
class SummaryPlan:
    clauses: tuple[ClauseDraft, ...]
    inputs: tuple[UUID, ...]  # every source considered: clause support and omitted ones
    omitted: tuple[UUID, ...]  # inputs that support no clause

    @property
    def text(self) -> str:
        return render([clause.text for clause in self.clauses])


@dataclass(frozen=True)
class Projection:
    """The inherited metadata of a summary over ``views`` (all of its inputs)."""

    subject: str
    belief_type: str
    sensitivity: str
    scope: str
    portable: bool
    authority: str
    confidence: float
    evidence_at: datetime
    valid_from: datetime
    expires_at: Optional[datetime]


def related(a: SourceView, b: SourceView) -> bool:
    return a.subject == b.subject or bool(set(a.entity_ids) & set(b.entity_ids))


def anchors(view: SourceView) -> tuple[str, ...]:
    """What a view is about: each entity (a person or other entity ID), then its subject."""
    return (*(f"entity:{entity}" for entity in view.entity_ids), f"subject:{view.subject}")


def coherent(views: Sequence[SourceView]) -> bool:
    """One subject, person or entity common to every view."""
    return bool(views) and bool(set.intersection(*(set(anchors(view)) for view in views)))


def _linked(views: Sequence[SourceView]) -> list[list[SourceView]]:
    """Connected components of ``related`` within one scope and attribution, each in creation order."""
    ordered = sorted(views, key=creation_key)
    parent = list(range(len(ordered)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(ordered):
        for j in range(i + 1, len(ordered)):
            b = ordered[j]
            if a.scope == b.scope and a.attribution == b.attribution and related(a, b):
                parent[root(j)] = root(i)
    found: dict[int, list[SourceView]] = {}
    for i, view in enumerate(ordered):
        found.setdefault(root(i), []).append(view)
    return list(found.values())


def _split_by_anchor(members: list[SourceView]) -> list[tuple[SourceView, ...]]:
    """A mixed component as coherent groups: repeatedly the anchor held by most of the
    remaining views (ties: an entity before a subject, then the anchor held earliest), so each
    view lands in exactly one group and no group mixes two holders."""
    remaining, groups = list(members), []
    while remaining:
        counts: dict[str, int] = {}
        for view in remaining:
            for anchor in anchors(view):
                counts[anchor] = counts.get(anchor, 0) + 1
        first = {a: min(creation_key(v) for v in remaining if a in anchors(v)) for a in counts}
        best = min(counts, key=lambda a: (-counts[a], not a.startswith("entity:"), first[a], a))
        groups.append(tuple(view for view in remaining if best in anchors(view)))
        remaining = [view for view in remaining if best not in anchors(view)]
    return groups


def components(views: Sequence[SourceView]) -> list[tuple[SourceView, ...]]:
    """Coherent groups: connected components of ``related`` within one scope and
    attribution, a component without one common subject or entity split by anchor; each
    group in creation order, the groups in the creation order of their oldest member.
    Groups hold at most 32 views, so the pairwise pass is bounded."""
    groups = []
    for members in _linked(views):
        groups.extend([tuple(members)] if coherent(members) else _split_by_anchor(members))
    return sorted(groups, key=lambda group: creation_key(group[0]))


def statement_classes(views: Sequence[SourceView]) -> list[tuple[SourceView, ...]]:
    """Views grouped by normalised statement (a clause and its support), each ordered by
    creation key, the classes in the creation order of their oldest member."""
    found: dict[str, list[SourceView]] = {}
    for view in sorted(views, key=creation_key):
        found.setdefault(normalize(view.statement), []).append(view)
    return list(found.values())


# --- Time and conflict -----------------------------------------------------------------
# General English structure only: which verbs place a holder, which words mark a change,
# which negate. Places are capitalised words after a locative preposition, calendar names
# excluded ("moving to Porto in April 2026" moves to Porto, not to April).

_RESIDENCE = re.compile(r"\b(?:live|lives|lived|living|reside|resides|resided|residing|based|settled)\b", re.I)
_WORK = re.compile(r"\b(?:work|works|worked|working|employed|job)\b", re.I)
_MOVE = re.compile(r"\b(?:move|moves|moved|moving|relocate|relocates|relocated|relocating)\b", re.I)
_TENTATIVE = re.compile(r"\b(?:considering|thinking|might|maybe|perhaps|possibly|hoping|wondering|"
                        r"wants to|would like)\b", re.I)
_CHANGE = re.compile(r"\b(?:now|no longer|any ?more|any longer|instead|nowadays|these days|switched|changed|"
                     r"quit|stopped|became|become|has become)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|never|no longer|no)\b|n['’]t\b", re.I)
_PLACE = re.compile(r"\b(in|at|near|to|from)\s+((?:[A-Z][\w'’-]*)(?:\s+[A-Z][\w'’-]*)*)")
_CALENDAR = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "monday tuesday wednesday thursday friday saturday sunday".split())
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_STOPWORDS = (
    "a an the and or but of in on at to from for with by as into about near than then that this these those it its "
    "is are was were be been being am has have had do does did will would shall should can could must "
    "he she they we you i him her them his their our your my me us who whom which what there here both also "
    "just very really still owner user says said say")
_NEGATION_WORDS = "not never no longer"
_CHANGE_WORDS = "now instead nowadays anymore any more longer switched changed quit stopped became become days"


def _stem(word: str) -> str:
    word = word.casefold().replace("’", "'")
    for suffix in ("'s", "n't"):
        if word.endswith(suffix):
            word = word[: -len(suffix)]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word


# Words that carry no claim of their own: function words, negation and change markers.
_NOT_CONTENT = frozenset(_stem(word) for word in f"{_STOPWORDS} {_NEGATION_WORDS} {_CHANGE_WORDS}".split())


def _places(text: str, prepositions: Sequence[str]) -> frozenset[str]:
    found = set()
    for preposition, run in _PLACE.findall(text):
        if preposition.casefold() not in prepositions:
            continue
        words = [_stem(word) for word in run.split()]
        words = [word for word in words if word not in _CALENDAR]
        if words:
            found.add(" ".join(words))
    return frozenset(found)


@dataclass(frozen=True)
class Claim:
    """What the rules read from one statement class (its oldest member's wording)."""

    views: tuple[SourceView, ...]
    at: tuple[datetime, datetime]  # the latest (valid_from, evidence_at) of the class
    residence: frozenset[str]  # where a static, affirmed statement says the holder lives
    places: frozenset[str]  # every place under a residence, work or move verb
    move_to: frozenset[str]  # a move's destination (empty when it only leaves)
    moving: bool
    firm: bool  # not hedged ("considering", "might")
    changed: bool  # an explicit change marker
    negated: bool
    frame: tuple[str, ...]  # content words, negation removed: equal frames say the same thing
    content: frozenset[str]  # content words minus the holder's subject words


@dataclass(frozen=True)
class _Reading:
    """What ``claim`` reads from one wording alone."""

    negated: bool
    moving: bool
    places: frozenset[str]
    residence: frozenset[str]
    move_to: frozenset[str]
    firm: bool
    changed: bool
    frame: tuple[str, ...]


# Cached: a group's rules (conflicts, updates, the summary plan and its placement) read each
# statement several times, and the reading of a text depends on nothing else.
@functools.lru_cache(maxsize=4096)
def _read(statement: str) -> _Reading:
    text = normalize(statement)
    negated = bool(_NEGATION.search(text))
    moving = bool(_MOVE.search(text))
    located = moving or bool(_RESIDENCE.search(text)) or bool(_WORK.search(text))
    words = [_stem(word) for word in _WORD.findall(text)]
    return _Reading(
        negated=negated, moving=moving,
        places=_places(text, ("in", "at", "near", "to", "from")) if located else frozenset(),
        residence=_places(text, ("in", "at", "near")) if _RESIDENCE.search(text) and not moving else frozenset(),
        move_to=_places(text, ("to",)) if moving else frozenset(),
        firm=not _TENTATIVE.search(text), changed=bool(_CHANGE.search(text)),
        frame=tuple(word for word in words if word not in _NOT_CONTENT),
    )


@functools.lru_cache(maxsize=4096)
def _subject_words(subject: str) -> frozenset[str]:
    return frozenset(_stem(word) for word in _WORD.findall(subject))


def claim(views: Sequence[SourceView]) -> Claim:
    reading = _read(views[0].statement)
    negated = reading.negated or any(view.polarity == "negated" for view in views)
    holder = frozenset().union(*(_subject_words(view.subject) for view in views))
    return Claim(
        views=tuple(views), at=max((view.valid_from, view.evidence_at) for view in views),
        residence=reading.residence if not negated else frozenset(),
        places=reading.places, move_to=reading.move_to, moving=reading.moving,
        firm=reading.firm, changed=reading.changed, negated=negated, frame=reading.frame,
        content=frozenset(w for w in reading.frame if len(w) >= 3 and w not in holder and not w.isdigit()),
    )


def same_holder(a: SourceView, b: SourceView) -> bool:
    """Both about one person or entity (a shared entity ID), or — when either names none —
    one subject. A subject such as "family in Porto" alone never joins two people."""
    if a.entity_ids and b.entity_ids:
        return bool(set(a.entity_ids) & set(b.entity_ids))
    return a.subject == b.subject and a.attribution == b.attribution


def supersedes(new: Claim, old: Claim) -> Optional[str]:
    """Why ``new`` supersedes ``old`` (a reason code), or None. Only a strictly later
    statement about the same holder can, and only on the same attribute:

    * ``move`` — a firm move away from where ``old`` placed the holder, or past an older move;
    * ``settled`` — a static residence after an older move (the move happened or changed);
    * ``residence_change`` — a static residence elsewhere than an older one;
    * ``polarity_change`` — the same frame, negation flipped;
    * ``stated_change`` — an explicit change marker ("now", "no longer") over a shared content word.
    """
    if not new.at > old.at or not same_holder(new.views[0], old.views[0]):
        return None
    if new.moving and new.firm and not new.negated and (old.moving or (old.places - new.move_to)):
        return "move"
    if old.moving and new.residence:
        return "settled"
    if new.residence and old.residence and not new.residence & old.residence:
        return "residence_change"
    if new.negated != old.negated and new.frame == old.frame:
        return "polarity_change"
    if new.changed and new.content & old.content:
        return "stated_change"
    return None


def _contradicts(a: Claim, b: Claim) -> Optional[str]:
    """Two claims about one holder and attribute that cannot both hold, with no time order."""
    if a.at != b.at or not same_holder(a.views[0], b.views[0]):
        return None
    if a.residence and b.residence and not a.residence & b.residence:
        return "place_difference"
    if a.negated != b.negated and a.frame == b.frame:
        return "polarity_difference"
    return None


def supersessions(claims: Sequence[Claim]) -> dict[int, set[int]]:
    """For each claim index, the indices of the claims that supersede it."""
    return {i: {j for j, new in enumerate(claims) if j != i and supersedes(new, old)} for i, old in enumerate(claims)}


def contradictions(views: Sequence[SourceView]) -> list[tuple[tuple[SourceView, ...], str]]:
    """Unresolved contradictions among ``views``: each a set of contradicting statements
    (every view of each, creation order) and the reason of its first pair. A pair is
    resolved when one later statement supersedes both sides (the update settles it).
    Sets are the connected pairs, so a group yields at most one set per contradiction."""
    claims = [claim(members) for members in statement_classes(views)]
    newer = supersessions(claims)
    # One wording held both affirmed and negated is a contradiction whatever the clocks.
    pairs = [(i, i, "polarity_difference") for i, item in enumerate(claims)
             if len({view.polarity for view in item.views}) > 1]
    pairs += [(i, j, reason) for i in range(len(claims)) for j in range(i + 1, len(claims))
              for reason in [_contradicts(claims[i], claims[j])] if reason and not newer[i] & newer[j]]
    parent = list(range(len(claims)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, j, _reason in pairs:
        parent[root(j)] = root(i)
    reasons: dict[int, str] = {}
    for i, _j, reason in pairs:
        reasons.setdefault(root(i), reason)
    found: dict[int, list[SourceView]] = {}
    for i, item in enumerate(claims):
        if root(i) in reasons:
            found.setdefault(root(i), []).extend(item.views)
    return [(tuple(sorted(members, key=creation_key)), reasons[key]) for key, members in found.items()]


def selection_order(claims: Sequence[Claim], newer: dict[int, set[int]]) -> list[int]:
    """Current statements in creation order, then superseded ones newest first: an update
    is always considered before what it supersedes."""
    current = [i for i in range(len(claims)) if not newer[i]]
    stale = sorted((i for i in range(len(claims)) if newer[i]), key=lambda i: (claims[i].at, -i), reverse=True)
    return current + stale


def plan(views: Sequence[SourceView], *, max_chars: int = bounds.RECON_SUMMARY_MAX_CHARS,
         max_clauses: int = bounds.RECON_SUMMARY_MAX_CLAUSES) -> Optional[SummaryPlan]:
    """The summary of one coherent component, or None: fewer than two non-equivalent
    clauses fit, the views are not one coherent group, or they hold an unresolved
    contradiction (a conflict to flag, not facts to list). A superseded statement is a
    clause only beside every statement that supersedes it; every input stays listed.

    At most ``max_clauses`` clauses, each exactly (after NFC + whitespace collapse) the
    statement of every source it names; current statements first, superseded ones newest
    first. ``render`` — the fixed heading, one bullet per clause — must fit ``max_chars``: a
    clause that does not fit is omitted whole, later ones still get their chance, and the
    omitted sources are listed; they remain inputs, hence dependencies, so their change still
    invalidates the summary.
    """
    classes = statement_classes(views)
    if len(classes) < 2 or len(components(views)) != 1 or contradictions(views):
        return None
    claims = [claim(members) for members in classes]
    newer = supersessions(claims)
    chosen: list[int] = []
    for i in selection_order(claims, newer):
        if len(chosen) == max_clauses:
            break
        text = normalize(classes[i][0].statement)
        if not newer[i] <= set(chosen):
            continue  # never keep a statement while dropping its update
        if not text or len(render([*(normalize(classes[c][0].statement) for c in chosen), text])) > max_chars:
            continue  # omitted whole; a shorter later clause may still fit
        chosen.append(i)
    if len(chosen) < 2:
        return None
    clauses = tuple(ClauseDraft(text=normalize(classes[i][0].statement),
                                source_ids=tuple(view.memory_id for view in classes[i])) for i in sorted(chosen))
    supported = {memory_id for clause in clauses for memory_id in clause.source_ids}
    inputs = tuple(view.memory_id for view in sorted(views, key=creation_key))
    return SummaryPlan(clauses=clauses, inputs=inputs,
                       omitted=tuple(memory_id for memory_id in inputs if memory_id not in supported))


def holder(views: Sequence[SourceView]) -> frozenset[str]:
    """The anchors every view shares (a coherent group's holder: a subject, person or entity)."""
    return frozenset(set.intersection(*(set(anchors(view)) for view in views))) if views else frozenset()


def worth_proposing(clauses: Sequence[ClauseDraft], views: dict[UUID, SourceView]) -> Optional[str]:
    """Why a summary would add nothing recall does not already give (a reason code), or None.

    One search renders a hit and, through its expansion arm, one sibling of the same holder:
    a summary of fewer than ``min_clauses`` statements repeats that. And a summary of one
    conversation only gathers what that conversation's own evidence already ties together;
    it must draw on at least ``min_sessions`` conversations. (``RECON_SUMMARY_MIN_CLAUSES`` and
    ``RECON_SUMMARY_MIN_SESSIONS``, read at call time.)"""
    min_clauses, min_sessions = bounds.RECON_SUMMARY_MIN_CLAUSES, bounds.RECON_SUMMARY_MIN_SESSIONS
    if len(clauses) < min_clauses:
        return "summary_too_few_clauses"
    sessions = {session for clause in clauses for memory_id in clause.source_ids
                for session in views[memory_id].session_ids if memory_id in views}
    if len(sessions) < min_sessions:
        return "summary_one_conversation"
    return None


def jaccard(a: Sequence[UUID], b: Sequence[UUID]) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 0.0


def projection(views: Sequence[SourceView]) -> Projection:
    """The summary's metadata, inherited conservatively: the strictest sensitivity and
    portability, the weakest authority and confidence, the latest original evidence clock
    (never the commit time), the latest validity start and the earliest expiry.
    """
    rank = vocabulary.SENSITIVITY_RANK
    subjects = {view.subject for view in views}
    types = {view.belief_type for view in views}
    expiries = [view.expires_at for view in views if view.expires_at is not None]
    return Projection(
        subject=subjects.pop() if len(subjects) == 1 else "",
        belief_type=types.pop() if len(types) == 1 else MIXED_BELIEF_TYPES,
        sensitivity=max((view.sensitivity for view in views), key=rank.__getitem__),
        scope=views[0].scope,
        portable=all(view.portable for view in views),
        authority=max((view.authority for view in views), key=vocabulary.AUTHORITIES.index),
        confidence=min(view.confidence for view in views),
        evidence_at=max(view.evidence_at for view in views),
        valid_from=max(view.valid_from for view in views),
        expires_at=min(expiries) if expiries else None,
    )


def check_clauses(clauses: Sequence[ClauseDraft], views: dict[UUID, SourceView], *,
                  max_chars: int = bounds.RECON_SUMMARY_MAX_CHARS,
                  max_clauses: int = bounds.RECON_SUMMARY_MAX_CLAUSES) -> Optional[str]:
    """Why these clauses cannot be committed over ``views`` (a reason code), or None."""
    if not 2 <= len(clauses) <= max_clauses:
        return "summary_clause_count"
    if len(render([clause.text for clause in clauses])) > max_chars:
        return "summary_too_long"
    if len({(v.scope, v.attribution) for v in views.values()}) != 1:
        return "summary_mixed_scope"
    texts = set()
    for clause in clauses:
        if not clause.source_ids or not set(clause.source_ids) <= set(views):
            return "summary_foreign_source"
        text = normalize(clause.text)
        if any(normalize(views[memory_id].statement) != text for memory_id in clause.source_ids):
            return "summary_not_extractive"
        if text in texts:
            return "summary_not_distinct"
        texts.add(text)
    ordered = list(views.values())
    if len(components(ordered)) != 1:
        return "summary_unrelated"
    if contradictions(ordered):
        return "summary_contradiction"
    classes = statement_classes(ordered)
    newer = supersessions([claim(members) for members in classes])
    kept = {i for i, members in enumerate(classes) if normalize(members[0].statement) in texts}
    if any(not newer[i] <= kept for i in kept):
        return "summary_superseded_kept"
    return None

"""The local equivalence key: the only authority for an automatic merge.

Two originals are equivalent when their statements are equal after Unicode NFC and
whitespace collapse *only* — case, punctuation, negation, dates and quantities stay
significant, so "Paid 30 EUR" never merges with "paid 30 eur." — and every field that
changes what the claim means or who may see it is equal too: subject, belief type, claim
kind, polarity, derivation, attribution, scope, portability, authority, sensitivity,
valid_from and expiry. Provider similarity can never widen this.

The canonical member of a class is the oldest immutable creation key, then the UUID, so
every replay and every worker picks the same one. Pure functions over ``SourceView``
values: no database, no clock.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Sequence

from reconsolidation.pipeline.sources import SourceView

_SPACE = re.compile(r"\s+")

# Every field (besides the normalised statement) whose inequality blocks a merge.
KEY_FIELDS = (
    "subject", "belief_type", "claim_kind", "polarity", "derivation", "attribution", "scope", "portable",
    "authority", "sensitivity", "valid_from", "expires_at",
)


def normalize(text: str) -> str:
    """NFC and whitespace collapse; nothing else (case and punctuation are meaning)."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def equivalence_key(view: SourceView) -> tuple:
    return (normalize(view.statement), *(getattr(view, name) for name in KEY_FIELDS))


def creation_key(view: SourceView) -> tuple:
    return (view.creation_sequence, str(view.memory_id))


def canonical(views: Iterable[SourceView]) -> SourceView:
    """The oldest creation key, then the smallest UUID."""
    return min(views, key=creation_key)


def equivalence_classes(views: Sequence[SourceView]) -> list[tuple[SourceView, ...]]:
    """All classes (including singletons), each ordered canonical first, the classes in
    the creation order of their canonicals."""
    classes: dict[tuple, list[SourceView]] = {}
    for view in views:
        classes.setdefault(equivalence_key(view), []).append(view)
    ordered = [tuple(sorted(members, key=creation_key)) for members in classes.values()]
    return sorted(ordered, key=lambda members: creation_key(members[0]))


def all_equivalent(views: Sequence[SourceView]) -> bool:
    return len({equivalence_key(view) for view in views}) == 1

"""The local equivalence key: the only authority for an automatic merge.

Two originals are equivalent when their statements are equal after Unicode NFC and
whitespace collapse *only* — case, punctuation, negation, dates and quantities stay
significant, so "Paid 30 EUR" never merges with "paid 30 eur." — and every field that
changes what the claim means or who may see it is equal too (``equivalence_key``).
Provider similarity can never widen this.

The canonical member of a class is the oldest immutable creation key, then the UUID, so
every replay and every worker picks the same one. Pure functions over ``SourceView``
values: no database, no clock.

``key_digest`` is the same key as one SHA-256, which the database keeps beside every
original; it only *finds* candidate sets: every merge is still decided by
``equivalence_key`` over the current rows.
"""
from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from typing import Iterable, Optional, Sequence

from reconsolidation.sources import SourceView

_SPACE = re.compile(r"\s+")
_MICROSECOND = timedelta(microseconds=1)

# Every field (besides the normalised statement) whose inequality blocks a merge.
KEY_FIELDS = (
    "subject", "belief_type", "claim_kind", "polarity", "derivation", "attribution", "scope", "portable",
    "authority", "sensitivity", "valid_from", "expires_at",
)


@functools.lru_cache(maxsize=65536)  # pure, and every rule of a group normalises each statement again
def normalize(text: str) -> str:
    """NFC and whitespace collapse; nothing else (case and punctuation are meaning)."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def equivalence_key(view: SourceView) -> tuple:
    """The normalised statement and every field of ``KEY_FIELDS``: subject, belief type, claim
    kind, polarity, derivation, attribution, scope, portability, authority, sensitivity,
    valid_from and expiry.
    """
    return (normalize(view.statement), *(getattr(view, name) for name in KEY_FIELDS))


# Versioned namespace of the digest: a change of the key is a new digest version.
KEY_DIGEST_VERSION = "reconsolidation-equivalence@1"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _instant_micros(value: Optional[datetime]) -> str:
    """Microseconds since the epoch (exact; the database's extract(epoch) * 1e6), '' for None."""
    if value is None:
        return ""
    return str((value - _EPOCH) // _MICROSECOND)


def _field(value) -> str:
    """One length-prefixed field: the concatenation of fields stays injective."""
    text = ("t" if value else "f") if isinstance(value, bool) else (
        _instant_micros(value) if isinstance(value, datetime) or value is None else str(value))
    return f"{len(text)}:{text};"


def key_digest(view: SourceView) -> str:
    """SHA-256 (hex) of ``equivalence_key``: equal keys, equal digests.

    The database keeps it beside every original (``memory_memory.recon_equivalence_digest``, a
    generated column of migration 0006, so it changes in the very statement that changes the
    row), computed by ``reconsolidation_equivalence_digest``, a mirror of this function (same
    normalisation, same field order and encoding);
    ``tests/reconsolidation/test_equivalence_pass.py`` holds the two equal.
    """
    statement, *fields = equivalence_key(view)
    encoded = KEY_DIGEST_VERSION + ";" + _field(statement) + "".join(_field(value) for value in fields)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


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

"""The local equivalence key: NFC and whitespace collapse only; every other difference in
the statement, and any difference in a key field, blocks a merge. The canonical is the
oldest creation key, then the UUID."""
from __future__ import annotations

from datetime import timedelta
from uuid import UUID

import pytest

from reconsolidation.providers.rules import provider as rules
from reconsolidation.providers.rules.equivalence import (
    KEY_FIELDS,
    all_equivalent,
    canonical,
    equivalence_classes,
    equivalence_key,
)
from reconsolidation.sources import SourceView
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import by_kind, process


def view(n: int = 1, **overrides) -> SourceView:
    values = dict(
        memory_id=UUID(int=n), content_revision=1, creation_sequence=n, statement="The owner paid 30 EUR on 1 May.",
        subject="rent", belief_type="fact", claim_kind="claim", polarity="affirmed", derivation="explicit",
        attribution="owner", scope="user", portable=True, authority="USER", sensitivity="internal", confidence=0.9,
        evidence_at=T0, valid_from=T0, expires_at=None,
        session_ids=(UUID(int=10_000 + n),),  # each view from its own conversation, as ``original`` makes them
    )
    values.update(overrides)
    return SourceView(**values)


FIELD_CHANGES = {
    "subject": "rent payments", "belief_type": "preference", "claim_kind": "other", "polarity": "negated",
    "derivation": "extracted", "attribution": "person:00000000-0000-4000-8000-00000000000a", "scope": "project:home",
    "portable": False, "authority": "AFFIRMED", "sensitivity": "public", "valid_from": T0 + timedelta(days=1),
    "expires_at": T0 + timedelta(days=30),
}


def test_every_key_field_is_covered_by_a_blocking_case():
    assert set(FIELD_CHANGES) == set(KEY_FIELDS)


@pytest.mark.parametrize("field", sorted(FIELD_CHANGES))
def test_a_difference_in_any_key_field_blocks_a_merge(field):
    a, b = view(1), view(2, **{field: FIELD_CHANGES[field]})
    assert not all_equivalent([a, b])
    merges = by_kind(rules.propose([a, b]), "merge_equivalent")
    if field == "valid_from":  # the same words said again later: a proposal for the owner, never the key's merge
        assert [m.reason for m in merges] == ["paraphrase_restated"]
    else:
        assert merges == []


@pytest.mark.parametrize("other", [
    "the owner paid 30 EUR on 1 May.",  # case
    "The owner paid 30 EUR on 1 May",  # punctuation
    "The owner never paid 30 EUR on 1 May.",  # negation
    "The owner paid 30 EUR on 2 May.",  # date
    "The owner paid 31 EUR on 1 May.",  # quantity
    "The owner paid 30 EUR on 1 May!",
])
def test_case_punctuation_negation_dates_and_quantities_are_significant(other):
    assert equivalence_key(view(1)) != equivalence_key(view(2, statement=other))


@pytest.mark.parametrize("other", [
    "The owner  paid 30 EUR\ton 1 May. ",  # whitespace collapse
    "The owner paid 30\u00a0EUR on 1 May.",  # a no-break space is whitespace
])
def test_only_whitespace_and_unicode_composition_are_normalised(other):
    assert equivalence_key(view(1)) == equivalence_key(view(2, statement=other))
    decomposed = view(3, statement="Caf\u0065\u0301 opens at 8.")
    composed = view(4, statement="Caf\u00e9 opens at 8.")
    assert equivalence_key(decomposed) == equivalence_key(composed)


def test_unrelated_fields_do_not_block_a_merge():
    a, b = view(1, confidence=0.9, evidence_at=T0), view(2, confidence=0.4, evidence_at=T0 + timedelta(days=3),
                                                           content_revision=5)
    assert all_equivalent([a, b])


def test_the_canonical_is_the_oldest_creation_key_then_the_uuid():
    older, newer = view(2, creation_sequence=1), view(1, creation_sequence=7)
    assert canonical([newer, older]) is older
    tie_low, tie_high = view(3, creation_sequence=5), view(9, creation_sequence=5)
    assert canonical([tie_high, tie_low]) is tie_low
    (members,) = [c for c in equivalence_classes([newer, older]) if len(c) == 2]
    assert members[0] is older


def test_through_the_database_a_differing_field_blocks_the_merge_and_equal_ones_merge(db, enabled, store):
    owner = make_owner()[0]
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers  Celsius.", subject="units")
    c = original(owner, "The owner prefers Celsius.", subject="units", sensitivity="public")
    ops = by_kind(process(store, owner, [a, b, c], T0 + timedelta(days=1)), "merge_equivalent")
    assert [{ref.memory_id for ref in op.inputs} for op in ops] == [{a.id, b.id}]

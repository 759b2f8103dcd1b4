"""Dated recall of imported history: a bank import keeps each original's created_at but
records its first revision at import time, after every instant the history talks about.

Revision 1 is the content an original was created with, so a dated recall sees it from
the original's creation time; an original created already expired (a past version with
its validity window) is recalled only inside that window. Both hold in every channel:
the dense arm matches the vector of exactly that revision.
"""
from __future__ import annotations

from datetime import timedelta

import pytest

from recall.backfill import backfill_vectors
from tests.factories import T0
from tests.recall.helpers import NOW, Bank, MappedEncoder, bank, basis, semantic_on  # noqa: F401

QUERY = "which employer then"
IMPORTED = NOW - timedelta(days=1)  # the import runs after all of the history below
SWITCH = T0 + timedelta(days=15)  # the old job's validity ends, the new one starts


def _history(bank: Bank):
    """(old version: created expired, valid T0..SWITCH; new version: active from SWITCH)."""
    old, new = bank.add_many([
        dict(statement="Worked as a courier at Parcelway.", subject="employer", belief_type="attribute",
             at=T0, created_at=T0, status="expired", expires_at=SWITCH),
        dict(statement="Works as a baker at Crumbs.", subject="employer", belief_type="attribute",
             at=SWITCH, created_at=SWITCH),
    ], at=IMPORTED)
    return old, new


@pytest.mark.parametrize("channel", ["sparse", "dense", "hybrid"])
def test_an_imported_past_version_is_recalled_inside_its_validity_window(bank, semantic_on, channel):
    old, new = _history(bank)
    encoder = MappedEncoder({QUERY: basis(0)})
    bank.vector(old, basis(0), encoder)
    bank.vector(new, basis(0), encoder)

    then = bank.recall(QUERY, encoder=encoder, channel=channel, as_of=T0 + timedelta(days=5))
    assert then.channel == channel
    assert old in then.stages.rendered_ids and new not in then.stages.candidate_ids
    if channel != "sparse":
        assert old in then.stages.dense_ids

    current = bank.recall(QUERY, encoder=encoder, channel=channel)
    assert new in current.stages.rendered_ids and old not in current.stages.candidate_ids


@pytest.mark.parametrize("channel", ["sparse", "dense"])
def test_a_past_version_stays_out_before_its_creation_and_after_its_expiry(bank, semantic_on, channel):
    old, new = _history(bank)
    encoder = MappedEncoder({QUERY: basis(0)})
    bank.vector(old, basis(0), encoder)
    bank.vector(new, basis(0), encoder)
    before = bank.recall(QUERY, encoder=encoder, channel=channel, as_of=T0 - timedelta(seconds=1))
    assert old not in before.stages.candidate_ids
    at_expiry = bank.recall(QUERY, encoder=encoder, channel=channel, as_of=SWITCH)
    assert old not in at_expiry.stages.candidate_ids and new in at_expiry.stages.rendered_ids


def test_backfill_embeds_a_past_version_so_dense_dated_recall_can_find_it(bank, semantic_on):
    old, _new = _history(bank)
    text = "employer: Worked as a courier at Parcelway."
    encoder = MappedEncoder({QUERY: basis(0), text: basis(0)}, default=basis(1))
    assert backfill_vectors(principal=bank.principal, encoder=encoder).embedded == 2
    then = bank.recall(QUERY, encoder=encoder, channel="dense", as_of=T0 + timedelta(days=5))
    assert then.stages.dense_ids == (old,)

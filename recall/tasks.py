"""Celery tasks of recall: thin wrappers over ``recall.backfill``.

They use ``get_encoder()``, so while AGENT_MEMORY_SEMANTIC_ENABLED is off they do
nothing: a scheduled job never starts a provider (local or remote) on its own. An
operator who wants the index filled before turning semantic recall on runs the
``backfill_vectors`` command, which uses the configured encoder explicitly.
"""
from __future__ import annotations

from typing import Optional
from uuid import UUID

from celery import shared_task

from memory.services.sweeps import owners
from recall.backfill import backfill_vectors
from recall.encoders import get_encoder
from veetbot.identity import Principal

# Per owner and run: bounds one beat run and keeps owners progressing side by side.
DEFAULT_MAX_ITEMS_PER_OWNER = 2000


def _disabled() -> dict:
    return {"enabled": False, "owners": 0, "embedded": 0, "skipped_stale": 0, "remaining": 0, "stopped": ""}


@shared_task(name="recall.tasks.backfill_vectors_owner")
def backfill_vectors_owner(tenant: str, principal: str, max_items: Optional[int] = DEFAULT_MAX_ITEMS_PER_OWNER) -> dict:
    encoder = get_encoder()
    if encoder is None:
        return _disabled()
    owner = Principal(tenant_id=UUID(str(tenant)), principal_id=UUID(str(principal)))
    report = backfill_vectors(principal=owner, encoder=encoder, max_items=max_items)
    return {"enabled": True, "owners": 1, **report.summary(), "stopped": report.stopped}


@shared_task(name="recall.tasks.backfill_vectors_all")
def backfill_vectors_all(max_items_per_owner: Optional[int] = DEFAULT_MAX_ITEMS_PER_OWNER) -> dict:
    """Every owner in turn (oldest originals first within each); stops at the first
    encoder failure, since the next owner would meet the same unavailable encoder."""
    encoder = get_encoder()
    if encoder is None:
        return _disabled()
    totals = {"enabled": True, "owners": 0, "embedded": 0, "skipped_stale": 0, "remaining": 0,
              "space": encoder.tuple.space, "stopped": ""}
    for owner in owners():
        report = backfill_vectors(principal=owner, encoder=encoder, max_items=max_items_per_owner)
        totals["owners"] += 1
        totals["embedded"] += report.embedded
        totals["skipped_stale"] += report.skipped_stale
        totals["remaining"] += report.remaining
        if report.stopped:
            totals["stopped"] = report.stopped
            break
    return totals

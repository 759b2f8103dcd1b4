"""Celery tasks of reconsolidation: thin wrappers over ``reconsolidation.driver``.

Beat runs ``dream_due_all`` every ``RECON_DREAM_INTERVAL_SECONDS`` when a broker is
configured. It fans out one ``dream_owner`` task per owner (``memory.services.sweeps.owners``,
read in the staff context), so owners progress side by side on as many workers as run;
each runs up to ``RECON_DREAM_MAX_SLICES_PER_OWNER`` slices and yields. Fleet-wide
admission is the durable lease: two workers on one owner get one slice, the other None.
Without a broker the same tasks run inline (``task_always_eager``).

With the processing switch off the tasks start nothing and say so in their result. The
results are content-free: counts, reason codes and owner labels only.
"""
from __future__ import annotations

import os
import socket
from typing import Optional
from uuid import UUID

from celery import shared_task
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memory.services.sweeps import owners
from reconsolidation import mode
from reconsolidation import driver
from reconsolidation.leases import processing_enabled
from veetbot.identity import Principal


def lease_owner() -> str:
    return f"celery@{socket.gethostname()}:{os.getpid()}"


@shared_task(name="reconsolidation.tasks.dream_owner")
def dream_owner(tenant: str, principal: str, max_slices: Optional[int] = None) -> dict:
    """Up to ``max_slices`` slices for one owner, stopping early once idle."""
    if not processing_enabled():
        return {"enabled": False, "slices": 0, "stopped": "disabled"}
    try:
        mode.check_startup()  # unattended needs matching release evidence before any slice
    except ImproperlyConfigured as refused:
        return {"enabled": True, "slices": 0, "stopped": "mode_refused",
                "reason": getattr(refused, "reason", "mode_invalid")}
    owner = Principal(tenant_id=UUID(str(tenant)), principal_id=UUID(str(principal)))
    limit = max_slices or settings.RECON_DREAM_MAX_SLICES_PER_OWNER
    runs, stopped = driver.run_until_idle(owner, lease_owner=lease_owner(), max_slices=limit)
    return {"enabled": True, **driver.pass_summary(runs, stopped)}


@shared_task(name="reconsolidation.tasks.dream_due_all")
def dream_due_all(max_slices_per_owner: Optional[int] = None) -> dict:
    """One ``dream_owner`` task per owner (inline without a broker)."""
    if not processing_enabled():
        return {"enabled": False, "owners": 0}
    everyone = owners()
    for owner in everyone:
        dream_owner.apply_async(
            args=(str(owner.tenant_id), str(owner.principal_id), max_slices_per_owner),
            expires=settings.RECON_DREAM_INTERVAL_SECONDS,  # a stale queued run is dropped, not piled up
        )
    return {"enabled": True, "owners": len(everyone)}

"""Entry point of a separate OS process that claims a lease on its own connection.

Started with the ``spawn`` method: the child imports Django from scratch, points both
aliases at the parent's test database and runs the real store.
"""
from __future__ import annotations

import os
import sys


def boot_child(root: str, db_name: str) -> None:
    """Set up Django in a spawned child: both aliases on the parent's test database,
    processing switched on."""
    sys.path.insert(0, root)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "veetbot.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connections

    for alias in ("default", "owner"):
        settings.DATABASES[alias]["NAME"] = db_name
        connections[alias].settings_dict["NAME"] = db_name
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True


def claim_in_child(root: str, db_name: str, tenant: str, principal: str, now_iso: str, barrier, results) -> None:
    boot_child(root, db_name)
    from datetime import datetime

    from django.db import connections

    from reconsolidation.store import ReconsolidationStore
    from veetbot.identity import Principal

    owner = Principal(tenant_id=tenant, principal_id=principal)
    barrier.wait(timeout=60)
    try:
        lease = ReconsolidationStore().claim_due(owner, lease_owner=f"pid-{os.getpid()}",
                                                 now=datetime.fromisoformat(now_iso))
        results.put(("ok", str(lease.lease_token) if lease else None))
    except Exception as error:  # reported to the parent, which fails the test
        results.put(("error", repr(error)))
    finally:
        connections.close_all()


def race(target, owner, now, *, timeout: float) -> list:
    """Start two spawned children running ``target`` for ``owner`` at ``now`` against this
    test database, released together by a barrier; their reported outcomes."""
    import multiprocessing
    from pathlib import Path

    from django.conf import settings

    root = str(Path(__file__).resolve().parents[2])
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    children = [context.Process(target=target, args=(
        root, settings.DATABASES["default"]["NAME"], str(owner.tenant_id), str(owner.principal_id),
        now.isoformat(), barrier, results)) for _ in range(2)]
    for child in children:
        child.start()
    outcomes = [results.get(timeout=timeout) for _ in children]
    for child in children:
        child.join(timeout=60)
    return outcomes

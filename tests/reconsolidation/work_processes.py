"""Entry point of a separate OS process that works the owner's queue with the real
``process_group`` on its own connection (``spawn``: Django is imported from scratch and
pointed at the parent's test database, like ``processes.claim_in_child``)."""
from __future__ import annotations

import os
import time

from tests.reconsolidation.processes import boot_child


def process_in_child(root: str, db_name: str, tenant: str, principal: str, now_iso: str, barrier, results) -> None:
    boot_child(root, db_name)
    from datetime import datetime

    from django.db import connections

    from reconsolidation.store import ReconsolidationStore
    from reconsolidation.work.process import process_group
    from veetbot.identity import Principal

    owner, store, now = Principal(tenant_id=tenant, principal_id=principal), ReconsolidationStore(), \
        datetime.fromisoformat(now_iso)
    recorded, idle = [], 0
    barrier.wait(timeout=60)
    try:
        while idle < 200:
            lease = store.claim_due(owner, lease_owner=f"pid-{os.getpid()}", now=now)
            if lease is None:
                idle += 1
                time.sleep(0.01)
                continue
            try:
                group = store.claim_group(owner, lease_token=lease.lease_token, now=now)
                if group is None:
                    break
                recorded += [str(op.id) for op in process_group(store, owner, group, now=now)]
            finally:
                store.release(owner, lease.lease_token, now=now)
        results.put(("ok", recorded))
    except Exception as error:  # reported to the parent, which fails the test
        results.put(("error", repr(error)))
    finally:
        connections.close_all()

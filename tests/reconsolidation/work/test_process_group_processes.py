"""Parallel workers in separate OS processes, each running the real ``process_group``
over overlapping queued groups, record exactly one operation per input."""
from __future__ import annotations

from collections import Counter

from reconsolidation.domain import input_digest
from reconsolidation.models import ReconsolidationGroup, ReconsolidationOperation
from tests.factories import make_owner
from tests.reconsolidation.helpers import original, refs
from tests.reconsolidation.processes import race
from tests.reconsolidation.work_processes import process_in_child
from veetbot.rls import owner_context


def test_workers_in_separate_processes_record_exactly_one_operation_per_input(live_db, enabled, store, day_one):
    owner, _ = make_owner()
    original(owner, "The owner keeps a diary.", subject="diary")  # an owner with no original gets no job
    lease = store.claim_due(owner, lease_owner="setup", now=day_one)
    classes = []
    for i in range(4):
        a, b = (original(owner, f"The owner prefers setting {i}.", subject=f"s{i}") for _ in range(2))
        stray = original(owner, f"The owner walked {i} miles.", subject=f"walk{i}")
        classes.append({a.id, b.id})
        for inputs in ((a, b), (a, b, stray), (b, stray, a)):  # the same class offered by overlapping groups
            store.queue_group(owner, lease_token=lease.lease_token, inputs=refs(*inputs),
                              input_digest=input_digest(refs(*inputs)), now=day_one)
    store.release(owner, lease.lease_token, now=day_one)

    outcomes = race(process_in_child, owner, day_one, timeout=180)
    assert all(kind == "ok" for kind, _ in outcomes), outcomes
    reported = [op for _, ops in outcomes for op in ops]
    with owner_context(owner):
        rows = list(ReconsolidationOperation.objects.filter(kind="merge_equivalent"))
        states = Counter(ReconsolidationGroup.objects.values_list("state", flat=True))
    assert sorted(str(row.id) for row in rows) == sorted(reported)
    assert sorted(map(frozenset, (set(row.input_ids) for row in rows)), key=sorted) == sorted(
        map(frozenset, classes), key=sorted)  # one merge per class, none twice
    assert states["pending"] == 0 and states["leased"] == 0

"""Real concurrency on separate connections (threads) and separate OS processes: exactly one
lease holder, exactly one operation per input, and reservations that never exceed the slice
or daily ceilings however many workers race."""
from __future__ import annotations

import threading
import time
from decimal import Decimal

import pytest
from django.db import connections

from reconsolidation import bounds
from reconsolidation.domain import input_digest
from reconsolidation.errors import BudgetExhausted
from reconsolidation.models import ReconsolidationGroup, ReconsolidationOperation
from tests.factories import make_owner
from tests.reconsolidation.helpers import digest, original, proposal, refs, spend_of
from tests.reconsolidation.processes import claim_in_child, race
from veetbot.rls import owner_context


def run_threads(target, count: int) -> list:
    barrier, results, errors = threading.Barrier(count), [None] * count, []

    def run(index):
        try:
            barrier.wait(timeout=30)
            results[index] = target(index)
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    return results


def test_parallel_threads_produce_exactly_one_lease_holder(live_db, enabled, store, day_one):
    principal, _ = make_owner()
    original(principal, "The owner prefers Celsius.", subject="units")
    leases = run_threads(lambda i: store.claim_due(principal, lease_owner=f"t{i}", now=day_one), 6)
    assert len([lease for lease in leases if lease is not None]) == 1


def test_two_os_processes_produce_exactly_one_lease_holder(live_db, enabled, day_one):
    principal, _ = make_owner()
    original(principal, "The owner prefers Celsius.", subject="units")
    outcomes = race(claim_in_child, principal, day_one, timeout=120)
    assert all(kind == "ok" for kind, _ in outcomes), outcomes
    assert len([token for _, token in outcomes if token is not None]) == 1


def test_parallel_workers_commit_exactly_one_operation_per_input(live_db, enabled, store, day_one):
    principal, _ = make_owner()
    memories = [original(principal, f"The owner prefers Celsius {n}.", subject="units") for n in range(8)]
    lease = store.claim_due(principal, lease_owner="setup", now=day_one)
    pairs = [(memories[i], memories[j]) for i in range(8) for j in range(i + 1, 8)][:12]
    for a, b in pairs:
        store.queue_group(principal, lease_token=lease.lease_token, inputs=refs(a, b),
                          input_digest=input_digest(refs(a, b)), now=day_one)
    store.release(principal, lease.lease_token, now=day_one)

    def worker(index):
        committed = 0
        for _ in range(400):
            held = store.claim_due(principal, lease_owner=f"w{index}", now=day_one)
            if held is None:
                time.sleep(0.002)
                continue
            try:
                group = store.claim_group(principal, lease_token=held.lease_token, now=day_one)
                if group is None:
                    return committed
                store.commit(principal, group, expected_inputs=group.inputs, expected_fence=0,
                             proposal=proposal("flag_conflict", group.inputs), now=day_one)
                store.finish_group(principal, group, outcome="completed", now=day_one)
                committed += 1
            finally:
                store.release(principal, held.lease_token, now=day_one)
        return committed

    counts = run_threads(worker, 4)
    with owner_context(principal):
        operations = list(ReconsolidationOperation.objects.values_list("group_id", flat=True))
        groups = dict(ReconsolidationGroup.objects.values_list("id", "state"))
    assert sum(counts) == len(operations) == len(pairs)
    assert sorted(operations) == sorted(groups) and set(groups.values()) == {"completed"}


@pytest.mark.parametrize("daily_budget", [None, Decimal("0.10")])
def test_racing_reservations_never_exceed_the_slice_or_daily_ceiling(live_db, enabled, store, day_one, monkeypatch,
                                                                     daily_budget):
    if daily_budget is not None:
        monkeypatch.setattr(bounds, "RECON_DAILY_BUDGET_USD", daily_budget)
    ceiling = min(bounds.RECON_SLICE_BUDGET_USD, bounds.RECON_DAILY_BUDGET_USD)
    principal, _ = make_owner()
    memories = [original(principal, f"The owner prefers Celsius {n}.", subject="units") for n in range(7)]
    lease = store.claim_due(principal, lease_owner="w", now=day_one)
    for n in range(6):
        pair = refs(memories[n], memories[n + 1])
        store.queue_group(principal, lease_token=lease.lease_token, inputs=pair, input_digest=input_digest(pair),
                          now=day_one)
    claimed = [store.claim_group(principal, lease_token=lease.lease_token, now=day_one) for _ in range(6)]

    def reserve_many(index):
        admitted = 0
        for n in range(6):
            try:
                store.reserve(principal, claimed[index], request_digest=digest(f"{index}-{n}"),
                              maximum_usd="0.0123", now=day_one)
                admitted += 1
            except BudgetExhausted:
                pass
        return admitted

    admitted = sum(run_threads(reserve_many, 6))
    rows, (ledger,) = spend_of(principal)
    total = sum(row.charged_usd for row in rows)
    assert len(rows) == admitted == int(ceiling / Decimal("0.0123"))
    assert total == ledger.charged_usd <= ceiling

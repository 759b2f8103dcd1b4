"""The proposal-load benchmark counts what the owner is asked: on a bank that fills the review
queue, the simulated owner decides what waits whenever the queue is full, pending never
exceeds the bound, and every proposal asked is counted once (decided or still waiting)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from evals.reconsolidation import proposal_load
from reconsolidation import bounds
from reconsolidation.models import ReconsolidationOperation
from veetbot.rls import owner_context

INSTANT = datetime(2026, 10, 2, 4, 0, tzinfo=timezone.utc)


@pytest.fixture
def bound(monkeypatch):
    monkeypatch.setattr(bounds, "RECON_REVIEW_QUEUE_MAX", 2)
    return 2


# live_db, not django_db(transaction=True): pytest-django's flush runs as the runtime role and
# left this test's committed rows (20 spend rows) behind, which made a later migration test
# that refuses to move a non-empty ledger back fail whenever it ran after this one.
def test_a_bank_that_fills_the_queue_is_decided_as_it_fills_and_every_proposal_asked_counts_once(
        live_db, bound, monkeypatch):
    pending_seen = []
    real_pending = proposal_load._pending

    def pending(principal):
        count = real_pending(principal)
        pending_seen.append(count)
        return count

    monkeypatch.setattr(proposal_load, "_pending", pending)
    with proposal_load.override_settings(**proposal_load.PRODUCTION):
        result = proposal_load.measure("generated-100", instant=INSTANT, embed=False)

    assert result["memories"] == 100 and result["banks"] == 1
    assert max(pending_seen) <= bound == result["most_pending_one_owner"]
    assert result["decided_when_queue_full"] >= bound  # the queue filled and the owner decided
    assert result["proposals"] == sum(result["by_kind"].values())
    # asked = decided + still waiting; every decided proposal is no longer waiting
    assert result["proposals"] - result["decided_when_queue_full"] <= bound
    assert result["per_100_memories"] == round(100 * result["proposals"] / 100, 2)


def test_an_unknown_source_is_refused_before_anything_runs(capsys):
    with pytest.raises(SystemExit):
        proposal_load.parse_args(["--sources", "demo,generated-x"])
    assert "unknown generated-x" in capsys.readouterr().err


def test_generated_banks_of_two_sizes_import_side_by_side():
    """The generator's IDs are fixed; each generated source gets its own, so 2,000 and 10,000
    can be measured in one run (IDs are unique across owners)."""
    ((_, small, _),), ((_, large, _),) = proposal_load._banks("generated-20"), proposal_load._banks("generated-30")
    import json

    ids = lambda data: {m["id"] for m in json.loads(data)["memories"]}  # noqa: E731
    assert not ids(small) & ids(large)


"""The owner's pause of dreaming: durable, audited without content, honoured by every worker
through the lease (no claim while paused; a running slice loses its lease at its next
renewal), idempotent, shown in the dashboard status with a pause/resume control."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client

from reconsolidation.errors import LeaseLost
from reconsolidation.models import ReconsolidationAudit
from reconsolidation import leases
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original
from reconsolidation.selectors.pause import dreaming_pause_get
from reconsolidation.services.pause import dreaming_pause_set
from veetbot.rls import owner_context

NOW = T0 + timedelta(days=1, hours=5)


@pytest.fixture
def owner(db, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    principal, token = make_owner()
    original(principal, "The owner prefers Celsius.", subject="units")
    return principal, token


def events(principal):
    with owner_context(principal):
        return list(ReconsolidationAudit.objects.filter(event__startswith="dreaming_").values_list("event", "reason",
                                                                                                   "counts"))


def test_a_paused_owner_is_never_claimed_and_resuming_lets_dreaming_go_on(owner):
    principal, _ = owner
    dreaming_pause_set(principal=principal, paused=True, now=NOW)
    assert leases.claim_due(principal, now=NOW, lease_owner="worker-a") is None
    assert leases.claim_due(principal, now=NOW, lease_owner="worker-b") is None  # every worker
    dreaming_pause_set(principal=principal, paused=False, now=NOW)
    assert leases.claim_due(principal, now=NOW, lease_owner="worker-a") is not None


def test_a_running_slice_loses_its_lease_at_the_next_renewal(owner):
    principal, _ = owner
    lease = leases.claim_due(principal, now=NOW, lease_owner="worker-a")
    dreaming_pause_set(principal=principal, paused=True, now=NOW + timedelta(seconds=5))
    with pytest.raises(LeaseLost) as lost:
        leases.renew(principal, lease.job_id, lease.lease_token, now=NOW + timedelta(seconds=10))
    assert lost.value.reason == "paused"


def test_pausing_is_durable_idempotent_and_audited_without_content(owner):
    principal, _ = owner
    first = dreaming_pause_set(principal=principal, paused=True, now=NOW)
    again = dreaming_pause_set(principal=principal, paused=True, now=NOW + timedelta(hours=1))
    assert first == again and dreaming_pause_get(principal=principal).paused and again.changed_at == NOW
    dreaming_pause_set(principal=principal, paused=False, now=NOW + timedelta(hours=2))
    dreaming_pause_set(principal=principal, paused=False, now=NOW + timedelta(hours=3))
    assert events(principal) == [("dreaming_paused", "", {}), ("dreaming_resumed", "", {})]
    assert not dreaming_pause_get(principal=principal).paused


def test_another_owners_pause_does_not_hold_this_owner(owner):
    principal, _ = owner
    other, _ = make_owner("Other")
    dreaming_pause_set(principal=other, paused=True, now=NOW)
    assert leases.claim_due(principal, now=NOW, lease_owner="worker-a") is not None


def test_the_dashboard_shows_and_toggles_the_pause(owner):
    principal, token = owner
    client = Client()
    assert client.post("/review/sign-in", {"token": token}).status_code == 303
    assert "Pause dreaming" in client.get("/review/").content.decode()
    assert client.post("/review/dreaming", {"paused": "true"}).status_code == 303
    html = client.get("/review/").content.decode()
    assert "You paused dreaming" in html and "Resume dreaming" in html and dreaming_pause_get(principal=principal).paused
    assert client.post("/review/dreaming", {"paused": "maybe"}).status_code == 400
    assert client.post("/review/dreaming", {"paused": "false"}).status_code == 303
    assert not dreaming_pause_get(principal=principal).paused

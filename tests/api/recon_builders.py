"""Builders of the operation-route tests: originals and operations made by the real
services (process_group, review), with both surface flags on."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings

from reconsolidation.store import ReconsolidationStore
from tests.factories import T0
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import approve, by_kind, process

DAY_ONE = T0 + timedelta(days=1)
BASE = "/v1/memory-reconsolidations"


@pytest.fixture
def recon(settings):
    """Processing on (to build operations) and both HTTP surface flags on."""
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    with override_settings(AGENT_MEMORY_API_ENABLED=True, AGENT_MEMORY_RECONSOLIDATION_API_ENABLED=True):
        yield ReconsolidationStore()


def celsius(principal, n=2, **overrides):
    return [original(principal, "The owner prefers Celsius.", subject="units", **overrides) for _ in range(n)]


def proposed(store, principal, memories, kind):
    (op,) = by_kind(process(store, principal, memories, DAY_ONE), kind)
    return op


def committed_merge(store, principal, **overrides):
    return approve(store, principal, proposed(store, principal, celsius(principal, **overrides), "merge_equivalent"),
                   DAY_ONE)


def summary_inputs(principal, **overrides):
    return [original(principal, "The owner prefers Celsius.", subject="units", **overrides),
            original(principal, "The owner reads temperatures in the morning.", subject="units", **overrides)]


def committed_summary(store, principal, **overrides):
    op = proposed(store, principal, summary_inputs(principal, **overrides), "summarize_related")
    return approve(store, principal, op, DAY_ONE)

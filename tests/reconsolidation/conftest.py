"""Fixtures of the reconsolidation suite: processing switched on, a store, a fixed clock."""
from __future__ import annotations

from datetime import timedelta

import pytest

from reconsolidation.store import ReconsolidationStore
from tests.factories import T0


@pytest.fixture
def enabled(settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    return settings


@pytest.fixture
def store() -> ReconsolidationStore:
    def clock():  # services always receive an explicit now in these tests
        raise AssertionError("the store read the wall clock")

    return ReconsolidationStore(clock=clock)


@pytest.fixture
def day_one():
    """An instant after the daily due time (03:00 UTC) of the day after the bank was built."""
    return T0 + timedelta(days=1)

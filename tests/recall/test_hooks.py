"""The read-time hook (recall.hooks): reconsolidation registers its view when the app loads,
and with no view registered recall is plain atomic recall, whatever the reconsolidation
switch says."""
from __future__ import annotations

from datetime import timedelta

import pytest

from recall import hooks
from reconsolidation import read_paths
from tests.factories import T0
from tests.recall.helpers import bank  # noqa: F401 (the bank fixture)
from tests.reconsolidation.recall_builders import merge

QUERY = "passport renewal"
SAME = "The passport renewal is due in March."


def _whole(result) -> dict:
    return {**result.model_dump(exclude={"trace_id"}), "stages": result.stages.model_dump()}


def test_reconsolidation_registers_its_read_time_view_at_start_up():
    assert hooks._view is read_paths.reconsolidate


def test_a_second_different_view_is_refused_and_the_same_one_again_is_harmless():
    with pytest.raises(ValueError, match="already registered"):
        hooks.register(lambda **facts: None)
    assert hooks.register(read_paths.reconsolidate) is read_paths.reconsolidate
    assert hooks._view is read_paths.reconsolidate


def test_without_a_registered_view_recall_is_plain_atomic_recall(bank, settings, monkeypatch):
    dupes = [bank.add(SAME, subject="passport", at=T0 + timedelta(hours=n)) for n in range(3)]
    merge(bank.principal, *dupes, now=T0 + timedelta(days=2))
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    switched_off = bank.recall(QUERY, max_items=10)
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    assert bank.recall(QUERY, max_items=10).stages.suppressed_ids  # the registered view is at work
    monkeypatch.setattr(hooks, "_view", None)
    assert _whole(bank.recall(QUERY, max_items=10)) == _whole(switched_off)

"""``manage.py dream``: its options and exact JSON keys are an external interface; it runs
real slices (the rules provider through ``reconsolidation.work.process``), refuses a bad owner or a
disabled switch before writing anything, and its dry run writes nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.factories import make_owner
from tests.reconsolidation.helpers import original, snapshot
from tests.reconsolidation.slices import owner_row_counts, pairs, row_counts
from veetbot.rls import owner_context

SLICE_KEYS = ["slice", "anchors_scanned", "groups_selected", "groups_deferred", "operations", "spend_usd",
              "calls", "input_tokens", "output_tokens", "generation_complete", "seconds", "coverage"]


def dream(*args: str) -> list[dict]:
    out = StringIO()
    call_command("dream", *args, stdout=out, stderr=StringIO())
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


@pytest.fixture
def bank(db):
    principal, _ = make_owner()
    memories = pairs(principal, 3)
    twin = original(principal, "The apples stay in the garage.", subject="apples")  # an exact duplicate
    return principal, memories, twin


def owner_arg(principal) -> str:
    return f"{principal.tenant_id}/{principal.principal_id}"


def test_once_json_prints_one_object_per_slice_with_exactly_the_interface_keys(bank, enabled):
    principal, memories, twin = bank
    (line,) = dream("--once", "--owner", owner_arg(principal), "--json")
    assert list(line) == SLICE_KEYS
    assert line["slice"] == 1 and line["anchors_scanned"] == len(memories) + 1
    assert 1 <= line["groups_selected"] <= 4 and line["groups_deferred"] >= 0
    assert isinstance(line["generation_complete"], bool) and isinstance(line["spend_usd"], str)
    assert float(line["spend_usd"]) > 0  # the rules provider reserves the minimum quantum per call
    for operation in line["operations"]:
        key = "members" if operation["kind"] == "merge_equivalent" else "support"
        assert list(operation) == ["id", "kind", "state", key]
        assert all(uuid.UUID(i) for i in operation[key]) and len(operation[key]) >= 2
    merges = [op for op in line["operations"] if op["kind"] == "merge_equivalent"]
    assert [sorted(op["members"]) for op in merges] == [sorted([str(memories[0].id), str(twin.id)])]


def test_until_idle_terminates_and_its_last_slice_reports_the_generation_complete(bank, enabled):
    principal, *_ = bank
    lines = dream("--until-idle", "--owner", owner_arg(principal), "--json")
    assert [line["slice"] for line in lines] == list(range(1, len(lines) + 1))
    assert lines[-1]["generation_complete"] and lines[-1]["groups_deferred"] == 0
    assert all(list(line) == SLICE_KEYS for line in lines)
    last = lines[-1]["coverage"]
    assert last["scan"]["complete"] and last["scan"]["read"] == last["scan"]["of"]
    assert last["model"]["complete"] and last["model"]["processed"] == last["model"]["groupable_anchors"] > 0
    assert last["model"]["coverage"] == 1.0
    assert dream("--until-idle", "--owner", owner_arg(principal), "--json") == []  # idle: nothing due


def test_human_output_names_counts_and_states_never_content(bank, enabled):
    principal, *_ = bank
    out = StringIO()
    call_command("dream", "--once", "--owner", owner_arg(principal), stdout=out, stderr=StringIO())
    text = out.getvalue()
    assert text.startswith("slice 1: ") and "anchors scanned" in text
    assert "garage" not in text and "apples" not in text


def test_a_malformed_or_unknown_owner_is_refused_and_nothing_is_written(bank, enabled):
    principal, *_ = bank
    before = row_counts()
    with pytest.raises(CommandError, match="--owner must be"):
        dream("--once", "--owner", "not-an-owner")
    stranger = f"{uuid.uuid4()}/{uuid.uuid4()}"
    with pytest.raises(CommandError, match="no such owner"):
        dream("--once", "--owner", stranger)
    assert row_counts() == before  # not even an owner lock for the stranger


def test_the_processing_switch_off_is_a_clear_error_and_writes_nothing(bank, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    principal, *_ = bank
    before = snapshot(principal)
    for mode in ("--once", "--until-idle", "--dry-run"):
        with pytest.raises(CommandError, match="AGENT_MEMORY_RECONSOLIDATION_ENABLED=true"):
            dream(mode, "--owner", owner_arg(principal))
    assert snapshot(principal) == before


def test_a_mode_is_required_and_dry_run_does_not_combine_with_until_idle(bank, enabled):
    principal, *_ = bank
    with pytest.raises(CommandError, match="--once, --until-idle or --dry-run"):
        dream("--owner", owner_arg(principal))
    with pytest.raises(CommandError, match="cannot be combined"):
        dream("--dry-run", "--until-idle", "--owner", owner_arg(principal))


def test_dry_run_json_lists_anchors_groups_and_reasons_and_writes_nothing(bank, enabled):
    principal, memories, twin = bank
    hidden = original(principal, "A restricted note.", subject="apples", sensitivity="restricted")
    before = owner_row_counts(principal)
    (preview,) = dream("--dry-run", "--owner", owner_arg(principal), "--json")
    assert owner_row_counts(principal) == before
    assert preview["dry_run"] and preview["due"] and preview["generation"] == 1
    outcomes = {a["id"]: (a["outcome"], a["reason"]) for a in preview["anchors"]}
    assert outcomes[str(hidden.id)] == ("excluded", "above_sensitivity")
    assert set(outcomes) == {str(m.id) for m in [*memories, twin, hidden]}
    assert 3 <= len(preview["groups"]) <= 4 and all(len(g["members"]) >= 2 for g in preview["groups"])


def test_the_command_exits_non_zero_with_the_message_when_processing_is_off(live_db):
    principal, _ = make_owner()
    env = {**os.environ, "AGENT_MEMORY_RECONSOLIDATION_ENABLED": "false",
           "VEETBOT_DB_NAME": settings.DATABASES["default"]["NAME"]}
    result = subprocess.run(
        [sys.executable, "manage.py", "dream", "--once", "--owner", owner_arg(principal), "--json"],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0 and result.stdout == ""
    assert "AGENT_MEMORY_RECONSOLIDATION_ENABLED=true" in result.stderr
    with owner_context(principal):
        from reconsolidation.models import ReconsolidationJob

        assert not ReconsolidationJob.objects.exists()

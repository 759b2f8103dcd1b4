"""Unattended mode is gated by release evidence: AGENT_MEMORY_RECONSOLIDATION_EVIDENCE must
name a complete report whose recomputed gates pass and whose provider, model, prompt/schema
digests, policy, code and pins match the running configuration (the refusals of the evidence
itself: test_unattended_gate.py). Missing, failing or mismatched evidence refuses at startup
(the dream command and the Celery task) and at every group, before any spend."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reconsolidation import mode
from reconsolidation.evidence import admission
from reconsolidation.models import ReconsolidationSpend
from reconsolidation.work.process import process_group
from tests.factories import make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.evidence.test_unattended_gate import (
    build_report,
    passing_report,
    write_evidence,
)
from tests.reconsolidation.work_builders import claimed_group
from reconsolidation.services.operations import operation_approve
from veetbot.rls import owner_context


def report(path, *, passed=True, **provider):
    """A genuine report (passing, or failing its lift gate) with provider fields overridden."""
    evidence = passing_report() if passed else build_report(lift=False)
    evidence["provider"].update(provider)
    return write_evidence(path, evidence)


@pytest.fixture
def unattended(settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_MODE = "unattended"
    settings.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = ""
    return settings


@pytest.mark.parametrize("make, reason", [
    (lambda tmp: "", "evidence_missing"),
    (lambda tmp: str(tmp / "absent.json"), "evidence_unreadable"),
    (lambda tmp: report(tmp / "r.json", passed=False), "evidence_gate_failed"),
    (lambda tmp: report(tmp / "r.json", name="openai"), "evidence_name_mismatch"),
    (lambda tmp: report(tmp / "r.json", model="rules@0"), "evidence_model_mismatch"),
    (lambda tmp: report(tmp / "r.json", prompt_digest="0" * 64), "evidence_prompt_digest_mismatch"),
    (lambda tmp: report(tmp / "r.json", schema_digest="0" * 64), "evidence_schema_digest_mismatch"),
    (lambda tmp: report(tmp / "r.json", policy="other@1"), "evidence_policy_mismatch"),
])
def test_unattended_is_refused_without_matching_passing_evidence(unattended, tmp_path, make, reason):
    unattended.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = make(tmp_path)
    with pytest.raises(mode.UnattendedRefused, match="AGENT_MEMORY_RECONSOLIDATION_EVIDENCE") as refused:
        mode.current_mode()
    assert refused.value.reason == reason


def test_matching_passing_evidence_permits_unattended_and_commits_directly(db, enabled, unattended, store, day_one,
                                                                           tmp_path):
    unattended.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = report(tmp_path / "r.json")
    assert mode.check_startup() == "unattended"
    owner = make_owner()[0]
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    lease, group = claimed_group(store, owner, [a, b], day_one)
    assert [op.state for op in process_group(store, owner, group, now=day_one)] == ["committed"]


def test_an_auto_committed_operation_is_told_from_an_owner_approved_one_and_loses_admission_with_its_evidence(
        db, enabled, unattended, store, day_one, tmp_path):
    """What read paths key on: an unattended commit has no ``operation_approved`` audit, an
    owner-approved one has; ``unattended_admitted`` drops as soon as the evidence file changes."""
    from reconsolidation.models import ReconsolidationAudit

    path = tmp_path / "r.json"
    unattended.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = report(path)
    owner = make_owner()[0]
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    automatic = process_group(store, owner, claimed_group(store, owner, [a, b], day_one)[1], now=day_one)[0]
    unattended.AGENT_MEMORY_RECONSOLIDATION_MODE = "reviewed"
    other = make_owner()[0]
    c = original(other, "The owner prefers Celsius.", subject="units")
    d = original(other, "The owner prefers Celsius.", subject="units")
    proposed = process_group(store, other, claimed_group(store, other, [c, d], day_one)[1], now=day_one)[0]
    approved = operation_approve(principal=other, operation_id=proposed.id, expected_revision=proposed.revision, idempotency_key="k", now=day_one)
    assert automatic.state == approved.state == "committed"
    events = {}
    for principal, op in ((owner, automatic.id), (other, approved.id)):
        with owner_context(principal):
            events[op] = set(ReconsolidationAudit.objects.filter(operation_id=op).values_list("event", flat=True))
    assert events[automatic.id] == {"operation_committed"}
    assert events[approved.id] == {"operation_proposed", "operation_approved"}
    assert admission.unattended_admitted()
    path.write_text(path.read_text().replace('"passed": true', '"passed": false', 1))
    assert not admission.unattended_admitted()


def test_every_group_rechecks_the_evidence_before_any_spend(db, enabled, unattended, store, day_one, tmp_path):
    owner = make_owner()[0]
    a = original(owner, "The owner prefers Celsius.", subject="units")
    b = original(owner, "The owner prefers Celsius.", subject="units")
    lease, group = claimed_group(store, owner, [a, b], day_one)
    unattended.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = report(tmp_path / "r.json", model="other")  # changed mid-slice
    with pytest.raises(mode.UnattendedRefused):
        process_group(store, owner, group, now=day_one)
    with owner_context(owner):
        assert not ReconsolidationSpend.objects.exists()


def test_the_dream_command_refuses_unattended_at_startup_with_a_clear_message(db, enabled, unattended):
    owner = make_owner()[0]
    with pytest.raises(CommandError, match="unattended is refused.*evidence_missing"):
        call_command("dream", "--once", "--owner", f"{owner.tenant_id}/{owner.principal_id}", stdout=StringIO(),
                     stderr=StringIO())


def test_the_celery_task_refuses_unattended_at_startup_before_any_claim(db, enabled, unattended):
    from reconsolidation import tasks
    from reconsolidation.models import ReconsolidationJob

    owner = make_owner()[0]
    original(owner, "The owner prefers Celsius.", subject="units")
    original(owner, "The owner prefers Celsius.", subject="units")
    result = tasks.dream_owner(str(owner.tenant_id), str(owner.principal_id))
    assert result == {"enabled": True, "slices": 0, "stopped": "mode_refused", "reason": "evidence_missing"}
    with owner_context(owner):
        assert not ReconsolidationJob.objects.filter(lease_token__isnull=False).exists()  # nothing claimed
        assert not ReconsolidationSpend.objects.exists()

"""The batch executor and the adapter path through process_group: a real OpenAI-compatible
server on 127.0.0.1 answering proposal then verification from the request it received;
cancellation on the kill switch and on a lost lease with the reservation settled or fully
charged, and no memory changed."""
from __future__ import annotations

import json
import threading
import time
import uuid
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connections

from memory.models import Memory
from reconsolidation.work.admission import (
    ReconsolidationRequestAdmission,
    clear_shutdown,
    request_shutdown,
)
from reconsolidation.errors import LeaseLost
from reconsolidation.work.executor import ReconsolidationBatchExecutor
from reconsolidation.models import ReconsolidationGroup, ReconsolidationOperation, ReconsolidationSpend
from reconsolidation.providers.contract import ProviderFailure
from reconsolidation.providers.openai import WORKER_NAME, forget_models_checks
from reconsolidation.providers.scripted import scripted_config
from reconsolidation.store import ReconsolidationStore
from reconsolidation.work.process import process_group
from tests.factories import make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.providers.sse_server import (
    DONE, MODEL, Answering, Scenario, SSEServer, chunk, openai_server, valid_events,
)
from tests.reconsolidation.work_builders import claimed_group
from veetbot.rls import owner_context


@pytest.fixture(autouse=True)
def fresh_process_state():
    forget_models_checks()
    clear_shutdown()
    yield
    forget_models_checks()
    clear_shutdown()


@pytest.fixture
def owner(db):
    return make_owner()[0]


@pytest.fixture
def openai(settings, monkeypatch):
    with openai_server(settings, monkeypatch) as server:
        yield server


def three(owner):
    return (original(owner, "The owner prefers Celsius.", subject="units"),
            original(owner, "The owner prefers  Celsius.", subject="units"),
            original(owner, "The owner reads temperatures in the morning.", subject="units"))


def snapshot(owner):
    with owner_context(owner):
        return sorted(map(repr, Memory.objects.values_list()))


def test_configured_openai_provider_runs_end_to_end_through_process_group(owner, enabled, store, day_one, openai):
    memories = three(owner)
    before = snapshot(owner)
    openai.answer(Answering(openai))
    lease, group = claimed_group(store, owner, memories, day_one)
    ops = process_group(store, owner, group, now=day_one)
    assert sorted(op.kind for op in ops) == ["infer_connection", "merge_equivalent", "summarize_related"]
    assert {op.state for op in ops} == {"proposed"}
    assert [(m, p) for m, p, *_ in openai.requests] == [
        ("GET", "/v1/models"), ("POST", "/v1/chat/completions"), ("POST", "/v1/chat/completions")]
    with owner_context(owner):
        spends = list(ReconsolidationSpend.objects.order_by("reserved_at"))
        assert [(s.call_audit["stage"], s.state) for s in spends] == [("proposal", "settled"), ("verification", "settled")]
        assert all(s.charged_usd < s.maximum_usd for s in spends)  # verified usage released the rest
        assert ReconsolidationGroup.objects.get().state == "completed"
    assert snapshot(owner) == before  # originals are never touched


@pytest.mark.parametrize("stage", ["proposal", "verification"])
def test_a_5xx_at_either_stage_fails_the_group_fully_charged_and_records_nothing(owner, enabled, store, day_one,
                                                                               openai, stage):
    memories = three(owner)
    before = snapshot(owner)
    openai.answer(Answering(openai, fail_stage=stage))
    lease, group = claimed_group(store, owner, memories, day_one)
    assert process_group(store, owner, group, now=day_one) == ()
    with owner_context(owner):
        spends = list(ReconsolidationSpend.objects.order_by("reserved_at"))
        assert spends[-1].state == "unknown" and spends[-1].charged_usd == spends[-1].maximum_usd
        assert spends[-1].call_audit["stage"] == stage
        assert not ReconsolidationOperation.objects.exists()
        group_row = ReconsolidationGroup.objects.get()
        assert group_row.reason == "http_server_error"
    assert snapshot(owner) == before


def test_unready_openai_provider_defers_the_group_without_any_spend(owner, enabled, store, day_one, openai, settings):
    settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK = None  # unknown price
    lease, group = claimed_group(store, owner, three(owner), day_one)
    assert process_group(store, owner, group, now=day_one) == ()
    with owner_context(owner):
        assert not ReconsolidationSpend.objects.exists()
        assert (ReconsolidationGroup.objects.get().state, ReconsolidationGroup.objects.get().reason) == (
            "pending", "provider_not_ready")
    assert openai.requests == []


class Hanging:
    """A provider that runs ``during`` and then waits for the executor to cancel it."""

    def __init__(self, during):
        self.config = scripted_config()
        self.during, self.calls = during, 0

    def complete(self, prepared, *, cancel=None):
        self.calls += 1
        self.during()
        cancelled = cancel.wait(10)
        return ProviderFailure(request_digest=prepared.digest, reason="cancelled" if cancelled else "timeout",
                               transport_outcome="cancelled" if cancelled else "timeout", elapsed_ms=0)


def test_the_kill_switch_cancels_the_call_and_the_reservation_stays_fully_charged(owner, enabled, store, day_one,
                                                                                 settings):
    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    provider = Hanging(lambda: setattr(settings, "AGENT_MEMORY_RECONSOLIDATION_ENABLED", False))
    lease, group = claimed_group(store, owner, three(owner), day_one)
    assert process_group(store, owner, group, now=day_one, provider=provider) == ()
    assert provider.calls == 1
    with owner_context(owner):
        (spend,) = ReconsolidationSpend.objects.all()
        assert (spend.state, spend.charged_usd) == ("unknown", spend.maximum_usd)
        assert spend.call_audit["completion"]["transport_outcome"] == "cancelled"
        row = ReconsolidationGroup.objects.get()
        assert (row.state, row.reason) == ("pending", "kill_switch")  # deferred, not failed
        assert not ReconsolidationOperation.objects.exists()


def test_a_lost_lease_cancels_the_call_and_the_reservation_stays_fully_charged(live_db, enabled, settings, day_one):
    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    settings.RECON_RENEW_SECONDS = 0.05
    owner = make_owner()[0]
    store = ReconsolidationStore(clock=lambda: day_one)
    lease, group = claimed_group(store, owner, three(owner), day_one)

    def steal():  # another process ends the slice's lease while the call runs
        def work():
            try:
                store.release(owner, lease.lease_token, now=day_one)
            finally:
                connections.close_all()
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()

    provider = Hanging(steal)
    with pytest.raises(LeaseLost):
        process_group(store, owner, group, now=day_one, provider=provider)
    with owner_context(owner):
        (spend,) = ReconsolidationSpend.objects.all()
        assert spend.charged_usd == spend.maximum_usd and spend.state != "settled"
        assert not ReconsolidationOperation.objects.exists()


def spends_of(owner):
    with owner_context(owner):
        return list(ReconsolidationSpend.objects.order_by("reserved_at"))


def group_row(owner):
    with owner_context(owner):
        row = ReconsolidationGroup.objects.get()
        return row.state, row.reason


BROKEN = {
    "malformed": (Scenario([b"data: {oops\n\n", DONE]), "malformed_stream"),
    "duplicate-key": (Scenario([b'data: {"id": "a", "id": "a", "choices": []}\n\n', DONE]), "malformed_stream"),
    "oversized": (Scenario(valid_events("x" * 70000, pieces=10)), "response_too_large"),
    "truncated": (Scenario([chunk(role="assistant", content=""), chunk(content="{")]), "interrupted"),
    "slow": (Scenario(valid_events("{}"), delay_before=4.0), "idle_timeout"),
    "5xx": (Scenario(status=503), "http_server_error"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_proposal_stream_fails_the_group_fully_charged_and_changes_no_memory(
        owner, enabled, store, day_one, openai, settings, name):
    scenario, reason = BROKEN[name]
    settings.RECON_PROVIDER_IDLE_SECONDS = 1.0
    memories = three(owner)
    before = snapshot(owner)
    openai.answer(scenario)
    lease, group = claimed_group(store, owner, memories, day_one)
    assert process_group(store, owner, group, now=day_one) == ()
    (spend,) = spends_of(owner)  # no verification call after a refused proposal
    assert (spend.state, spend.charged_usd) == ("unknown", spend.maximum_usd)
    assert spend.call_audit["completion"]["input_tokens"] is None
    assert group_row(owner) == ("pending", reason)  # failed once: retried later under the retry policy
    with owner_context(owner):
        assert not ReconsolidationOperation.objects.exists()
    assert snapshot(owner) == before


def test_the_models_check_runs_once_per_process_not_once_per_group(owner, enabled, store, day_one, openai):
    openai.answer(Answering(openai))
    first = three(owner)
    lease, group = claimed_group(store, owner, first, day_one)
    assert process_group(store, owner, group, now=day_one)
    store.release(owner, lease.lease_token, now=day_one)
    second = (original(owner, "The owner cycles to the office.", subject="commute"),
              original(owner, "The owner cycles  to the office.", subject="commute"),
              original(owner, "The owner keeps a spare tube in the bag.", subject="commute"))
    lease, group = claimed_group(store, owner, second, day_one)
    assert process_group(store, owner, group, now=day_one)
    assert [m for m, *_ in openai.requests] == ["GET", "POST", "POST", "POST", "POST"]


def test_a_model_the_endpoint_does_not_list_defers_the_group_before_any_spend(owner, enabled, store, day_one, openai):
    openai.answer(Scenario(models=("another-model",)))
    lease, group = claimed_group(store, owner, three(owner), day_one)
    assert process_group(store, owner, group, now=day_one) == ()
    assert spends_of(owner) == []
    assert group_row(owner) == ("pending", "model_unavailable")
    assert [m for m, *_ in openai.requests] == ["GET"]


def provider_workers():
    return [t for t in threading.enumerate() if t.name in (WORKER_NAME, "reconsolidation-provider") and t.is_alive()]


def test_the_kill_switch_closes_a_real_stream_and_no_thread_keeps_reading(owner, enabled, store, day_one, openai,
                                                                         settings):
    settings.RECON_PROVIDER_IDLE_SECONDS, settings.RECON_PROVIDER_CALL_SECONDS = 8.0, 30.0
    openai.answer(Scenario([chunk(content="x")] * 400, delay_between=0.05))  # a 20 s drip
    lease, group = claimed_group(store, owner, three(owner), day_one)
    switch = threading.Timer(0.5, lambda: setattr(settings, "AGENT_MEMORY_RECONSOLIDATION_ENABLED", False))
    started = time.monotonic()
    switch.start()
    assert process_group(store, owner, group, now=day_one) == ()
    returned = time.monotonic()
    assert returned - started < 6.0  # far below the drip; the bounds are for a loaded 2-CPU machine
    assert provider_workers() == []
    (spend,) = spends_of(owner)
    assert (spend.state, spend.charged_usd) == ("unknown", spend.maximum_usd)
    assert spend.call_audit["completion"]["transport_outcome"] == "cancelled"
    assert group_row(owner) == ("pending", "kill_switch")
    while not openai.disconnects and time.monotonic() < returned + 3.0:
        time.sleep(0.02)
    assert openai.disconnects  # the server saw its stream closed, long before its 20 s end


def test_shutdown_cancels_the_call_settles_it_and_admits_nothing_more(owner, enabled, store, day_one, settings):
    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    provider = Hanging(request_shutdown)
    lease, group = claimed_group(store, owner, three(owner), day_one)
    assert process_group(store, owner, group, now=day_one, provider=provider) == ()
    (spend,) = spends_of(owner)
    assert (spend.state, spend.charged_usd) == ("unknown", spend.maximum_usd)
    assert spend.call_audit["completion"]["transport_outcome"] == "cancelled"
    assert group_row(owner) == ("pending", "shutdown")
    store.release(owner, lease.lease_token, now=day_one)  # the next slice claims the deferred group again
    later = store.claim_due(owner, lease_owner="w", now=day_one)
    again = store.claim_group(owner, lease_token=later.lease_token, now=day_one)
    assert process_group(store, owner, again, now=day_one, provider=provider) == ()
    assert provider.calls == 1 and len(spends_of(owner)) == 1  # deferred at admission: nothing reserved
    assert group_row(owner) == ("pending", "shutdown")


def admitted_hanging_call(store, owner, day_one, settings, *, at=None):
    """A hanging scripted call admitted (reserved) for a freshly claimed group, at ``at``."""
    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    provider = Hanging(lambda: None)
    lease, group = claimed_group(store, owner, three(owner), day_one)
    admission = ReconsolidationRequestAdmission(store, owner, provider.config).admit_proposal(
        [group], batch_id=uuid.uuid4(), now=at or day_one)
    return provider, group, admission


def fully_charged_and_cancelled(owner):
    (spend,) = spends_of(owner)
    return ((spend.state, spend.charged_usd, spend.call_audit["completion"]["transport_outcome"])
            == ("unknown", spend.maximum_usd, "cancelled"))


def test_an_interrupt_during_the_call_cancels_and_settles_before_it_propagates(owner, enabled, store, day_one,
                                                                              settings):
    provider, group, admission = admitted_hanging_call(store, owner, day_one, settings)
    ticks = iter(range(1000))

    def monotonic():  # Ctrl-C arrives at the watcher's third look at the clock
        if next(ticks) == 3:
            raise KeyboardInterrupt
        return 0.0

    executor = ReconsolidationBatchExecutor(store, owner, provider, monotonic=monotonic)
    with pytest.raises(KeyboardInterrupt):
        executor.execute(admission, now=day_one)
    assert provider_workers() == []
    assert fully_charged_and_cancelled(owner)


@pytest.mark.parametrize("started_after, jump, reason", [
    (115, 6.0, "slice_deadline"),  # the slice's 120 s ceiling falls inside the call
    (0, 32.0, "call_limit"),  # the executor's backstop just past the 30 s call limit
])
def test_the_slice_ceiling_and_the_call_backstop_cancel_a_running_call(owner, enabled, store, day_one, settings,
                                                                      started_after, jump, reason):
    at = day_one + timedelta(seconds=started_after)
    provider, group, admission = admitted_hanging_call(store, owner, day_one, settings, at=at)
    ticks = iter(range(10_000))
    executor = ReconsolidationBatchExecutor(store, owner, provider, renew_seconds=1000,
                                            monotonic=lambda: 0.0 if next(ticks) < 3 else jump)
    run = executor.execute(admission, now=at)
    assert run.cancelled == reason and run.result.reason == "cancelled"
    assert fully_charged_and_cancelled(owner)


def test_dream_once_runs_end_to_end_with_the_openai_provider_against_a_local_server(db, enabled, openai):
    owner = make_owner()[0]
    memories = three(owner)
    before = snapshot(owner)
    openai.answer(Answering(openai))
    out = StringIO()
    call_command("dream", "--once", "--owner", f"{owner.tenant_id}/{owner.principal_id}", "--json", stdout=out,
                 stderr=StringIO())
    (line,) = [json.loads(text) for text in out.getvalue().splitlines() if text.strip()]
    assert line["groups_selected"] >= 1 and float(line["spend_usd"]) > 0
    kinds = sorted(op["kind"] for op in line["operations"])
    assert "summarize_related" in kinds and {op["state"] for op in line["operations"]} == {"proposed"}
    methods = [(m, path) for m, path, *_ in openai.requests]
    assert methods[0] == ("GET", "/v1/models") and methods.count(("GET", "/v1/models")) == 1
    assert methods.count(("POST", "/v1/chat/completions")) == 2  # one proposal, one verification for the slice
    for _, _, _, raw in openai.requests[1:]:
        body = json.loads(raw)
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
        assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"]
    assert {str(m.id) for m in memories} >= {i for op in line["operations"] for i in op.get("members", [])}
    spends = spends_of(owner)
    assert spends and all(s.state == "settled" and s.charged_usd < s.maximum_usd for s in spends)
    assert snapshot(owner) == before


def test_settlement_that_cannot_finish_within_its_bound_stops_the_batch_and_keeps_the_full_charge(
        live_db, enabled, settings, day_one, monkeypatch):
    from reconsolidation.work import executor as executor_module
    from reconsolidation.models import ReconsolidationJob
    from reconsolidation.providers.scripted import Recording, ScriptedProvider

    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    monkeypatch.setattr(executor_module, "RECON_SETTLEMENT_SECONDS", 0.5)
    owner = make_owner()[0]
    store = ReconsolidationStore(clock=lambda: day_one)
    lease, group = claimed_group(store, owner, three(owner), day_one)
    provider = ScriptedProvider([Recording(failure="http_server_error")])
    admission = ReconsolidationRequestAdmission(store, owner, provider.config).admit_proposal(
        [group], batch_id=uuid.uuid4(), now=day_one)
    held, release = threading.Event(), threading.Event()

    def hold_the_job_row():  # another transaction sits on the slice's job row past the bound
        try:
            with owner_context(owner):
                ReconsolidationJob.objects.select_for_update().get(lease_token=lease.lease_token)
                held.set()
                release.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_job_row)
    holder.start()
    assert held.wait(10)
    started = time.monotonic()
    try:
        run = ReconsolidationBatchExecutor(store, owner, provider).execute(admission, now=day_one)
    finally:
        release.set()
        holder.join()
    assert time.monotonic() - started < 4.0
    assert (run.cancelled, run.receipt) == ("settlement_failed", None)
    (spend,) = spends_of(owner)
    assert (spend.state, spend.charged_usd) == ("reserved", spend.maximum_usd)  # recovery marks it unknown


def test_the_lease_is_renewed_while_a_call_runs(owner, enabled, store, day_one, settings):
    from reconsolidation.models import ReconsolidationJob

    provider, group, admission = admitted_hanging_call(store, owner, day_one, settings)
    with owner_context(owner):
        before = ReconsolidationJob.objects.get().lease_expires_at
    clock = iter(range(10_000))
    cancel_after = 50  # ticks of 0.01 s: a renewal is due every 0.1 s of the fake clock

    def monotonic():
        tick = next(clock)
        if tick == cancel_after:
            settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False  # end the call: the kill switch
        return tick * 0.01

    run = ReconsolidationBatchExecutor(store, owner, provider, renew_seconds=0.1, monotonic=monotonic).execute(
        admission, now=day_one)
    assert run.cancelled == "kill_switch"
    with owner_context(owner):
        after = ReconsolidationJob.objects.get().lease_expires_at
    assert after > before  # renewed at the call's own instants, as the fake clock advanced


def holding_the_owner_lock(owner, seconds):
    """Another transaction holds the owner lock for ``seconds`` (started, and held, on return)."""
    from memory.services.owner_state import lock_owner

    held = threading.Event()

    def hold():
        try:
            with owner_context(owner):
                lock_owner(owner)
                held.set()
                time.sleep(seconds)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    return holder


@pytest.mark.parametrize("before_deadline, admitted", [(30.0, True), (0.3, False)])
def test_admission_samples_its_instant_after_the_lock_wait(live_db, enabled, settings, day_one, before_deadline,
                                                           admitted):
    from reconsolidation.work.admission import Admission, NotAdmitted

    settings.RECON_SCRIPTED_PROVIDER_ALLOWED = True
    owner = make_owner()[0]
    store = ReconsolidationStore(clock=lambda: day_one)
    lease, group = claimed_group(store, owner, three(owner), day_one)
    now = group.slice_deadline_at - timedelta(seconds=before_deadline)
    holder = holding_the_owner_lock(owner, 1.0)
    try:
        result = ReconsolidationRequestAdmission(store, owner, Hanging(lambda: None).config).admit_proposal(
            [group], batch_id=uuid.uuid4(), now=now)
    finally:
        holder.join()
    if admitted:  # reserved at the instant the lock was held, not the instant admission began
        assert isinstance(result, Admission) and result.reservation.reserved_at >= now + timedelta(seconds=0.5)
    else:  # the wait carried the request past the slice's ceiling: nothing reserved
        assert result == NotAdmitted("slice_deadline") and spends_of(owner) == []


def test_manage_py_dream_once_with_the_openai_environment_runs_against_a_local_server(live_db):
    """The environment names are an interface: set only through them, in a separate process."""
    import os
    import subprocess
    import sys

    from django.conf import settings as django_settings

    owner = make_owner()[0]
    three(owner)
    before = snapshot(owner)
    with SSEServer() as server:
        server.answer(Answering(server))
        env = {**os.environ, "VEETBOT_DB_NAME": django_settings.DATABASES["default"]["NAME"],
               "AGENT_MEMORY_RECONSOLIDATION_ENABLED": "true", "AGENT_MEMORY_RECONSOLIDATION_PROVIDER": "openai",
               "VEETBOT_OPENAI_BASE_URL": server.base_url, "VEETBOT_OPENAI_MODEL": MODEL,
               "VEETBOT_OPENAI_INPUT_USD_PER_MTOK": "2.5", "VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK": "10"}
        for name in ("VEETBOT_OPENAI_KEY", "OPENAI_API_KEY", "AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER",
                     "AGENT_MEMORY_RECONSOLIDATION_MODE"):
            env.pop(name, None)
        result = subprocess.run(
            [sys.executable, "manage.py", "dream", "--once", "--owner", f"{owner.tenant_id}/{owner.principal_id}",
             "--json"], cwd=django_settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=180)
        requests = [(m, path) for m, path, *_ in server.requests]
    assert result.returncode == 0, result.stderr[-2000:]
    (line,) = [json.loads(text) for text in result.stdout.splitlines() if text.strip()]
    assert line["groups_selected"] >= 1 and line["operations"] and float(line["spend_usd"]) > 0
    assert requests[0] == ("GET", "/v1/models") and requests.count(("GET", "/v1/models")) == 1
    assert requests.count(("POST", "/v1/chat/completions")) == 2  # one proposal, one verification for the slice
    assert snapshot(owner) == before

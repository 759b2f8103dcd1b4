"""The batch executor and the adapter path through process_group: a real OpenAI-compatible
server on 127.0.0.1 answering proposal then verification from the request it received;
cancellation on the kill switch and on a lost lease with the reservation settled or fully
charged, and no memory changed."""
from __future__ import annotations

import json
import threading

import pytest
from django.db import connections

from evals.reconsolidation.responder import propose, verify
from memory.models import Memory
from reconsolidation.errors import LeaseLost
from reconsolidation.models import ReconsolidationGroup, ReconsolidationOperation, ReconsolidationSpend
from reconsolidation.providers.contract import ProviderFailure
from reconsolidation.providers.scripted import scripted_config
from reconsolidation.store import ReconsolidationStore
from reconsolidation.work import process_group
from tests.factories import make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.providers.sse_server import MODEL, Scenario, SSEServer, chunk, DONE
from tests.reconsolidation.work_builders import claimed_group
from veetbot.rls import owner_context


class Answering(Scenario):
    """Answers each chat call from the request it carries (the heuristic responder's logic),
    with usage inside the request's own bounds."""

    def __init__(self, server, *, fail_stage=None, status=502):
        super().__init__()
        self.server, self.fail_stage, self.failing_status = server, fail_stage, status

    @property
    def events(self):
        body = json.loads(self.server.requests[-1][3])
        document = json.loads(body["messages"][1]["content"])
        reply = propose(document) if document["stage"] == "proposal" else verify(document)
        text = json.dumps(reply, ensure_ascii=False)
        prompt, completion = len(body["messages"][1]["content"]) // 2, len(text) // 4
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        return [chunk(role="assistant", content=""), chunk(content=text), chunk(finish="stop"),
                chunk(usage=usage, choices=False), DONE]

    @events.setter
    def events(self, value):
        pass

    @property
    def status(self):
        if self.fail_stage and self.server.requests:
            document = json.loads(json.loads(self.server.requests[-1][3])["messages"][1]["content"])
            if document["stage"] == self.fail_stage:
                return self.failing_status
        return 200

    @status.setter
    def status(self, value):
        pass


@pytest.fixture
def owner(db):
    return make_owner()[0]


@pytest.fixture
def openai(settings, monkeypatch):
    monkeypatch.delenv("VEETBOT_OPENAI_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with SSEServer() as server:
        settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER = "openai"
        settings.VEETBOT_OPENAI_BASE_URL, settings.VEETBOT_OPENAI_MODEL = server.base_url, MODEL
        settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK, settings.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = "2.5", "10"
        settings.AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER = ""
        settings.RECON_PROVIDER_IDLE_SECONDS, settings.RECON_PROVIDER_CALL_SECONDS = 2.0, 10.0
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

"""The OpenAI-compatible adapter against a real HTTP server on 127.0.0.1: every way a stream can
go wrong ends in a finite reason, never an exception or provider prose."""
from __future__ import annotations

import json
import threading
import time

import pytest

from reconsolidation.providers.contract import FailureReason, ProviderConfig, ProviderFailure, ProviderResponse
from reconsolidation.providers.egress import egress_policy
from reconsolidation.providers.openai import (
    CANCEL_JOIN_SECONDS, WORKER_NAME, OpenAIProvider, ProviderNotConfigured, forget_models_checks, openai_config,
)
from reconsolidation.providers.parser import parse_proposal
from reconsolidation.providers.request import build_proposal_request
from tests.reconsolidation.providers.builders import PRINCIPAL, TENANT, T, merge_proposal, sid, simple_group
from tests.reconsolidation.providers.sse_server import (
    DONE, MODEL, USAGE, Scenario, SSEServer, chunk, valid_events,
)

FAILURES = set(FailureReason.__args__)


@pytest.fixture(autouse=True)
def fresh_models_checks():
    forget_models_checks()
    yield
    forget_models_checks()


@pytest.fixture
def server():
    with SSEServer() as running:
        yield running


@pytest.fixture
def configured(settings, server, monkeypatch):
    monkeypatch.delenv("VEETBOT_OPENAI_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings.VEETBOT_OPENAI_BASE_URL = server.base_url
    settings.VEETBOT_OPENAI_MODEL = MODEL
    settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK = "2.50"
    settings.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = "10"
    settings.AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER = ""
    # Shrunk limits, still generous enough for a loaded 2-CPU machine.
    settings.RECON_PROVIDER_IDLE_SECONDS = 1.0
    settings.RECON_PROVIDER_CALL_SECONDS = 10.0
    return settings


def prepare(cfg: ProviderConfig, pin=""):
    policy = egress_policy(cfg, tenant_id=TENANT, principal_id=PRINCIPAL, prepared_at=T, residency_pin=pin)
    return build_proposal_request(groups=[simple_group("a"), simple_group("b")], config=cfg, policy=policy,
                                  batch_id=sid("batch"))


def call(server, scenario, cfg=None, **kwargs):
    cfg = cfg or openai_config()
    batch = prepare(cfg)
    server.answer(scenario)
    return batch, OpenAIProvider(cfg, **kwargs).complete(batch.request)


def failed(result) -> str:
    assert isinstance(result, ProviderFailure), result
    assert result.reason in FAILURES
    return result.reason


def test_valid_stream_returns_content_and_verified_usage_end_to_end(configured, server):
    cfg = openai_config()
    batch = prepare(cfg)
    content = json.dumps(merge_proposal(batch), ensure_ascii=False)
    server.answer(Scenario(valid_events(content)))
    result = OpenAIProvider(cfg).complete(batch.request)
    assert isinstance(result, ProviderResponse)
    assert result.usage.input_tokens == 900 and result.usage.output_tokens == 120
    assert result.request_digest == batch.request.digest
    assert parse_proposal(result.content, batch.context).ok


def test_wire_request_is_the_openai_compatible_contract(configured, server, monkeypatch):
    monkeypatch.setenv("VEETBOT_OPENAI_KEY", "k-primary")
    monkeypatch.setenv("OPENAI_API_KEY", "k-fallback")
    batch, _ = call(server, Scenario(valid_events("{}")))
    (get, models_path, _, _), (post, path, headers, raw) = server.requests
    assert (get, models_path, post, path) == ("GET", "/v1/models", "POST", "/v1/chat/completions")
    body = json.loads(raw)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["model"] == MODEL and "tools" not in body and body["max_completion_tokens"] == 4096
    assert body["messages"][1] == {"role": "user", "content": batch.request.body.decode()}
    assert headers["Authorization"] == "Bearer k-primary"


def test_key_falls_back_to_openai_api_key_and_a_local_server_may_need_none(configured, server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k-fallback")
    call(server, Scenario(valid_events("{}")))
    assert server.requests[-1][2]["Authorization"] == "Bearer k-fallback"
    monkeypatch.delenv("OPENAI_API_KEY")
    _, result = call(server, Scenario(valid_events("{}")))
    assert result.ok and "Authorization" not in server.requests[-1][2]


def test_models_check_runs_once_before_first_use(configured, server):
    cfg = openai_config()
    provider = OpenAIProvider(cfg)
    batch = prepare(cfg)
    server.answer(Scenario(valid_events("{}")))
    assert provider.complete(batch.request).ok and provider.complete(batch.request).ok
    assert [r[0] for r in server.requests] == ["GET", "POST", "POST"]


def test_models_check_runs_once_per_process_for_a_base_url_and_model_not_per_provider(configured, server):
    cfg = openai_config()
    batch = prepare(cfg)
    server.answer(Scenario(valid_events("{}")))
    for _ in range(3):  # a new adapter per group, as the slice driver makes them
        assert OpenAIProvider(cfg).check_models() is None
        assert OpenAIProvider(cfg).complete(batch.request).ok
    assert [r[0] for r in server.requests] == ["GET", "POST", "POST", "POST"]
    other = cfg.model_copy(update={"model": "other-model"})
    server.answer(Scenario(models=(MODEL, "other-model")))
    assert OpenAIProvider(other).check_models() is None  # another model is checked on its own
    assert [r[0] for r in server.requests][-1] == "GET"


def test_a_failed_models_check_is_not_remembered(configured, server):
    cfg = openai_config()
    server.answer(Scenario(models=("other",)))
    assert OpenAIProvider(cfg).check_models() == "model_unavailable"
    server.answer(Scenario(models=(MODEL,)))
    assert OpenAIProvider(cfg).check_models() is None
    assert [r[0] for r in server.requests] == ["GET", "GET"]


def test_unlisted_model_refuses_before_any_chat_call(configured, server):
    _, result = call(server, Scenario(valid_events("{}"), models=("other",)))
    assert failed(result) == "model_unavailable"
    assert [r[0] for r in server.requests] == ["GET"]


MALFORMED = [
    ("malformed", Scenario([b"data: {not json\n\n", DONE]), "malformed_stream"),
    ("duplicate-key", Scenario([b'data: {"id": "a", "id": "b", "choices": []}\n\n', DONE]), "malformed_stream"),
    ("nan", Scenario([b'data: {"id": "a", "choices": [], "usage": {"prompt_tokens": NaN}}\n\n']), "malformed_stream"),
    ("truncated", Scenario(valid_events("{\"a\": 1}")[:3]), "interrupted"),
    ("no-done", Scenario(valid_events("{}")[:-1]), "interrupted"),
    ("partial-line", Scenario([chunk(content="{"), b'data: {"id": "cm']), "interrupted"),
    ("no-usage", Scenario([chunk(content="{}"), chunk(finish="stop"), DONE]), "usage_missing"),
    ("usage-before-finish", Scenario([chunk(content="{}", usage=USAGE), chunk(finish="stop"), DONE]), "usage_missing"),
    ("usage-total-wrong", Scenario(valid_events("{}", usage={**USAGE, "total_tokens": 5})), "usage_inconsistent"),
    ("usage-zero", Scenario(valid_events("{}", usage={"prompt_tokens": 0, "completion_tokens": 1})), "usage_inconsistent"),
    ("usage-string", Scenario(valid_events("{}", usage={"prompt_tokens": "9", "completion_tokens": 1})),
     "usage_inconsistent"),
    ("output-over-ceiling", Scenario(valid_events("{}", usage={"prompt_tokens": 9, "completion_tokens": 4097})),
     "usage_inconsistent"),
    ("reasoning-over-output", Scenario(valid_events("{}", usage={
        "prompt_tokens": 9, "completion_tokens": 3, "completion_tokens_details": {"reasoning_tokens": 4}})),
     "usage_inconsistent"),
    ("id-changes", Scenario([chunk(content="{"), chunk("cmpl-2", content="}"), chunk("cmpl-2", finish="stop")]),
     "inconsistent_stream"),
    ("second-choice", Scenario([b'data: {"id": "c", "choices": [{"index": 1, "delta": {}}]}\n\n']),
     "inconsistent_stream"),
    ("two-finishes", Scenario([chunk(finish="stop"), chunk(finish="stop")]), "inconsistent_stream"),
    ("length", Scenario([chunk(content="{"), chunk(finish="length"), chunk(usage=USAGE, choices=False), DONE]),
     "output_truncated"),
    ("content-filter", Scenario([chunk(finish="content_filter"), chunk(usage=USAGE, choices=False), DONE]),
     "content_filtered"),
    ("tool-call", Scenario([chunk(tool_calls=[{"index": 0, "id": "t", "type": "function"}])]), "tool_output"),
    ("refusal", Scenario([chunk(refusal="I cannot")]), "refused"),
    ("error-object", Scenario([b'data: {"error": {"message": "secret prose"}}\n\n']), "stream_error"),
    ("not-sse", Scenario([b'{"choices": []}'], content_type="application/json"), "not_event_stream"),
    ("bad-utf8", Scenario([b"data: {\"id\": \"\xff\"}\n\n"]), "malformed_unicode"),
    ("lone-surrogate", Scenario([b'data: {"id": "c", "choices": [{"index": 0, "delta": {"content": "\\ud800"}}]}\n\n']),
     "malformed_unicode"),
    ("data-after-done", Scenario(valid_events("{}") + [chunk(content="x")]), "malformed_stream"),
    ("unknown-field-line", Scenario([b"bogus: 1\n\n"]), "malformed_stream"),
]


@pytest.mark.parametrize("name, scenario, reason", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_broken_streams_end_in_a_finite_reason(configured, server, name, scenario, reason):
    _, result = call(server, scenario)
    assert failed(result) == reason


@pytest.mark.parametrize("status, reason", [
    (500, "http_server_error"), (503, "http_server_error"), (429, "http_rate_limited"), (401, "http_unauthorized"),
    (400, "http_rejected"), (302, "http_unexpected"),
])
def test_http_errors_end_in_a_finite_reason_without_prose(configured, server, status, reason):
    _, result = call(server, Scenario(status=status))
    assert failed(result) == reason
    assert "prose" not in result.model_dump_json()


def test_content_at_the_response_guard_passes_and_one_byte_past_fails(configured, server):
    configured.RECON_RESPONSE_MAX_BYTES = 1000
    _, result = call(server, Scenario(valid_events("x" * 1000)))
    assert result.ok and len(result.content) == 1000
    _, result = call(server, Scenario(valid_events("x" * 1001)))
    assert failed(result) == "response_too_large"


def test_oversized_response_at_the_default_guard_fails(configured, server):
    _, result = call(server, Scenario(valid_events("é" * 40000, pieces=40)))
    assert failed(result) == "response_too_large"


def test_raw_stream_bound_stops_endless_empty_chunks(configured, server):
    configured.RECON_STREAM_MAX_BYTES = 5000
    _, result = call(server, Scenario([chunk(content="")] * 200))
    assert failed(result) == "stream_too_large"


def test_silent_server_trips_the_idle_limit(configured, server):
    configured.RECON_PROVIDER_CALL_SECONDS = 30.0  # only the idle limit can end this call early
    started = time.monotonic()
    _, result = call(server, Scenario(valid_events("{}"), delay_before=5.0))
    assert failed(result) == "idle_timeout" and result.transport_outcome == "timeout"
    assert time.monotonic() - started < 4.0  # idle 1 s, far below the server's 5 s silence


def test_slow_drip_within_idle_limit_trips_the_call_limit(configured, server):
    configured.RECON_PROVIDER_CALL_SECONDS = 0.8
    started = time.monotonic()
    _, result = call(server, Scenario([chunk(content="x")] * 100, delay_between=0.1))  # 10 s of drip
    elapsed = time.monotonic() - started
    assert failed(result) == "timeout" and result.transport_outcome == "timeout"
    assert 0.7 < elapsed < 4.0  # answered at the deadline, not after the 10 s stream


def call_workers() -> list:
    return [t for t in threading.enumerate() if t.name == WORKER_NAME and t.is_alive()]


def test_cancel_event_closes_the_stream_and_leaves_no_worker_reading(configured, server):
    configured.RECON_PROVIDER_CALL_SECONDS = 30.0  # only the cancel can end this 10 s drip early
    cancel = threading.Event()
    cfg = openai_config()
    batch = prepare(cfg)
    assert OpenAIProvider(cfg).check_models() is None
    server.answer(Scenario([chunk(content="x")] * 200, delay_between=0.05))
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    result = OpenAIProvider(cfg).complete(batch.request, cancel=cancel)
    returned = time.monotonic()
    assert failed(result) == "cancelled" and result.transport_outcome == "cancelled"
    assert returned - started < 0.3 + CANCEL_JOIN_SECONDS
    assert call_workers() == []  # the worker was joined, not abandoned
    deadline = returned + 3.0  # the server sees the connection closed at its next writes
    while not server.disconnects and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.disconnects and server.disconnects[0] - returned < 3.0


def test_cancel_while_the_server_is_silent_wakes_the_blocked_read(configured, server):
    # An idle limit longer than the silence: without the socket shutdown the worker would sit
    # in its read until the server spoke or the 8 s idle limit passed.
    configured.RECON_PROVIDER_IDLE_SECONDS, configured.RECON_PROVIDER_CALL_SECONDS = 8.0, 30.0
    cancel = threading.Event()
    cfg = openai_config()
    batch = prepare(cfg)
    assert OpenAIProvider(cfg).check_models() is None
    server.answer(Scenario(valid_events("{}"), delay_before=6.0))
    threading.Timer(0.3, cancel.set).start()
    result = OpenAIProvider(cfg).complete(batch.request, cancel=cancel)
    assert failed(result) == "cancelled"
    assert call_workers() == []


def test_a_cancel_during_the_first_models_check_ends_the_call_before_any_chat_request(configured, server):
    configured.RECON_PROVIDER_IDLE_SECONDS, configured.RECON_PROVIDER_CALL_SECONDS = 8.0, 30.0
    cancel = threading.Event()
    cfg = openai_config()
    batch = prepare(cfg)
    server.answer(Scenario(valid_events("{}"), delay_before=6.0, models_delay=6.0))
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    result = OpenAIProvider(cfg).complete(batch.request, cancel=cancel)
    assert failed(result) == "cancelled" and result.transport_outcome == "cancelled"
    assert time.monotonic() - started < 0.3 + CANCEL_JOIN_SECONDS
    assert [r[0] for r in server.requests] == ["GET"] and call_workers() == []


def test_the_call_limit_closes_the_stream_and_leaves_no_worker_reading(configured, server):
    configured.RECON_PROVIDER_IDLE_SECONDS, configured.RECON_PROVIDER_CALL_SECONDS = 8.0, 0.8
    cfg = openai_config()
    batch = prepare(cfg)
    assert OpenAIProvider(cfg).check_models() is None
    server.answer(Scenario(valid_events("{}"), delay_before=6.0))
    result = OpenAIProvider(cfg).complete(batch.request)
    assert failed(result) == "timeout" and result.transport_outcome == "timeout"
    assert call_workers() == []


def test_unreachable_server_is_connect_failed(configured, server):
    cfg = openai_config()
    batch = prepare(cfg)
    server.httpd.shutdown()
    server.httpd.server_close()
    assert failed(OpenAIProvider(cfg).complete(batch.request)) == "connect_failed"


def test_remote_residency_without_matching_pin_sends_nothing(configured, server, monkeypatch):
    monkeypatch.setenv("VEETBOT_OPENAI_KEY", "k")
    # A config that claims remote residency while pointing at the loopback server, so the
    # test can see whether any byte would have been sent.
    remote = openai_config().model_copy(update={"residency": "remote:api.example.test"})
    batch = prepare(remote, pin="api.example.test")
    server.answer(Scenario(valid_events("{}")))
    for pin in ("", "api.other.test"):
        assert failed(OpenAIProvider(remote, residency_pin=pin).complete(batch.request)) == "residency_unpinned"
    assert server.requests == []
    assert OpenAIProvider(remote, residency_pin="API.example.test").complete(batch.request).ok


def test_remote_endpoint_without_a_key_sends_nothing(configured, server):
    remote = openai_config().model_copy(update={"residency": "remote:api.example.test"})
    batch = prepare(remote, pin="api.example.test")
    assert failed(OpenAIProvider(remote, residency_pin="api.example.test").complete(batch.request)) == "key_missing"
    assert server.requests == []


def test_request_for_another_model_or_price_is_refused_before_sending(configured, server):
    cfg = openai_config()
    batch = prepare(cfg)
    for changed in (cfg.model_copy(update={"model": "other-model"}),
                    cfg.model_copy(update={"output_usd_per_mtok": cfg.output_usd_per_mtok + 1})):
        assert failed(OpenAIProvider(changed).complete(batch.request)) == "binding_mismatch"
    tampered = batch.request.model_copy(update={"body": batch.request.body + b" "})
    assert failed(OpenAIProvider(cfg).complete(tampered)) == "binding_mismatch"
    assert server.requests == []


def test_configuration_refuses_missing_model_and_plain_http_to_a_remote_host(configured):
    configured.VEETBOT_OPENAI_MODEL = ""
    with pytest.raises(ProviderNotConfigured):
        openai_config()
    configured.VEETBOT_OPENAI_MODEL = MODEL
    configured.VEETBOT_OPENAI_BASE_URL = "http://api.example.test/v1"
    with pytest.raises(ProviderNotConfigured):
        openai_config()


def test_loopback_base_url_is_local_residency_and_remote_https_is_pinned_by_host(configured):
    assert openai_config().residency == "local"
    configured.VEETBOT_OPENAI_BASE_URL = "https://API.Example.test/v1"
    assert openai_config().residency == "remote:api.example.test"


def test_unset_or_invalid_prices_are_unknown_and_defer_every_group(configured):
    for value in (None, "", "abc", "-1", "NaN"):
        configured.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = value
        cfg = openai_config()
        assert cfg.output_usd_per_mtok is None
        batch = prepare(cfg)
        assert batch.request is None and {d.reason for d in batch.deferred} == {"unknown_price"}


def test_failures_never_carry_provider_text(configured, server):
    _, result = call(server, Scenario([b'data: {"error": {"message": "secret prose"}}\n\n']))
    assert "secret" not in result.model_dump_json()


def test_a_maximum_length_reply_streamed_one_token_per_event_fits_the_default_stream_bound(configured, server):
    events = ([chunk(role="assistant", content="")] + [chunk(content="x") for _ in range(4095)]
              + [chunk(finish="stop"), chunk(usage={"prompt_tokens": 900, "completion_tokens": 4096}, choices=False),
                 DONE])
    assert sum(map(len, events)) > 524288  # more raw bytes than the reply's own 64 KiB guard suggests
    configured.RECON_PROVIDER_CALL_SECONDS = 30.0  # this test is about bytes, not time (the machine may be loaded)
    _, result = call(server, Scenario(events))
    assert result.ok and result.usage.output_tokens == 4096 and len(result.content) == 4095

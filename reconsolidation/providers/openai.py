"""The OpenAI-compatible Chat Completions adapter (OpenAI, or a local Ollama/vLLM/llama.cpp server).

The wire protocol is an interface other tools rely on — keep it exactly (``OpenAIProvider``
spells it out): one streamed ``POST {base}/chat/completions`` with a strict JSON-schema
response format and no tools, once a read-only ``GET {base}/models`` has listed the model.

Every call is one attempt (no retry, no redirect, no proxy from the environment), bounded
in total time, idle time and bytes; a stream that is not one consistent, stopped
completion with attributable usage is a finite ``FailureReason``. Cancellation is real: a
cancel or deadline shuts the socket down, so no abandoned thread keeps reading a stream.

Residency: a loopback base URL (127.0.0.1, ::1, localhost) is local — content never leaves
the machine — so it needs no pin and may need no key. Any other host must be https and must
equal ``AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER`` before a single byte is sent.

It never raises, never logs, and never puts provider text into a reason: the response body is
returned only as untrusted ``content`` for the strict parser.
"""
from __future__ import annotations

import json
import os
import socket
import threading
import time
from decimal import Decimal, InvalidOperation
from typing import Optional

from django.conf import settings

from memory.egress import residency_allowed
from reconsolidation.providers.contract import (
    PreparedRequest, ProviderConfig, ProviderFailure, ProviderResponse, ProviderResult, StrictJSONError, Usage,
    is_loopback_url, limit, request_digest, strict_json_loads, url_host,
)
from reconsolidation.providers.envelopes import PROPOSAL_JSON_SCHEMA, VERIFICATION_JSON_SCHEMA

_SCHEMAS = {
    "proposal": ("reconsolidation_proposal_1", PROPOSAL_JSON_SCHEMA),
    "verification": ("reconsolidation_verification_1", VERIFICATION_JSON_SCHEMA),
}
_POLL_SECONDS = 0.02
CANCEL_JOIN_SECONDS = 2.0  # how long a cancelled call may take to close its connection
WORKER_NAME = "recon-provider-call"

# Base URL + model pairs whose ``GET {base}/models`` listed the model in this process.
_MODELS_LISTED: set[tuple[str, str]] = set()
_MODELS_LOCK = threading.Lock()


def forget_models_checks() -> None:
    """Forget every passed models check (tests; a deployment never needs it)."""
    with _MODELS_LOCK:
        _MODELS_LISTED.clear()


class ProviderNotConfigured(Exception):
    """The configuration cannot name a usable OpenAI-compatible provider (content-free)."""


def openai_key() -> str:
    return os.environ.get("VEETBOT_OPENAI_KEY") or os.environ.get("OPENAI_API_KEY") or ""


def _price(value) -> Optional[Decimal]:
    """A configured USD/Mtok price, or None (unknown) when unset or not a finite non-negative number."""
    if value is None or value == "":
        return None
    try:
        price = Decimal(str(value))
    except InvalidOperation:
        return None
    return price if price.is_finite() and price >= 0 else None


def openai_config() -> ProviderConfig:
    """The configured endpoint as a ``ProviderConfig`` (prices unset = unknown = every request defers)."""
    base_url = (settings.VEETBOT_OPENAI_BASE_URL or "").rstrip("/")
    model = settings.VEETBOT_OPENAI_MODEL or ""
    if not model:
        raise ProviderNotConfigured("model_missing")
    local = is_loopback_url(base_url)
    if not base_url.startswith("https://") and not (local and base_url.startswith("http://")):
        raise ProviderNotConfigured("insecure_base_url")
    return ProviderConfig(
        provider="openai", model=model, base_url=base_url,
        residency="local" if local else f"remote:{url_host(base_url)}",
        input_usd_per_mtok=_price(settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK),
        output_usd_per_mtok=_price(settings.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK),
    )


class _Fail(Exception):
    def __init__(self, reason: str, outcome: str = "failed") -> None:
        super().__init__(reason)
        self.reason, self.outcome = reason, outcome


def _strict_object(text: str) -> dict:
    try:
        value = strict_json_loads(text)
    except StrictJSONError:
        raise _Fail("malformed_stream")
    if not isinstance(value, dict):
        raise _Fail("malformed_stream")
    return value


def _count(value) -> int:
    if type(value) is not int or value < 0:
        raise _Fail("usage_inconsistent")
    return value


class _Stream:
    """The state of one server-sent-event stream, checked chunk by chunk."""

    def __init__(self, prepared: PreparedRequest) -> None:
        self.prepared = prepared
        self.completion_id: Optional[str] = None
        self.content = bytearray()
        self.finish: Optional[str] = None
        self.usage: Optional[dict] = None
        self.done = False

    def event(self, data: str) -> None:
        if self.done:
            raise _Fail("malformed_stream")
        if data == "[DONE]":
            self.done = True
            return
        chunk = _strict_object(data)
        if "error" in chunk:
            raise _Fail("stream_error")
        completion_id = chunk.get("id")
        if not isinstance(completion_id, str) or not completion_id:
            raise _Fail("malformed_stream")
        if self.completion_id is None:
            self.completion_id = completion_id
        elif completion_id != self.completion_id:
            raise _Fail("inconsistent_stream")
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            raise _Fail("malformed_stream")
        for choice in choices:
            self._choice(choice)
        usage = chunk.get("usage")
        if usage is not None:
            if not isinstance(usage, dict):
                raise _Fail("usage_inconsistent")
            # The final usage chunk follows the terminal finish; usage reported earlier (some
            # servers report running counts) is superseded, never taken as the bill.
            self.usage = usage if self.finish is not None else None

    def _choice(self, choice) -> None:
        if not isinstance(choice, dict) or choice.get("index") != 0 or type(choice.get("index")) is not int:
            raise _Fail("inconsistent_stream")
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise _Fail("malformed_stream")
        if delta.get("tool_calls") or delta.get("function_call"):
            raise _Fail("tool_output")
        if delta.get("refusal"):
            raise _Fail("refused")
        content = delta.get("content")
        if content is not None:
            if not isinstance(content, str):
                raise _Fail("malformed_stream")
            if content and self.finish is not None:
                raise _Fail("inconsistent_stream")
            try:
                self.content.extend(content.encode("utf-8"))
            except UnicodeEncodeError:
                raise _Fail("malformed_unicode")
            if len(self.content) > limit("RECON_RESPONSE_MAX_BYTES"):
                raise _Fail("response_too_large")
        finish = choice.get("finish_reason")
        if finish is not None:
            if self.finish is not None or not isinstance(finish, str):
                raise _Fail("inconsistent_stream")
            self.finish = finish

    def result(self) -> Usage:
        """The verified usage of a complete stream, or the reason it is not complete."""
        if self.finish is None or not self.done:
            raise _Fail("interrupted", "interrupted")
        if self.finish == "length":
            raise _Fail("output_truncated")
        if self.finish == "content_filter":
            raise _Fail("content_filtered")
        if self.finish in ("tool_calls", "function_call"):
            raise _Fail("tool_output")
        if self.finish != "stop":
            raise _Fail("malformed_stream")
        if self.usage is None:
            raise _Fail("usage_missing")
        prompt, completion = _count(self.usage.get("prompt_tokens")), _count(self.usage.get("completion_tokens"))
        total = self.usage.get("total_tokens")
        details = self.usage.get("completion_tokens_details") or {}
        reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
        if (prompt < 1 or completion < 1 or prompt > self.prepared.input_tokens
                or completion > self.prepared.max_output_tokens
                or (total is not None and _count(total) != prompt + completion)
                or (reasoning is not None and _count(reasoning) > completion)):
            raise _Fail("usage_inconsistent")
        return Usage(input_tokens=prompt, output_tokens=completion)


def _line(raw_line: bytes, data_lines: list[str], stream: _Stream) -> list[str]:
    """One SSE line: a blank line dispatches the pending event; returns the pending data lines."""
    try:
        line = raw_line.decode("utf-8")
    except UnicodeDecodeError:
        raise _Fail("malformed_unicode")
    if line == "":
        if data_lines:
            stream.event("\n".join(data_lines))
        return []
    if line.startswith("data:"):
        return [*data_lines, line[5:].removeprefix(" ")]
    if not line.startswith(":") and line.split(":", 1)[0] not in ("event", "id", "retry"):
        raise _Fail("malformed_stream")
    return data_lines


def _status_reason(status: int) -> Optional[str]:
    if status == 200:
        return None
    if status in (401, 403):
        return "http_unauthorized"
    if status == 429:
        return "http_rate_limited"
    if 400 <= status < 500:
        return "http_rejected"
    if status >= 500:
        return "http_server_error"
    return "http_unexpected"


class OpenAIProvider:
    """One configured OpenAI-compatible endpoint. Not shared across threads.

    Wire protocol (keep it exactly): ``POST {VEETBOT_OPENAI_BASE_URL}/chat/completions`` with
    ``"stream": true``, ``"stream_options": {"include_usage": true}``,
    ``"max_completion_tokens"`` and ``"response_format": {"type": "json_schema",
    "json_schema": {"strict": true, ...}}``; no tools. The system message carries the fixed
    instructions; the user message carries the prepared request bytes exactly as digested.
    Before the first use a read-only ``GET {base}/models`` must list the configured model:
    once per process for each base URL and model (``check_models``; a failed check is not
    remembered, so it runs again next time).

    Every call is one attempt (``maximum_provider_attempts=1``), bounded by
    ``RECON_PROVIDER_CALL_SECONDS`` in total and ``RECON_PROVIDER_IDLE_SECONDS`` between
    bytes, by ``RECON_STREAM_MAX_BYTES`` of raw events and ``RECON_RESPONSE_MAX_BYTES`` of
    content. The stream must carry one consistent completion id, choice 0 only, no tool calls
    or refusals, exactly one terminal ``finish_reason: stop``, a final usage chunk with
    attributable, consistent counts inside the admitted ceilings, then ``[DONE]``.

    Cancellation: the transfer runs in a worker thread while the caller watches the cancel
    event and the deadline. On either, the caller shuts the connection's socket down (captured
    through httpx's ``trace`` extension), which wakes a read blocked in the worker at once; the
    worker leaves its ``with`` blocks (closing the response and client) and the caller joins it
    for at most ``CANCEL_JOIN_SECONDS``.
    """

    def __init__(self, config: ProviderConfig, *, key: Optional[str] = None, residency_pin: Optional[str] = None):
        self.config = config
        self._key = openai_key() if key is None else key
        pin = settings.AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER if residency_pin is None else residency_pin
        self._pin = (pin or "").strip().lower()

    # --- guards before any byte leaves -----------------------------------------------------
    def _egress_refusal(self) -> Optional[str]:
        if not residency_allowed(self.config.residency, self._pin):
            return "residency_unpinned"
        if self.config.residency != "local" and not self._key:
            return "key_missing"
        return None

    def _binding_refusal(self, prepared: PreparedRequest) -> Optional[str]:
        expected = request_digest(provider=self.config.provider, model=self.config.model,
                                  pricing_digest=self.config.pricing_digest, egress_digest=prepared.egress_digest,
                                  body=prepared.body)
        if (prepared.provider != "openai" or prepared.model != self.config.model
                or prepared.pricing_digest != self.config.pricing_digest or prepared.digest != expected
                or prepared.max_provider_attempts != 1):
            return "binding_mismatch"
        return None

    def _headers(self, accept: str) -> dict:
        headers = {"Accept": accept, "Accept-Encoding": "identity"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    def _client(self):
        import httpx

        idle = float(limit("RECON_PROVIDER_IDLE_SECONDS"))
        call = float(limit("RECON_PROVIDER_CALL_SECONDS"))
        # trust_env=False: no proxy, netrc or CA override from the environment decides where
        # the key and the content go; the base URL alone does.
        return httpx.Client(timeout=httpx.Timeout(min(idle, call)), trust_env=False, follow_redirects=False)

    def check_models(self, *, cancel: Optional[threading.Event] = None) -> Optional[str]:
        """The read-only ``GET {base}/models`` check: None when the model is listed, else a
        reason. It runs once per process for each base URL and model (the lock also keeps
        two threads from checking the same pair at once); a failure is not remembered."""
        refused = self._egress_refusal()
        if refused:
            return refused
        key = (self.config.base_url, self.config.model)
        with _MODELS_LOCK:
            if key in _MODELS_LISTED:
                return None
            outcome = self._run(self._models_call, cancel=cancel)
            if outcome is None:
                _MODELS_LISTED.add(key)
                return None
        return outcome[0]

    def _models_call(self, state: dict) -> None:
        import httpx

        try:
            with self._client() as client, client.stream(
                "GET", f"{self.config.base_url}/models", headers=self._headers("application/json"),
                extensions={"trace": _tracer(state)},
            ) as response:
                state["response"] = response
                if (reason := _status_reason(response.status_code)) is not None:
                    raise _Fail(reason)
                raw = bytearray()
                for chunk in response.iter_bytes():
                    raw.extend(chunk)
                    if len(raw) > limit("RECON_STREAM_MAX_BYTES") or state["abort"]:
                        raise _Fail("model_unavailable")
        except httpx.TimeoutException:
            raise _Fail("idle_timeout", "timeout")
        except httpx.HTTPError:
            raise _Fail("connect_failed")
        try:
            listing = _strict_object(raw.decode("utf-8"))
        except (_Fail, UnicodeDecodeError):
            raise _Fail("model_unavailable")
        data = listing.get("data")
        ids = {item.get("id") for item in data if isinstance(item, dict)} if isinstance(data, list) else set()
        if self.config.model not in ids:
            raise _Fail("model_unavailable")

    def complete(self, prepared: PreparedRequest, *, cancel: Optional[threading.Event] = None) -> ProviderResult:
        """Send ``prepared`` once and return a terminal response or a finite failure. Never raises."""
        started = time.monotonic()

        def failure(reason: str, outcome: str = "failed") -> ProviderFailure:
            return ProviderFailure(request_digest=prepared.digest, reason=reason, transport_outcome=outcome,
                                   elapsed_ms=int((time.monotonic() - started) * 1000))

        refused = self._binding_refusal(prepared) or self._egress_refusal() or self.check_models(cancel=cancel)
        if refused:
            outcome = {"timeout": "timeout", "idle_timeout": "timeout", "cancelled": "cancelled"}.get(refused, "failed")
            return failure(refused, outcome)
        stream = _Stream(prepared)
        outcome = self._run(lambda state: self._chat_call(prepared, stream, state), cancel=cancel)
        if outcome is not None:
            return failure(*outcome) if isinstance(outcome, tuple) else failure(outcome)
        try:
            usage = stream.result()
        except _Fail as failed:
            return failure(failed.reason, failed.outcome)
        return ProviderResponse(request_digest=prepared.digest, content=bytes(stream.content), usage=usage,
                                elapsed_ms=int((time.monotonic() - started) * 1000))

    def _wire_body(self, prepared: PreparedRequest) -> bytes:
        name, schema = _SCHEMAS[prepared.stage]
        instructions = json.loads(prepared.body)["instructions"]
        return json.dumps({
            "model": self.config.model,
            "messages": [
                {"role": "system", "content": instructions},
                {"role": "user", "content": prepared.body.decode("utf-8")},
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_completion_tokens": prepared.max_output_tokens,
            "response_format": {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}},
        }, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def _chat_call(self, prepared: PreparedRequest, stream: _Stream, state: dict) -> None:
        import httpx

        headers = {**self._headers("text/event-stream"), "Content-Type": "application/json"}
        try:
            with self._client() as client, client.stream(
                "POST", f"{self.config.base_url}/chat/completions", content=self._wire_body(prepared), headers=headers,
                extensions={"trace": _tracer(state)},
            ) as response:
                state["response"] = response
                if (reason := _status_reason(response.status_code)) is not None:
                    raise _Fail(reason)
                if not response.headers.get("content-type", "").lower().startswith("text/event-stream"):
                    raise _Fail("not_event_stream")
                self._read_events(response, stream, state)
        except httpx.TimeoutException:
            raise _Fail("idle_timeout", "timeout")
        except httpx.HTTPError:
            raise _Fail("interrupted" if state.get("response") is not None else "connect_failed",
                        "interrupted" if state.get("response") is not None else "failed")

    @staticmethod
    def _read_events(response, stream: _Stream, state: dict) -> None:
        """Split the byte stream into SSE lines and events. Only the unfinished line is kept
        (so a long line costs linear time), and a trailing CR waits for the next chunk, as
        it may be the first half of a CRLF split across chunks."""
        pending, data_lines, total = bytearray(), [], 0
        for chunk in response.iter_bytes():
            if state["abort"]:
                return
            total += len(chunk)
            if total > limit("RECON_STREAM_MAX_BYTES"):
                raise _Fail("stream_too_large")
            pending.extend(chunk)
            if b"\n" not in chunk and b"\r" not in chunk:
                continue
            cut = len(pending) - 1 if pending.endswith(b"\r") else len(pending)
            *lines, rest = bytes(pending[:cut]).replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
            pending = bytearray(rest) + pending[cut:]
            for raw_line in lines:
                data_lines = _line(raw_line, data_lines, stream)
        if data_lines or bytes(pending).strip(b"\r\n"):
            raise _Fail("interrupted", "interrupted")

    def _run(self, call, *, cancel: Optional[threading.Event]):
        """Run ``call`` in a worker thread under the total deadline and the cancel event.

        On cancel or deadline the connection is shut down (``_interrupt``) and the worker is
        joined for at most ``CANCEL_JOIN_SECONDS``: the caller gets its answer at the
        deadline, not after the next byte, and the worker does not outlive the call.
        """
        state: dict = {"abort": False, "response": None, "stream": None}
        box: dict = {}

        def work() -> None:
            try:
                call(state)
            except _Fail as failed:
                box["fail"] = (failed.reason, failed.outcome)
            except Exception:  # noqa: BLE001 - never raise provider prose; a finite reason only
                box["fail"] = ("transport_failed", "failed")

        worker = threading.Thread(target=work, name=WORKER_NAME, daemon=True)
        deadline = time.monotonic() + float(limit("RECON_PROVIDER_CALL_SECONDS"))
        worker.start()
        while worker.is_alive():
            worker.join(_POLL_SECONDS)
            if not worker.is_alive():
                break
            stop = None
            if cancel is not None and cancel.is_set():
                stop = ("cancelled", "cancelled")
            elif time.monotonic() >= deadline:
                stop = ("timeout", "timeout")
            if stop is not None:
                _interrupt(state)
                worker.join(CANCEL_JOIN_SECONDS)
                return stop
        return box.get("fail")


def _tracer(state: dict):
    """An httpx ``trace`` extension that remembers the connection's network stream (the TLS
    one replaces the TCP one), so a cancelling thread can shut its socket down."""
    def trace(event: str, info: dict) -> None:
        if event.endswith(("connect_tcp.complete", "start_tls.complete")):
            state["stream"] = info.get("return_value")
    return trace


def _interrupt(state: dict) -> None:
    """Stop a transfer running in another thread: flag it, then shut the socket down, which
    wakes a blocked read at once (closing the descriptor alone would not). Never raises."""
    state["abort"] = True
    stream = state.get("stream")
    try:
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except Exception:  # noqa: BLE001 - already closed or never connected: nothing to stop
        pass

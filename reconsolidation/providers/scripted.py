"""The scripted provider: replays recorded responses in order. Tests and evaluations only.

Production settings refuse it: constructing one needs ``RECON_SCRIPTED_PROVIDER_ALLOWED``
(default off). It goes through the same contract as a real adapter — the binding check on
the prepared request, one attempt, the response byte guard and a finite reason for every
failure — so code tested against it cannot rely on anything a real provider would not give.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable, Optional, Sequence, Union

from django.conf import settings

from reconsolidation.providers.contract import (
    PreparedRequest, ProviderConfig, ProviderFailure, ProviderResponse, ProviderResult, Usage, limit, request_digest,
)


class ScriptedNotAllowed(Exception):
    """Scripted replay is disabled by these settings (production)."""


@dataclass(frozen=True)
class Recording:
    """One recorded answer: content bytes (or a function of the prepared request, so a test can
    echo its batch ID) with usage, or a failure reason with its transport outcome."""

    content: Union[bytes, Callable[[PreparedRequest], bytes], None] = None
    usage: Optional[Usage] = None
    failure: Optional[str] = None
    transport_outcome: str = "failed"
    stage: Optional[str] = None  # when set, the request must be of this stage


def scripted_config(*, model: str = "scripted", input_usd_per_mtok: Optional[Decimal] = Decimal("0"),
                    output_usd_per_mtok: Optional[Decimal] = Decimal("0")) -> ProviderConfig:
    return ProviderConfig(provider="scripted", model=model, residency="local",
                          input_usd_per_mtok=input_usd_per_mtok, output_usd_per_mtok=output_usd_per_mtok)


class ScriptedProvider:
    def __init__(self, recordings: Sequence[Recording], *, config: Optional[ProviderConfig] = None) -> None:
        if not getattr(settings, "RECON_SCRIPTED_PROVIDER_ALLOWED", False):
            raise ScriptedNotAllowed("scripted_not_allowed")
        self.config = config or scripted_config()
        self._recordings = list(recordings)
        self._lock = threading.Lock()
        self.sent: list[str] = []  # digests of the requests replayed, in order

    def complete(self, prepared: PreparedRequest, *, cancel: Optional[threading.Event] = None) -> ProviderResult:
        def failure(reason: str, outcome: str = "failed") -> ProviderFailure:
            return ProviderFailure(request_digest=prepared.digest, reason=reason, transport_outcome=outcome,
                                   elapsed_ms=0)

        expected = request_digest(provider=self.config.provider, model=self.config.model,
                                  pricing_digest=self.config.pricing_digest, egress_digest=prepared.egress_digest,
                                  body=prepared.body)
        if (prepared.provider != self.config.provider or prepared.model != self.config.model
                or prepared.digest != expected or prepared.max_provider_attempts != 1):
            return failure("binding_mismatch")
        if cancel is not None and cancel.is_set():
            return failure("cancelled", "cancelled")
        with self._lock:
            if not self._recordings:
                return failure("replay_exhausted")
            recording = self._recordings.pop(0)
            self.sent.append(prepared.digest)
        if recording.stage is not None and recording.stage != prepared.stage:
            return failure("replay_mismatch")
        if recording.failure is not None:
            return failure(recording.failure, recording.transport_outcome)
        content = recording.content(prepared) if callable(recording.content) else recording.content
        if content is None or recording.usage is None:
            return failure("usage_missing")
        if len(content) > limit("RECON_RESPONSE_MAX_BYTES"):
            return failure("response_too_large")
        if (recording.usage.output_tokens > prepared.max_output_tokens
                or recording.usage.input_tokens > prepared.input_tokens):
            return failure("usage_inconsistent")
        return ProviderResponse(request_digest=prepared.digest, content=bytes(content), usage=recording.usage,
                                elapsed_ms=0)

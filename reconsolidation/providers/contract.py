"""The provider contract: the values that cross the seam and the one protocol.

A provider receives an immutable ``PreparedRequest`` (bytes + a digest binding provider,
model, prices and egress policy) and returns either a ``ProviderResponse`` (the terminal
content with verified usage) or a ``ProviderFailure`` (a finite reason code). It never
raises, and nothing it returns carries provider prose outside ``ProviderResponse.content``,
which is untrusted data for the strict parser only — never for logs, audits or errors.

Limits are read from Django settings at call time (``limit``) so a test may shrink a
timeout with the ``settings`` fixture and a deployment may tighten a bound.
"""
from __future__ import annotations

import hashlib
import ipaddress
import json
from decimal import ROUND_CEILING, Decimal
from typing import Literal, Optional, Protocol, Union
from urllib.parse import urlsplit
from uuid import UUID

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field

from memory.egress import residency_allowed  # noqa: F401 - also imported from here by the evaluation runner (pinned bytes)
from reconsolidation import bounds

ProviderName = Literal["rules", "openai", "scripted"]

_LIMIT_DEFAULTS = {
    "RECON_REQUEST_MAX_INPUT_TOKENS": 16384,
    "RECON_REQUEST_MAX_OUTPUT_TOKENS": 4096,
    "RECON_REQUEST_MAX_BYTES": 65536,
    "RECON_RESPONSE_MAX_BYTES": 65536,
    "RECON_STREAM_MAX_BYTES": 4194304,
    "RECON_EXCERPT_MAX_BYTES": 2048,
    "RECON_EVENT_MAX_PARTS": 32,
    "RECON_GROUP_MAX_EXCERPTS": 256,
    "RECON_BATCH_MAX_GROUPS": 4,
    "RECON_CLAUSE_MAX_CHARS": 2000,
    "RECON_SLICE_MAX_OPERATIONS": 8,
    "RECON_GROUP_MAX_MEMBERS": 32,
    "RECON_PROVIDER_MAX_ATTEMPTS": 1,
    "RECON_PROVIDER_CALL_SECONDS": 30.0,
    "RECON_PROVIDER_IDLE_SECONDS": 10.0,
}


def limit(name: str):
    """The current value of a named provider bound (settings first, then the spec default)."""
    return getattr(settings, name, _LIMIT_DEFAULTS[name])


def canonical_json(value) -> bytes:
    """Sorted-key compact UTF-8 JSON without ASCII escaping: the one digest encoding."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


class StrictJSONError(ValueError):
    """A document JSON would accept but our contracts do not: ``reason`` is
    ``duplicate_key``, ``non_finite_number`` or ``malformed_json``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def strict_json_loads(text: str, *, parse_float=None):
    """``json.loads`` that refuses duplicate keys at any level and NaN/Infinity."""
    def pairs(items):
        seen = {}
        for key, value in items:
            if key in seen:
                raise StrictJSONError("duplicate_key")
            seen[key] = value
        return seen

    def constant(_name):
        raise StrictJSONError("non_finite_number")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant, parse_float=parse_float)
    except StrictJSONError:
        raise
    except (ValueError, RecursionError):
        raise StrictJSONError("malformed_json")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_loopback_url(base_url: str) -> bool:
    """True when the base URL names this machine: content sent there never leaves it."""
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_host(base_url: str) -> str:
    return (urlsplit(base_url).hostname or "").lower()


class Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ProviderConfig(Value):
    """A resolved provider: who receives a request, at which prices, where it resides.

    ``residency`` is ``local`` (the rules provider, a scripted replay, or a loopback
    server) or ``remote:<host>``. Prices are USD per million tokens; ``None`` = unknown.
    """

    provider: ProviderName
    model: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:/@-]+$")
    base_url: str = ""
    residency: str
    input_usd_per_mtok: Optional[Decimal] = None
    output_usd_per_mtok: Optional[Decimal] = None

    @property
    def prices_known(self) -> bool:
        return self.input_usd_per_mtok is not None and self.output_usd_per_mtok is not None

    def price_usd(self, *, input_tokens: int, output_tokens: int) -> Decimal:
        """Tokens at these prices, rounded up to the money quantum (zero when free)."""
        raw = Decimal(input_tokens) * self.input_usd_per_mtok + Decimal(output_tokens) * self.output_usd_per_mtok
        return (raw / Decimal(1_000_000)).quantize(bounds.RECON_MONEY_QUANTUM_USD, rounding=ROUND_CEILING)

    @property
    def pricing_digest(self) -> str:
        prices = {
            "input_usd_per_mtok": None if self.input_usd_per_mtok is None else str(self.input_usd_per_mtok),
            "output_usd_per_mtok": None if self.output_usd_per_mtok is None else str(self.output_usd_per_mtok),
        }
        return sha256_hex(canonical_json({"provider": self.provider, "model": self.model, "prices": prices}))


class PreparedRequest(Value):
    """Immutable serialized bytes of one neutral ModelRequest and the digest binding them
    to the provider, model, prices and egress policy. A transient preview: not permission
    to send or commit (admission re-checks and reserves this exact digest)."""

    stage: Literal["proposal", "verification"]
    batch_id: UUID
    provider: ProviderName
    model: str
    pricing_digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    egress_digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    body: bytes
    digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    input_tokens: int = Field(ge=0)  # conservative estimate: UTF-8 bytes of ``body``
    max_output_tokens: int = Field(ge=1)
    maximum_usd: Decimal  # input + output at their ceilings, on the money quantum
    max_provider_attempts: int = 1


def request_digest(*, provider: str, model: str, pricing_digest: str, egress_digest: str, body: bytes) -> str:
    head = canonical_json({
        "provider": provider, "model": model, "pricing_digest": pricing_digest, "egress_digest": egress_digest,
        "body_sha256": sha256_hex(body),
    })
    return sha256_hex(head)


TransportOutcome = Literal["completed", "timeout", "interrupted", "failed", "cancelled"]

FailureReason = Literal[
    "binding_mismatch",  # the prepared request is not for this provider/model/prices/policy
    "residency_unpinned",  # a remote endpoint without the matching residency pin
    "key_missing",
    "model_unavailable",  # the read-only /models check did not list the model
    "connect_failed",
    "timeout",  # the whole call exceeded its limit
    "idle_timeout",  # no byte within the idle limit
    "cancelled",
    "http_unauthorized",
    "http_rate_limited",
    "http_rejected",  # other 4xx
    "http_server_error",  # 5xx
    "http_unexpected",  # 1xx/3xx/non-200 2xx
    "not_event_stream",
    "malformed_stream",
    "stream_error",  # the server put an error object in the stream
    "inconsistent_stream",  # completion id or choice index changed
    "interrupted",  # closed before a terminal finish, usage and [DONE]
    "stream_too_large",
    "response_too_large",
    "malformed_unicode",
    "output_truncated",  # finish_reason=length
    "content_filtered",
    "tool_output",
    "refused",
    "usage_missing",
    "usage_inconsistent",
    "replay_exhausted",  # scripted only
    "replay_mismatch",  # scripted only
    "transport_failed",
]


class Usage(Value):
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)


class ProviderResponse(Value):
    """A terminal completion: ``content`` is untrusted data for the strict parser only."""

    ok: Literal[True] = True
    request_digest: str
    content: bytes
    usage: Usage
    elapsed_ms: int = Field(ge=0)
    transport_outcome: Literal["completed"] = "completed"


class ProviderFailure(Value):
    """A finite failure: a reason code, never provider prose. Usage is whatever was verified
    before the failure (usually none): settlement treats any failure as unknown spend."""

    ok: Literal[False] = False
    request_digest: str
    reason: FailureReason
    transport_outcome: TransportOutcome
    elapsed_ms: int = Field(ge=0)


ProviderResult = Union[ProviderResponse, ProviderFailure]


class Provider(Protocol):
    config: ProviderConfig

    def complete(self, prepared: PreparedRequest, *, cancel=None) -> ProviderResult:
        """Send exactly ``prepared.body`` once; never raise; ``cancel`` is a threading.Event."""

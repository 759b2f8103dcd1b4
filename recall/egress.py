"""Egress of recall text to a remote encoder: query and backfill text pass the same local
policy as reconsolidation's provider requests before they leave, and every remote request
reserves its price against a daily ceiling first. MiniLM runs in-process: none of this
applies to it.

* Residency: an endpoint on a loopback address needs no pin (its content check and spend
  still apply); any other host must be pinned exactly in ``RECALL_ENCODER_RESIDENCY_PIN``,
  otherwise no text is sent.
* Content: text carrying a secret, a credential, an instruction aimed at a model or a
  sensitive category (``memory.egress.pattern_reason``) is not sent; a backfill also keeps
  memories above ``internal`` local (``recall.backfill``).
* Spend: each request's estimated price is reserved in the owner's spend ledger first and
  lowered to the reported usage after it (``reserve``, ``settle``).

A refusal is a finite reason code; the text that caused it is never logged or kept. A
refused query runs sparse (``fallback_reason`` egress_refused); a refused backfill text is
skipped and counted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Optional, Sequence
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from memory.egress import pattern_reason, residency_allowed
from memory.services.owner_state import lock_owner
from memory.services.spend import DailyCeilingReached, spend_release, spend_reserve
from recall.encoders import EncoderUnavailable
from veetbot.clock import utcnow
from veetbot.identity import Principal
from veetbot.rls import owner_context

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
MILLION = Decimal(1_000_000)
SPEND_PURPOSE = "encoder"  # the encoder's own daily ceiling in the owner's spend ledger


class EgressRefused(EncoderUnavailable):
    """Recall text may not leave for this encoder; ``reason`` is a finite code."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"egress refused: {reason}")


def residency(encoder) -> str:
    """``local`` or ``remote:<host>`` for an encoder."""
    if in_process(encoder):
        return "local"
    host = (urlsplit(getattr(encoder, "base_url", "")).hostname or "").lower()
    return "local" if host in LOOPBACK_HOSTS else f"remote:{host}"


def residency_permitted(encoder) -> bool:
    return in_process(encoder) or residency_allowed(residency(encoder), settings.RECALL_ENCODER_RESIDENCY_PIN)


def refusal(encoder, text: str) -> str:
    """Why ``text`` may not be sent to ``encoder`` ("" when it may). The content patterns
    apply to every endpoint, loopback ones too (a local port may forward anywhere); the
    residency pin to the ones off this machine."""
    if in_process(encoder):
        return ""
    if not residency_permitted(encoder):
        return "residency_not_allowed"
    return pattern_reason(text) or ""


def estimated_usd(texts: Sequence[str]) -> Decimal:
    tokens = sum(math.ceil(len(t.encode("utf-8", "surrogatepass")) / 4) for t in texts)
    return Decimal(tokens) * Decimal(str(settings.RECALL_REMOTE_ENCODER_USD_PER_MILLION_TOKENS)) / MILLION


@dataclass(frozen=True)
class Reservation:
    day: datetime
    usd: Decimal


def reserve(principal: Principal, texts: Sequence[str], *, now: Optional[datetime] = None) -> Reservation:
    """Reserve a request's estimated price in the owner's spend ledger, or refuse it
    (``spend_ceiling``).

    The estimate is ``ceil(UTF-8 bytes / 4)`` tokens per text at
    ``RECALL_REMOTE_ENCODER_USD_PER_MILLION_TOKENS`` (set it to 0 for a free local server),
    reserved under the owner lock in ``memory.services.spend`` (purpose ``encoder``); past
    ``RECALL_REMOTE_ENCODER_DAILY_USD`` the request is refused. A failed or unanswered request
    keeps its reservation.
    """
    now = now or utcnow()
    usd = estimated_usd(texts)
    ceiling = Decimal(str(settings.RECALL_REMOTE_ENCODER_DAILY_USD))
    with owner_context(principal), transaction.atomic():
        lock_owner(principal)
        try:
            spend_reserve(principal=principal, purpose=SPEND_PURPOSE, day=now.date(), usd=usd, ceiling=ceiling,
                          now=now)
        except DailyCeilingReached:
            raise EgressRefused("spend_ceiling")
    return Reservation(day=now.date(), usd=usd)


def settle(principal: Principal, reservation: Reservation, usage_tokens: Optional[int]) -> None:
    """Lower a reservation to the reported usage (never raise it: the estimate is the bound)."""
    if usage_tokens is None:
        return
    actual = Decimal(usage_tokens) * Decimal(str(settings.RECALL_REMOTE_ENCODER_USD_PER_MILLION_TOKENS)) / MILLION
    refund = reservation.usd - actual
    if refund <= 0:
        return
    with owner_context(principal), transaction.atomic():
        spend_release(principal=principal, purpose=SPEND_PURPOSE, day=reservation.day, usd=refund, now=utcnow())


class GuardedEncoder:
    """An encoder whose every remote request passes the policy and the spend reservation.
    The same space as the encoder it guards (cached vectors stay valid)."""

    def __init__(self, inner, principal: Principal) -> None:
        self.inner = inner
        self.tuple = inner.tuple
        self.principal = principal

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        for text in texts:
            reason = refusal(self.inner, text)
            if reason:
                raise EgressRefused(reason)
        reservation = reserve(self.principal, texts)
        before = getattr(self.inner, "usage_tokens", None)
        vectors = self.inner.encode(texts)  # a failure keeps the reservation
        after = getattr(self.inner, "usage_tokens", None)
        settle(self.principal, reservation, after - before if isinstance(before, int) and isinstance(after, int)
               and after > before else None)
        return vectors


def in_process(encoder) -> bool:
    """Whether ``encoder`` computes in this process (it sends no text anywhere). An adapter
    that sends text over the network says so with ``sends_text = True``."""
    return not getattr(encoder, "sends_text", False)


def guarded(encoder, principal: Principal):
    """``encoder`` itself when it runs in-process, else guarded for ``principal``."""
    return encoder if in_process(encoder) else GuardedEncoder(encoder, principal)

"""Settlement mapping: a provider result → what ``spend.settle`` is told (a pure function).

Only a terminal response for exactly this prepared request, priced with the prices copied
into that request, with attributable, positive token counts inside the admitted ceilings and
a priced amount no higher than the reservation, is ``verified`` (and may release the
difference). Everything else — timeouts, interrupted or failed streams, missing or
inconsistent usage, a response for another request, changed prices — is ``unknown`` and
keeps the full reservation. The completion carries only a finite transport outcome and the
verified counts: no prompt, response, source text or error prose.
"""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Literal, Optional

from reconsolidation.domain import CallAudit, CallCompletion
from reconsolidation.providers.contract import PreparedRequest, ProviderConfig, ProviderResult, Value


def call_audit(prepared: PreparedRequest, *, group_ids, admitted_at: datetime) -> CallAudit:
    """The content-free audit written with the reservation of exactly this request."""
    return CallAudit(batch_id=prepared.batch_id, stage=prepared.stage, group_ids=tuple(group_ids),
                     provider=prepared.provider, model=prepared.model, pricing_digest=prepared.pricing_digest,
                     egress_digest=prepared.egress_digest, admitted_at=admitted_at)


class SettlementPlan(Value):
    outcome: Literal["verified", "unknown"]
    actual_usd: Optional[Decimal]  # None = unknown: the full reservation stays charged
    completion: CallCompletion


def settlement_for(
    result: ProviderResult, *, prepared: PreparedRequest, config: ProviderConfig, completed_at: datetime,
    elapsed_ms: int,
) -> SettlementPlan:
    def unknown(outcome: str) -> SettlementPlan:
        return SettlementPlan(outcome="unknown", actual_usd=None, completion=CallCompletion(
            completed_at=completed_at, elapsed_ms=elapsed_ms, transport_outcome=outcome))

    if not result.ok:
        return unknown(result.transport_outcome)
    usage = result.usage
    if (result.request_digest != prepared.digest or config.pricing_digest != prepared.pricing_digest
            or not config.prices_known or usage.input_tokens < 1 or usage.output_tokens < 1
            or usage.input_tokens > prepared.input_tokens or usage.output_tokens > prepared.max_output_tokens):
        return unknown("completed")
    actual = config.price_usd(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
    if actual > prepared.maximum_usd:
        return unknown("completed")
    return SettlementPlan(outcome="verified", actual_usd=actual, completion=CallCompletion(
        completed_at=completed_at, elapsed_ms=elapsed_ms, transport_outcome="completed",
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens))

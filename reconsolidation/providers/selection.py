"""Which provider runs: ``AGENT_MEMORY_RECONSOLIDATION_PROVIDER`` = ``rules`` (default) | ``openai``.

Resolved by the caller outside every transaction. ``scripted`` is never selectable here —
tests and evals construct it directly, and only with ``RECON_SCRIPTED_PROVIDER_ALLOWED``.
``readiness`` lists, content-free, why the configured OpenAI-compatible provider could not
send anything yet (missing model, unknown prices, missing residency pin or key), so startup
can refuse with a clear message instead of deferring every group silently.
"""
from __future__ import annotations

from typing import Literal

from django.conf import settings

from memory.egress import residency_allowed
from reconsolidation.providers.openai import OpenAIProvider, ProviderNotConfigured, openai_config, openai_key

SELECTABLE = ("rules", "openai")


def selected_provider() -> Literal["rules", "openai"]:
    name = (settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER or "rules").strip().lower()
    if name not in SELECTABLE:
        raise ProviderNotConfigured("unknown_provider")
    return name  # type: ignore[return-value]


def model_provider() -> OpenAIProvider:
    """The configured OpenAI-compatible adapter (only when ``openai`` is selected)."""
    if selected_provider() != "openai":
        raise ProviderNotConfigured("not_selected")
    return OpenAIProvider(openai_config())


def readiness() -> tuple[str, ...]:
    """Finite reasons the selected provider cannot send yet; empty when it can (or for rules)."""
    if selected_provider() == "rules":
        return ()
    try:
        config = openai_config()
    except ProviderNotConfigured as missing:
        return (str(missing),)
    reasons = []
    if not config.prices_known:
        reasons.append("price_unknown")
    if not residency_allowed(config.residency, settings.AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER):
        reasons.append("residency_unpinned")
    if config.residency != "local" and not openai_key():
        reasons.append("key_missing")
    return tuple(reasons)

"""The versioned bounds of ``reconsolidation@1``: one named constant per bound.

Each is read once from Django settings (``getattr`` with the default shown here), so a
deployment may tighten a bound in ``veetbot/settings.py`` without touching this module.
Names carry their unit. The kill switch is *not* here: it is read at call time from
``settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED`` so flipping it takes effect at once.

This module must never hold business rules; it only names numbers.
"""
from __future__ import annotations

from datetime import time
from decimal import Decimal

from django.conf import settings


def _setting(name: str, default):
    return getattr(settings, name, default)


POLICY = "reconsolidation@1"

# --- Scheduling and leases -----------------------------------------------------------
RECON_DUE_TIME_UTC: time = time.fromisoformat(_setting("RECON_DUE_TIME_UTC", "03:00"))
RECON_LEASE_SECONDS: int = _setting("RECON_LEASE_SECONDS", 180)
RECON_RENEW_SECONDS: int = _setting("RECON_RENEW_SECONDS", 30)
RECON_SLICE_DEADLINE_SECONDS: int = _setting("RECON_SLICE_DEADLINE_SECONDS", 120)
RECON_MAX_GROUP_ATTEMPTS: int = _setting("RECON_MAX_GROUP_ATTEMPTS", 3)

# --- Inventory and grouping ----------------------------------------------------------
RECON_SLICE_MAX_ANCHORS: int = _setting("RECON_SLICE_MAX_ANCHORS", 128)
RECON_SLICE_FULL_LANE_ANCHORS: int = _setting("RECON_SLICE_FULL_LANE_ANCHORS", 64)
RECON_SLICE_MAX_GROUPS: int = _setting("RECON_SLICE_MAX_GROUPS", 4)
RECON_GROUP_MAX_MEMBERS: int = _setting("RECON_GROUP_MAX_MEMBERS", 32)
RECON_PENDING_MAX_GROUPS: int = _setting("RECON_PENDING_MAX_GROUPS", 256)
RECON_SLICE_MAX_OPERATIONS: int = _setting("RECON_SLICE_MAX_OPERATIONS", 8)
# The strictest sensitivity an input may have: the provider's egress floor.
RECON_SENSITIVITY_CEILING: str = _setting("RECON_SENSITIVITY_CEILING", "internal")
# Neighbour lookup: candidates read per channel (subject, each entity, each lexeme), the
# anchor's lexemes considered, and how many anchors one lookup statement serves.
RECON_NEIGHBOUR_CHANNEL_ROWS: int = _setting("RECON_NEIGHBOUR_CHANNEL_ROWS", 64)
RECON_NEIGHBOUR_MAX_LEXEMES: int = _setting("RECON_NEIGHBOUR_MAX_LEXEMES", 24)
RECON_NEIGHBOUR_BATCH_ANCHORS: int = _setting("RECON_NEIGHBOUR_BATCH_ANCHORS", 8)
# A neighbour found by lexical overlap alone must share at least this many distinct lexemes.
RECON_NEIGHBOUR_MIN_OVERLAP_LEXEMES: int = _setting("RECON_NEIGHBOUR_MIN_OVERLAP_LEXEMES", 2)

# --- Spend (Decimal USD) -------------------------------------------------------------
RECON_MONEY_QUANTUM_USD: Decimal = Decimal(_setting("RECON_MONEY_QUANTUM_USD", "0.00000001"))
RECON_SLICE_BUDGET_USD: Decimal = Decimal(_setting("RECON_SLICE_BUDGET_USD", "0.25"))
RECON_DAILY_BUDGET_USD: Decimal = Decimal(_setting("RECON_DAILY_BUDGET_USD", "2.00"))
# The rules provider is free, but is priced at the minimum positive quantum so every
# call still goes through the reservation protocol.
RECON_RULES_CALL_USD: Decimal = Decimal(_setting("RECON_RULES_CALL_USD", "0.00000001"))

# --- Derivation and owner surfaces ----------------------------------------------------
RECON_SUMMARY_MAX_CHARS: int = _setting("RECON_SUMMARY_MAX_CHARS", 1024)
RECON_SUMMARY_MAX_CLAUSES: int = _setting("RECON_SUMMARY_MAX_CLAUSES", 4)
# Hypotheses (infer_connection): the confidence cap and the evidence-clock horizon.
RECON_HYPOTHESIS_MAX_CONFIDENCE: float = _setting("RECON_HYPOTHESIS_MAX_CONFIDENCE", 0.35)
RECON_HYPOTHESIS_MAX_DAYS: int = _setting("RECON_HYPOTHESIS_MAX_DAYS", 30)
# Fewest distinct admitted owner events (and source originals) a hypothesis cites.
RECON_HYPOTHESIS_MIN_EVENTS: int = _setting("RECON_HYPOTHESIS_MIN_EVENTS", 2)
RECON_OPERATIONS_PAGE_DEFAULT: int = _setting("RECON_OPERATIONS_PAGE_DEFAULT", 50)
RECON_OPERATIONS_PAGE_MAX: int = _setting("RECON_OPERATIONS_PAGE_MAX", 100)
RECON_IDEMPOTENCY_KEY_MAX_CHARS: int = _setting("RECON_IDEMPOTENCY_KEY_MAX_CHARS", 128)

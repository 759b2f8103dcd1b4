"""The versioned bounds of ``reconsolidation@1``: one named constant per bound.

Each is declared once, in ``veetbot/settings.py`` (where a deployment tightens it), and read
here once at import; this module adds the types.
Names carry their unit. The kill switch is *not* here: it is read at call time from
``settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED`` so flipping it takes effect at once.

This module must never hold business rules; it only names numbers.
"""
from __future__ import annotations

from datetime import time
from decimal import Decimal

from django.conf import settings


def _setting(name: str):
    return getattr(settings, name)


POLICY = "reconsolidation@1"

# --- Scheduling and leases -----------------------------------------------------------
RECON_DUE_TIME_UTC: time = time.fromisoformat(_setting("RECON_DUE_TIME_UTC"))
RECON_LEASE_SECONDS: int = _setting("RECON_LEASE_SECONDS")
RECON_RENEW_SECONDS: int = _setting("RECON_RENEW_SECONDS")
RECON_SLICE_DEADLINE_SECONDS: int = _setting("RECON_SLICE_DEADLINE_SECONDS")
RECON_MAX_GROUP_ATTEMPTS: int = _setting("RECON_MAX_GROUP_ATTEMPTS")

# --- Inventory and grouping ----------------------------------------------------------
RECON_SLICE_MAX_ANCHORS: int = _setting("RECON_SLICE_MAX_ANCHORS")
RECON_SLICE_FULL_LANE_ANCHORS: int = _setting("RECON_SLICE_FULL_LANE_ANCHORS")
RECON_SLICE_MAX_GROUPS: int = _setting("RECON_SLICE_MAX_GROUPS")
RECON_GROUP_MAX_MEMBERS: int = _setting("RECON_GROUP_MAX_MEMBERS")
RECON_PENDING_MAX_GROUPS: int = _setting("RECON_PENDING_MAX_GROUPS")
RECON_SLICE_MAX_OPERATIONS: int = _setting("RECON_SLICE_MAX_OPERATIONS")
# The strictest sensitivity an input may have: the provider's egress floor.
RECON_SENSITIVITY_CEILING: str = _setting("RECON_SENSITIVITY_CEILING")
# Neighbour lookup: candidates read per channel (subject, each entity, each lexeme), the
# anchor's lexemes considered, and how many anchors one lookup statement serves.
RECON_NEIGHBOUR_CHANNEL_ROWS: int = _setting("RECON_NEIGHBOUR_CHANNEL_ROWS")
RECON_NEIGHBOUR_MAX_LEXEMES: int = _setting("RECON_NEIGHBOUR_MAX_LEXEMES")
RECON_NEIGHBOUR_BATCH_ANCHORS: int = _setting("RECON_NEIGHBOUR_BATCH_ANCHORS")
# A neighbour found by lexical overlap alone must share at least this many distinct lexemes.
RECON_NEIGHBOUR_MIN_OVERLAP_LEXEMES: int = _setting("RECON_NEIGHBOUR_MIN_OVERLAP_LEXEMES")

# The semantic neighbour arm: the largest cosine distance (1 - cosine) at which an eligible
# original is still the anchor's semantic neighbour.
RECON_SEMANTIC_NEIGHBOUR_MAX_DISTANCE: float = _setting("RECON_SEMANTIC_NEIGHBOUR_MAX_DISTANCE")
RECON_SEMANTIC_HNSW_EF_SEARCH: int = _setting("RECON_SEMANTIC_HNSW_EF_SEARCH")

# --- Spend (Decimal USD) -------------------------------------------------------------
RECON_MONEY_QUANTUM_USD: Decimal = Decimal(_setting("RECON_MONEY_QUANTUM_USD"))
RECON_SLICE_BUDGET_USD: Decimal = Decimal(_setting("RECON_SLICE_BUDGET_USD"))
RECON_DAILY_BUDGET_USD: Decimal = Decimal(_setting("RECON_DAILY_BUDGET_USD"))
# The rules provider is free, but is priced at the minimum positive quantum so every
# call still goes through the reservation protocol.
RECON_RULES_CALL_USD: Decimal = Decimal(_setting("RECON_RULES_CALL_USD"))

# --- Derivation and owner surfaces ----------------------------------------------------
RECON_SUMMARY_MAX_CHARS: int = _setting("RECON_SUMMARY_MAX_CHARS")
RECON_SUMMARY_MAX_CLAUSES: int = _setting("RECON_SUMMARY_MAX_CLAUSES")
RECON_SUMMARY_MIN_CLAUSES: int = _setting("RECON_SUMMARY_MIN_CLAUSES")
RECON_SUMMARY_MIN_SESSIONS: int = _setting("RECON_SUMMARY_MIN_SESSIONS")
RECON_SUMMARY_MAX_SHARED_SUPPORT: float = _setting("RECON_SUMMARY_MAX_SHARED_SUPPORT")
RECON_REVIEW_QUEUE_MAX: int = _setting("RECON_REVIEW_QUEUE_MAX")
# Hypotheses (infer_connection): the confidence cap and the evidence-clock horizon.
RECON_HYPOTHESIS_MAX_CONFIDENCE: float = _setting("RECON_HYPOTHESIS_MAX_CONFIDENCE")
RECON_HYPOTHESIS_MAX_DAYS: int = _setting("RECON_HYPOTHESIS_MAX_DAYS")
# Fewest distinct admitted owner events (and source originals) a hypothesis cites.
RECON_HYPOTHESIS_MIN_EVENTS: int = _setting("RECON_HYPOTHESIS_MIN_EVENTS")
RECON_OPERATIONS_PAGE_DEFAULT: int = _setting("RECON_OPERATIONS_PAGE_DEFAULT")
RECON_OPERATIONS_PAGE_MAX: int = _setting("RECON_OPERATIONS_PAGE_MAX")
RECON_IDEMPOTENCY_KEY_MAX_CHARS: int = _setting("RECON_IDEMPOTENCY_KEY_MAX_CHARS")

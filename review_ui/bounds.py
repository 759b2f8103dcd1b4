"""The named bounds of the review dashboard. Each reads a same-named Django setting when a
deployment sets one, so the spec's numbers live here once and tests can move them."""
from __future__ import annotations

from django.conf import settings

# ADR-0186: one bearer sign-in buys a thirty-day review cookie.
REVIEW_COOKIE_MAX_AGE_SECONDS: int = getattr(settings, "REVIEW_COOKIE_MAX_AGE_SECONDS", 30 * 24 * 3600)
REVIEW_COOKIE_NAME: str = getattr(settings, "REVIEW_COOKIE_NAME", "veetbot_review")
# The status chart covers the last fourteen UTC days (today included).
REVIEW_CHART_DAYS: int = getattr(settings, "REVIEW_CHART_DAYS", 14)
# One journal page; bounded by the operation reader's own maximum (RECON_OPERATIONS_PAGE_MAX).
REVIEW_JOURNAL_PAGE_SIZE: int = getattr(settings, "REVIEW_JOURNAL_PAGE_SIZE", 25)
# Content-free slice outcomes shown on the status panel.
REVIEW_STATUS_LAST_SLICES: int = getattr(settings, "REVIEW_STATUS_LAST_SLICES", 5)
# A pasted bearer longer than this is refused before any lookup.
REVIEW_TOKEN_MAX_CHARS: int = getattr(settings, "REVIEW_TOKEN_MAX_CHARS", 200)
# The longest subject the journal's subject filter reads (an original's own bound).
REVIEW_SUBJECT_MAX_CHARS: int = getattr(settings, "REVIEW_SUBJECT_MAX_CHARS", settings.MEMORY_SUBJECT_MAX_CHARS)

"""The egress rules: what owner text may never leave this machine, and where it may go.

Every path that sends owner text to another process off the machine — reconsolidation's
provider requests, recall's remote encoder — applies the same two rules before it sends:

* **content patterns** (``pattern_reason``) — secrets (API keys, private keys, tokens),
  credentials (passwords, bearer tokens, URLs with user info, card numbers, national IDs),
  injection (instructions aimed at a model, chat-template tokens, our own envelope names)
  and sensitive categories (health, sexuality, religion, politics, ethnicity, criminal,
  immigration), matched on a normalised copy so obfuscation does not hide them;
* **residency** (``residency_allowed``) — ``local`` always, ``remote:<host>`` only when the
  deployment's pin names exactly that host.

A refusal is a finite reason code: the matched text is never kept, logged or returned. What
each path does with a refusal (classification, spend, fallback) is the path's own business.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Optional

_SECRET = re.compile(
    r"sk-(?:ant-|proj-)?[a-z0-9_-]{16,}|(?:akia|asia)[0-9a-z]{16}|gh[pousr]_[a-z0-9]{30,}|github_pat_[a-z0-9_]{20,}"
    r"|xox[abprs]-[a-z0-9-]{10,}|aiza[0-9a-z_-]{35}|glpat-[a-z0-9_-]{20}|(?:sk|rk)_live_[a-z0-9]{16,}"
    r"|-----begin [a-z ]*private key-----|eyj[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}"
)
_CREDENTIAL = re.compile(
    r"\b(?:password|passwd|passphrase|passcode|pwd|pin code|api[ _-]?key|secret key|access key|auth token"
    r"|access token|refresh token|private key|2fa code|otp|recovery code)s?\b\W{0,3}(?:is|was|:|=)\s*\S+"
    r"|\bbearer\s+[a-z0-9._~+/=-]{16,}|[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@"
    r"|\b\d{3}-\d{2}-\d{4}\b|\b[a-z]{2}\d{2}(?: ?[a-z0-9]{4}){3,7}\b"
)
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b.{0,30}\b(?:previous|prior|above|earlier|all|your|system)\b.{0,20}"
    r"\b(?:instructions?|prompts?|messages?|rules|guidelines|context)\b"
    r"|\b(?:system|developer)\s+(?:prompt|message|instructions?)\b|\byou are now\b|\bnew instructions\b"
    r"|\b(?:reveal|print|show|repeat)\b.{0,20}\b(?:system prompt|your instructions)\b"
    r"|<\|[a-z_]+\|>|\[/?inst\]|<</?sys>>|</?(?:system|assistant|tool)>|\"role\"\s*:\s*\"(?:system|assistant|tool|developer)\""
    r"|reconsolidation-(?:proposal|verification|input)@|\bschema_version\b|\btool_calls?\b|\bfunction_call\b"
)
_SENSITIVE = re.compile(
    r"\b(?:diagnos\w*|hiv|aids|cancer|tumou?r|chemo\w*|depress\w*|anxiety disorder|bipolar|schizophreni\w*|adhd"
    r"|autis\w*|medication|prescri\w*|antidepressant\w*|therap(?:y|ist)|psychiatr\w*|pregnan\w*|abortion|miscarriage"
    r"|disabilit\w*|rehab|addiction|alcoholi\w*|overdose|suicid\w*|self[- ]harm|std|sti|genetic"
    r"|gay|lesbian|bisexual|transgender|queer|sexual orientation|sex life"
    r"|religio\w*|muslim|christian|jewish|hindu|buddhist|atheist|church|mosque|synagogue"
    r"|political party|voted for|democrat|republican|trade union|union member\w*"
    r"|ethnicity|racial|caste|criminal record|convicted|arrested|parole|probation"
    r"|immigration status|undocumented|asylum|visa status|salary|debt|bankrupt\w*)\b"
)


def _luhn(digits: str) -> bool:
    total, double = 0, False
    for char in reversed(digits):
        value = int(char)
        if double:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
        double = not double
    return total % 10 == 0


def normalized(text: str) -> str:
    """NFKC, case-folded, invisible characters removed, whitespace collapsed: so an
    obfuscated pattern (full-width letters, zero-width joiners) still matches."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
    return " ".join(folded.split())


def pattern_reason(text: str) -> Optional[str]:
    """The first refusal pattern in ``text`` (secret, credential, injection, sensitive), if any."""
    flat = normalized(text)
    if _SECRET.search(flat):
        return "secret"
    if _CREDENTIAL.search(flat):
        return "credential"
    for match in _CARD.finditer(flat):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return "credential"
    if _INJECTION.search(flat):
        return "injection"
    if _SENSITIVE.search(flat):
        return "sensitive_pattern"
    return None


def residency_allowed(residency: str, pin: str) -> bool:
    """``local`` always; ``remote:<host>`` only when the residency pin names exactly that host."""
    if residency == "local":
        return True
    pin = (pin or "").strip().lower()
    return residency.startswith("remote:") and bool(pin) and residency == f"remote:{pin}"

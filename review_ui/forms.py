"""The one shape every dashboard write posts: the operation's expected revision and an
idempotency key. Both travel in hidden fields, so a retry of the same form (a resubmit
after an uncertain answer) repeats the same request and is answered from its receipt
instead of acting twice."""
from __future__ import annotations

import uuid

from django import forms

from reconsolidation import bounds as recon_bounds


class ActionForm(forms.Form):
    expected_revision = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    idempotency_key = forms.CharField(max_length=recon_bounds.RECON_IDEMPOTENCY_KEY_MAX_CHARS, strip=False,
                                      widget=forms.HiddenInput)


class SignInForm(forms.Form):
    token = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
                            label="Bearer token")


def new_key() -> str:
    return f"review-{uuid.uuid4()}"

"""The memory browser and the owner's erasures: list and open originals and derived items,
act on an original, erase a conversation or the whole account.

Thin, like ``review_ui.views``: parse a closed form, call one service
(``memory.services.ceilings`` for an original's review, ending ("no longer true") and deletion,
``memory.services.erasure.erase_requested`` for a conversation or the account, with the
form's idempotency key so a resubmission replays), redirect with a fixed feedback code.
Erasing a conversation or the account goes through a confirmation page that says what will
go, in numbers (the account's also needs its phrase typed).
"""
from __future__ import annotations

import logging
from uuid import UUID

from django import forms
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory import vocabulary
from memory.api.inputs import ACCOUNT_ERASE_CONFIRMATION
from memory.errors import Conflict, MemoryError_, NotFound
from memory import selectors as memory_selectors
from memory.services import ceilings, erasure
from memory.services.receipts import request_sha256
from reconsolidation.services.pause import dreaming_pause_set
from review_ui import memories, selectors, words
from review_ui.forms import new_key
from review_ui.security import clear_review_cookie, review_page
from veetbot.rls import owner_context

log = logging.getLogger(__name__)  # IDs and outcome codes only
MEMORY_ACTIONS = {  # action -> (button label, destructive, feedback code)
    "mark_reviewed": ("Mark reviewed", False, "reviewed"),
    "no_longer_true": ("No longer true", False, "ended"),
    "not_here": ("Not outside its scope", False, "not_here"),
    "not_true": ("Not true", True, "not_true"),
    "delete": ("Erase this memory", True, "erased"),
}
FEEDBACK = {
    "reviewed": "Marked reviewed.",
    "ended": "Marked no longer true: it stays in your history and is no longer recalled as current.",
    "not_here": "It will no longer be recalled outside its own scope.",
    "not_true": "Marked not true: it is no longer recalled and will not be recreated.",
    "erased": "Erased: its words are gone from every table.",
    "session_erased": "The conversation and every memory formed from it are erased.",
}
CHANGED = "Conflict: this memory changed since you opened it. Here it is as it is now."
RETRY = "That did not work. Nothing was changed; you can retry."
READ_ONLY = "This sign-in may read but not change memory."


class KeyForm(forms.Form):
    idempotency_key = forms.CharField(max_length=128, strip=False, widget=forms.HiddenInput)


class RevisionForm(KeyForm):
    expected_revision = forms.IntegerField(min_value=1, widget=forms.HiddenInput)


class AccountEraseForm(KeyForm):
    confirm = forms.CharField(max_length=100, strip=False, label=f'Type "{ACCOUNT_ERASE_CONFIRMATION}"')


@require_GET
@review_page
def browse(request: HttpRequest) -> HttpResponse:
    kind = request.GET.get("kind", "originals")
    status, belief_type = request.GET.get("status", ""), request.GET.get("type", "")
    try:
        found = memories.page(request.review.principal, kind=kind, status=status, belief_type=belief_type,
                              cursor=request.GET.get("cursor"))
    except memories.UnknownFilter:
        return render(request, "review/memories.html", {
            "section": "memories", "page": None, **_filters(), "feedback": "That filter is not known.",
            "tone": "failure"}, status=400)
    return render(request, "review/memories.html", {
        "section": "memories", "page": found, "kind": kind, "status": status, "belief_type": belief_type,
        "feedback": FEEDBACK.get(request.GET.get("feedback", ""), ""), **_filters()})


def _filters() -> dict:
    return {"kinds": memories.KINDS, "statuses": [(s, words.MEMORY_STATUS.get(s, s)) for s in memories.STATUSES],
            "belief_types": vocabulary.BELIEF_TYPES}


def original(request: HttpRequest, memory_id: UUID, *, status: int = 200, feedback: str = "",
             tone: str = "success") -> HttpResponse:
    """One original, the operations that used it, its conversations and its actions."""
    principal = request.review.principal
    try:
        line, facts = selectors.source(principal, memory_id)
    except NotFound:
        raise Http404()
    return render(request, "review/original.html", {
        "section": "memories", "line": line, "facts": facts, "uses": memories.uses(principal, memory_id),
        "conversations": memories.conversations(principal, memory_id), "can_write": request.review.can_write,
        "actions": [(code, label, destructive) for code, (label, destructive, _f) in MEMORY_ACTIONS.items()],
        "form": {"expected_revision": facts["content_revision"], "idempotency_key": new_key()},
        "feedback": feedback, "tone": tone}, status=status)


@require_GET
@review_page
def original_page(request: HttpRequest, memory_id: UUID) -> HttpResponse:
    return original(request, memory_id, feedback=FEEDBACK.get(request.GET.get("feedback", ""), ""))


@require_POST
@review_page
def original_action(request: HttpRequest, memory_id: UUID, action: str) -> HttpResponse:
    if action not in MEMORY_ACTIONS:
        raise Http404()
    if not request.review.can_write:
        return original(request, memory_id, status=403, feedback=READ_ONLY, tone="failure")
    form = RevisionForm(request.POST)
    if not form.is_valid():
        return original(request, memory_id, status=400, feedback="The request was malformed.", tone="failure")
    principal = request.review.principal
    try:
        _line, facts = selectors.source(principal, memory_id)
        if facts["content_revision"] != form.cleaned_data["expected_revision"]:
            return original(request, memory_id, status=409, tone="conflict", feedback=CHANGED)
        if action == "delete":
            ceilings.memory_erase_within_ceiling(principal=principal, memory_id=memory_id, ceiling=selectors.CEILING)
        elif action == "no_longer_true":
            ceilings.memory_end_within_ceiling(principal=principal, memory_id=memory_id, ceiling=selectors.CEILING,
                                               expected_revision=form.cleaned_data["expected_revision"])
        else:
            ceilings.memory_review_within_ceiling(principal=principal, memory_id=memory_id, action=action,
                                                  ceiling=selectors.CEILING)
    except NotFound:
        raise Http404()
    except Conflict:
        return original(request, memory_id, status=409, tone="conflict", feedback=CHANGED)
    except MemoryError_:
        return original(request, memory_id, status=400, feedback=RETRY, tone="failure")
    log.info("review memory %s memory=%s", action, memory_id)
    code = MEMORY_ACTIONS[action][2]
    if request.POST.get("back") == "journal":  # a control on a journal row: back to the journal
        return HttpResponseRedirect(f"{reverse('review:journal')}?feedback={code}", status=303)
    if action == "delete":
        return HttpResponseRedirect(f"{reverse('review:memories')}?feedback={code}", status=303)
    return HttpResponseRedirect(f"{reverse('review:original', args=[memory_id])}?feedback={code}", status=303)


def _session_counts(request: HttpRequest, session_id: UUID) -> dict:
    """What erasing the conversation takes with it, in numbers (no words of it)."""
    with owner_context(request.review.principal):
        reach = memory_selectors.session_reach(session_id=session_id)
    if reach is None:
        raise Http404()
    return {"messages": reach[0], "memories": reach[1]}


@require_http_methods(["GET", "POST"])
@review_page
def erase_session(request: HttpRequest, session_id: UUID) -> HttpResponse:
    counts = _session_counts(request, session_id)
    context = {"section": "memories", "session_id": session_id, "counts": counts,
               "form": {"idempotency_key": new_key()}, "can_write": request.review.can_write}
    if request.method == "GET":
        return render(request, "review/erase_session.html", context)
    form = KeyForm(request.POST)
    if not request.review.can_write or not form.is_valid():
        return render(request, "review/erase_session.html", {**context, "tone": "failure",
                      "feedback": READ_ONLY if not request.review.can_write else "The request was malformed."},
                      status=403 if not request.review.can_write else 400)
    try:
        erasure.erase_requested(
            principal=request.review.principal, target="session", target_id=session_id,
            key=form.cleaned_data["idempotency_key"],
            request_sha256=request_sha256(route="sessions.erase", params={"id": str(session_id)}, body=None))
    except NotFound:
        raise Http404()
    except MemoryError_:
        return render(request, "review/erase_session.html", {**context, "tone": "failure", "feedback": RETRY},
                      status=400)
    log.info("review erase session=%s", session_id)
    return HttpResponseRedirect(f"{reverse('review:memories')}?feedback=session_erased", status=303)


@require_POST
@review_page
def dreaming(request: HttpRequest) -> HttpResponse:
    """Pause or resume dreaming for this owner; the form names the state wanted, so a
    resubmission is harmless."""
    wanted = request.POST.get("paused")
    if not request.review.can_write:
        return HttpResponse(READ_ONLY, status=403, content_type="text/plain")
    if wanted not in ("true", "false"):
        return HttpResponse("The request was malformed.", status=400, content_type="text/plain")
    dreaming_pause_set(principal=request.review.principal, paused=wanted == "true")
    log.info("review dreaming paused=%s", wanted)
    return HttpResponseRedirect(reverse("review:journal"), status=303)


@require_http_methods(["GET", "POST"])
@review_page
def erase_account(request: HttpRequest) -> HttpResponse:
    context = {"section": "memories", "phrase": ACCOUNT_ERASE_CONFIRMATION, "form": {"idempotency_key": new_key()},
               "can_write": request.review.can_write}
    if request.method == "GET":
        return render(request, "review/erase_account.html", context)
    form = AccountEraseForm(request.POST)
    if not request.review.can_write:
        return render(request, "review/erase_account.html", {**context, "tone": "failure", "feedback": READ_ONLY},
                      status=403)
    if not form.is_valid() or form.cleaned_data["confirm"] != ACCOUNT_ERASE_CONFIRMATION:
        return render(request, "review/erase_account.html", {**context, "tone": "failure", "feedback": (
            "The phrase did not match exactly, so nothing was erased.")}, status=400)
    try:
        erasure.erase_requested(
            principal=request.review.principal, target="account", target_id=None,
            key=form.cleaned_data["idempotency_key"],
            request_sha256=request_sha256(route="account.erase", params={}, body={"confirm": ACCOUNT_ERASE_CONFIRMATION}))
    except MemoryError_:
        return render(request, "review/erase_account.html", {**context, "tone": "failure", "feedback": RETRY},
                      status=400)
    log.info("review erase account")
    response = HttpResponseRedirect(reverse("review:sign-in"), status=303)
    clear_review_cookie(response)  # every token, and so this sign-in, is revoked
    return response

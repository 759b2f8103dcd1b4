"""Thin views of the review dashboard: parse, call one selector or service, render.

Writes go through reconsolidation's services (``services.operations.operation_act`` and,
for derived memories, ``services.derived``); the dashboard
has no rules of its own. After a write: success redirects to the fresh detail with a
fixed feedback code (never content in the URL); a conflict re-renders the current
operation with a new key (the old request is settled); any other failure keeps the
submitted key and revision so an explicit retry repeats the same request.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional
from urllib.parse import urlencode
from uuid import UUID

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory.errors import Conflict, Invalid, MemoryError_, NotFound
from memory.services.receipts import request_sha256
from reconsolidation.services.derived import derived_delete, derived_review
from reconsolidation.services.operations import operation_act
from memory import vocabulary
from review_ui import ask as asking, bounds, bulk, chart, memory_views, selectors
from review_ui import triage
from review_ui.forms import ActionForm, SignInForm, new_key
from review_ui.security import clear_review_cookie, public_page, review_page, set_review_cookie
from review_ui.session import sign_in as exchange_bearer
from review_ui.status import status as status_panel

log = logging.getLogger(__name__)  # IDs and outcome codes only
ASSETS = {"review.js": "text/javascript", "review.css": "text/css", "favicon.svg": "image/svg+xml"}
ASSET_DIR = Path(__file__).resolve().parent / "static" / "review"
FEEDBACK = {  # fixed phrases a redirect may name by code
    "approved": "Approved: the proposal is now active.",
    "rejected": "Rejected: this proposal will not be recorded again.",
    "undone": "Undone: duplicate suppression is reversed; every original is recallable on its own.",
    "dismissed": "Dismissed.",
    "not_here": "Restricted to its current local scope.",
    "not_true": "Marked not true: it is retired and will not be recreated.",
    "deleted": "Deleted.",
}
DERIVED_ACTIONS = (  # (action, button label, destructive)
    ("dismiss", "Dismiss", False), ("not_here", "Not here", False), ("not_true", "Not true", True),
    ("delete", "Delete", True),
)
DERIVED_FEEDBACK = {"dismiss": "dismissed", "not_here": "not_here", "not_true": "not_true", "delete": "deleted"}
RETRY_FEEDBACK = "That did not work. Nothing was changed; you can retry the same request."
READ_ONLY = "This sign-in may read but not change memory."
MALFORMED = "The request was malformed."
OPERATION_ACTIONS = {"approve": "approved", "reject": "rejected", "undo": "undone"}  # action -> feedback code


@require_http_methods(["GET", "POST"])
@public_page
def sign_in(request: HttpRequest) -> HttpResponse:
    form = SignInForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        cookie = exchange_bearer(form.cleaned_data["token"])
        if cookie is not None:
            response = HttpResponseRedirect(reverse("review:journal"), status=303)
            set_review_cookie(response, cookie)
            return response
        log.info("review sign-in refused")
        return render(request, "review/sign_in.html", {"form": SignInForm(), "refused": True}, status=401)
    return render(request, "review/sign_in.html", {"form": SignInForm()})


@require_POST
@public_page
def sign_out(request: HttpRequest) -> HttpResponse:
    response = HttpResponseRedirect(reverse("review:sign-in"), status=303)
    clear_review_cookie(response)
    return response


@require_GET
@public_page
def asset(request: HttpRequest, name: str) -> HttpResponse:
    if name not in ASSETS:
        raise Http404()
    return HttpResponse((ASSET_DIR / name).read_bytes(), content_type=ASSETS[name])


@require_GET
@review_page
def journal(request: HttpRequest) -> HttpResponse:
    principal = request.review.principal
    try:
        found = triage.filters(principal, lens=request.GET.get("lens", "all"),
                                      state=request.GET.get("state", ""), subject=request.GET.get("subject"))
        page = triage.journal_page(principal, found, cursor=request.GET.get("cursor"))
    except Invalid:
        return _journal(request, None, triage.Filters(), status=400,
                        feedback="That filter is not known or no longer available.", tone="failure")
    return _journal(request, page, found, feedback=memory_views.FEEDBACK.get(request.GET.get("feedback", ""), ""))


def _journal(request: HttpRequest, page, found, *, status: int = 200, **extra) -> HttpResponse:
    panel = status_panel(request.review.principal)
    return render(request, "review/journal.html", {
        "page": page, "filters": found, "lens": found.lens, "state": found.state, "lenses": triage.LENSES,
        "states": [(code, selectors.STATE_LABELS.get(code, code)) for code in triage.STATES], "status": panel,
        "chart": chart.render(panel.days, panel.daily_ceiling_usd, paid=panel.paid),
        "legend": chart.legend(panel.daily_ceiling_usd, paid=panel.paid), "can_write": request.review.can_write,
        "section": "journal", "exact_key": new_key(), "side_actions": triage.SIDE_ACTIONS, **extra,
    }, status=status)


def _journal_refusal(request: HttpRequest, status: int, feedback: str) -> HttpResponse:
    """The unfiltered journal with a refusal; nothing was read from or written for the post."""
    unfiltered = triage.Filters()
    return _journal(request, triage.journal_page(request.review.principal, unfiltered), unfiltered,
                    status=status, tone="failure", feedback=feedback)


@require_POST
@review_page
def journal_subject(request: HttpRequest) -> HttpResponse:
    """The subject filter, POSTed so its text never enters a URL: it becomes the ID of one
    original with that subject, and the journal's URL carries only that ID."""
    principal = request.review.principal
    lens, state = request.POST.get("lens", "all"), request.POST.get("state", "")
    subject = request.POST.get("subject", "")[:bounds.REVIEW_SUBJECT_MAX_CHARS]
    try:
        found = triage.filters(principal, lens=lens, state=state, subject=None)
    except Invalid:
        found = triage.Filters()
    token = triage.subject_token(principal, subject)
    if token is None:
        page = triage.journal_page(principal, found)
        return _journal(request, page, found, status=200, typed_subject=subject, tone="failure",
                        feedback="No memory has that subject, so the journal is not filtered by it.")
    query = urlencode({k: v for k, v in (("lens", found.lens), ("state", found.state), ("subject", token)) if v})
    return HttpResponseRedirect(f"{reverse('review:journal')}?{query}", status=303)


@require_POST
@review_page
def bulk_preview(request: HttpRequest) -> HttpResponse:
    """Every original each selected proposal affects, before anything is written."""
    action = request.POST.get("action", "")
    try:
        ids = bulk.selection(action, request.POST.getlist("operation"))
    except bulk.Refused:
        return _journal_refusal(request, 400, "Select at least one pending proposal, then choose approve or reject.")
    if not request.review.can_write:
        return _journal_refusal(request, 403, READ_ONLY)
    found = bulk.preview(request.review.principal, action, ids)
    return render(request, "review/bulk_preview.html", {"preview": found, "section": "journal",
                                                        "undo_explanation": selectors.UNDO_EXPLANATION})


@require_POST
@review_page
def bulk_apply(request: HttpRequest) -> HttpResponse:
    """One revision-checked, idempotent review per confirmed item; the answer is rendered,
    not redirected, so a reload repeats the same keys and replays."""
    action = request.POST.get("action", "")
    try:
        items = bulk.confirmation(action, request.POST.getlist("item"))
    except bulk.Refused:
        return _journal_refusal(request, 400, MALFORMED)
    if not request.review.can_write:
        return _journal_refusal(request, 403, READ_ONLY)
    results = bulk.apply(request.review.principal, action, items)
    done = sum(1 for r in results if r.outcome in ("approved", "rejected"))
    verb = "Approved" if action == "approve" else "Rejected"
    return render(request, "review/bulk_result.html", {
        "action": action, "results": results, "failed": [r for r in results if r.failed], "section": "journal",
        "feedback": f"{verb} {done} of {len(results)}.", "tone": "success" if done == len(results) else "conflict",
    })


@require_POST
@review_page
def bulk_exact(request: HttpRequest) -> HttpResponse:
    """Approve the exact copies the journal showed, in one step; the journal is rendered
    again (not redirected) with how many were approved, so a reload replays the same key."""
    try:
        expected = bulk.exact_request(request.POST.getlist("operation"), request.POST.get("idempotency_key", ""))
    except bulk.Refused:
        return _journal_refusal(request, 400, MALFORMED)
    if not request.review.can_write:
        return _journal_refusal(request, 403, READ_ONLY)
    answers = bulk.approve_exact(request.review.principal, expected, request.POST["idempotency_key"])
    done = sum(1 for a in answers if a.approved)
    unfiltered = triage.Filters()
    feedback = f"Approved {done} of {len(answers)} exact cop{'y' if len(answers) == 1 else 'ies'}."
    if done < len(answers):
        feedback += " The rest changed since the journal was shown, so they were left for you to open."
    return _journal(request, triage.journal_page(request.review.principal, unfiltered), unfiltered,
                    feedback=feedback, tone="success" if done == len(answers) else "conflict")


def _detail(request: HttpRequest, operation_id: UUID, *, template: str = "review/detail.html", status: int = 200,
            feedback: str = "", tone: str = "success", retained: dict | None = None,
            retained_derived: dict | None = None) -> HttpResponse:
    try:
        detail = selectors.operation_detail(request.review.principal, operation_id)
    except NotFound:
        raise Http404()
    form = retained or {"expected_revision": detail.operation.revision, "idempotency_key": new_key()}
    derived_form = retained_derived or {"expected_revision": detail.derived_revision, "idempotency_key": new_key()}
    return render(request, template, {"detail": detail, "form": form, "feedback": feedback, "tone": tone,
                                      "derived_form": derived_form, "derived_actions": DERIVED_ACTIONS,
                                      "can_write": request.review.can_write, "undo_explanation": selectors.UNDO_EXPLANATION},
                  status=status)


@require_GET
@review_page
def detail(request: HttpRequest, operation_id: UUID) -> HttpResponse:
    return _detail(request, operation_id, feedback=FEEDBACK.get(request.GET.get("feedback", ""), ""))


@require_GET
@review_page
def undo_preview(request: HttpRequest, operation_id: UUID) -> HttpResponse:
    return _detail(request, operation_id, template="review/undo_preview.html")




def _write_request(request: HttpRequest, operation_id: UUID) -> tuple[Optional[dict], Optional[HttpResponse]]:
    """The posted action form of a sign-in that may write: (values, None), or (None, the
    refusal page: 403 for a read-only sign-in, 400 for a malformed form)."""
    if not request.review.can_write:
        return None, _detail(request, operation_id, status=403, tone="failure",
                             feedback=READ_ONLY)
    form = ActionForm(request.POST)
    if not form.is_valid():
        return None, _detail(request, operation_id, status=400, tone="failure",
                             feedback=MALFORMED)
    return form.cleaned_data, None


def _conflict(request: HttpRequest, operation_id: UUID) -> HttpResponse:
    return _detail(request, operation_id, status=409, tone="conflict",
                   feedback="Conflict: this item changed since you opened it. Here it is as it is now.")


@require_POST
@review_page
def operation_action(request: HttpRequest, operation_id: UUID, action: str) -> HttpResponse:
    if action not in OPERATION_ACTIONS:
        raise Http404()
    values, refused = _write_request(request, operation_id)
    if refused is not None:
        return refused
    code = OPERATION_ACTIONS[action]
    try:
        operation_act(principal=request.review.principal, action=action, operation_id=operation_id,
                      expected_revision=values["expected_revision"], idempotency_key=values["idempotency_key"])
    except NotFound:
        raise Http404()
    except Conflict as exc:
        log.info("review %s conflict operation=%s reason=%s", action, operation_id, getattr(exc, "reason", "conflict"))
        return _conflict(request, operation_id)
    except MemoryError_:
        return _detail(request, operation_id, status=400, tone="failure", retained=values,
                       feedback=RETRY_FEEDBACK)
    log.info("review %s operation=%s", action, operation_id)
    return HttpResponseRedirect(f"{reverse('review:detail', args=[operation_id])}?feedback={code}", status=303)


@require_POST
@review_page
def derived_action(request: HttpRequest, operation_id: UUID, action: str) -> HttpResponse:
    """Dismiss / not here / not true / delete on the operation's derived memory, through the
    governed derived service (its rules, its receipts). The derived revision the page showed
    is part of the request, so a retry of the same form is the same request, and the service
    checks it against the row it locks (a change between this read and the write conflicts)."""
    if action not in DERIVED_FEEDBACK:
        raise Http404()
    values, refused = _write_request(request, operation_id)
    if refused is not None:
        return refused
    try:
        current = selectors.operation_detail(request.review.principal, operation_id)
    except NotFound:
        raise Http404()
    if current.derived_id is None:
        raise Http404()
    if current.derived_revision != values["expected_revision"] or "delete" not in current.actions:
        return _conflict(request, operation_id)
    digest = request_sha256(route=f"review.derived.{action}", params={"id": str(current.derived_id)},
                            body={"expected_revision": values["expected_revision"]})
    try:
        if action == "delete":
            derived_delete(principal=request.review.principal, derived_id=current.derived_id,
                           ceiling=selectors.CEILING, idempotency_key=values["idempotency_key"],
                           request_sha256=digest, expected_revision=values["expected_revision"])
        else:
            derived_review(principal=request.review.principal, derived_id=current.derived_id, action=action,
                           ceiling=selectors.CEILING, idempotency_key=values["idempotency_key"],
                           request_sha256=digest, expected_revision=values["expected_revision"])
    except NotFound:
        raise Http404()
    except Conflict:
        return _conflict(request, operation_id)
    except MemoryError_:
        return _detail(request, operation_id, status=400, tone="failure", retained_derived=values,
                       feedback=RETRY_FEEDBACK)
    log.info("review derived %s operation=%s", action, operation_id)
    return HttpResponseRedirect(
        f"{reverse('review:detail', args=[operation_id])}?feedback={DERIVED_FEEDBACK[action]}", status=303)


@require_http_methods(["GET", "POST"])
@review_page
def ask(request: HttpRequest) -> HttpResponse:
    """Ask your memory: the question is POSTed (never in a URL) and answered by the same
    recall as the search API."""
    context = {"section": "ask", "ceilings": vocabulary.SENSITIVITIES, "ceiling": selectors.CEILING,
               "max_chars": asking.QUERY_MAX_CHARS}
    if request.method == "GET":
        return render(request, "review/ask.html", context)
    query = request.POST.get("query", "")
    ceiling = request.POST.get("ceiling", selectors.CEILING)
    refusal = asking.validate(query) or ("" if ceiling in vocabulary.SENSITIVITIES else MALFORMED)
    if refusal:
        return render(request, "review/ask.html", {**context, "query": query[:asking.QUERY_MAX_CHARS],
                                                   "feedback": refusal, "tone": "failure"}, status=400)
    answer = asking.ask(request.review.principal, query, ceiling=ceiling)
    return render(request, "review/ask.html", {**context, "query": query, "ceiling": ceiling, "answer": answer})


@require_GET
@review_page
def source(request: HttpRequest, memory_id: UUID) -> HttpResponse:
    operation = request.GET.get("operation")
    try:
        operation_id = UUID(operation) if operation else None
        line, facts = selectors.source(request.review.principal, memory_id, operation_id=operation_id)
    except (ValueError, NotFound):
        raise Http404()
    return render(request, "review/source.html", {"line": line, "facts": facts})

"""The dashboard's HTTP guard: every review response is private, uncacheable and under a
strict Content-Security-Policy; unsafe requests must come from this origin; review pages
need a live review session.

Django's own middleware already refuses foreign hosts (``ALLOWED_HOSTS``) and requests
without the CSRF token; ``same_origin`` adds the Origin check the dashboard asks for on
every unsafe method, so a cross-site form post is refused even before CSRF is consulted.
No header, redirect or error carries private content: redirects name only routes.
"""
from __future__ import annotations

import functools
from typing import Callable

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden, HttpResponseNotFound, HttpResponseRedirect
from django.urls import reverse

from review_ui import bounds
from review_ui.session import COOKIE_PATH, current_session

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; connect-src 'none'"
)
SAFE_METHODS = ("GET", "HEAD")


def harden(response: HttpResponse) -> HttpResponse:
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response["Cache-Control"] = "private, no-store"
    response["Referrer-Policy"] = "same-origin"  # "no-referrer" makes Chromium send Origin: null on posts
    response["X-Content-Type-Options"] = "nosniff"
    response["X-Frame-Options"] = "DENY"
    response["Cross-Origin-Opener-Policy"] = "same-origin"
    return response


def same_origin(request: HttpRequest) -> bool:
    """An unsafe request's Origin (when the browser sends one) is exactly this site."""
    if request.method in SAFE_METHODS:
        return True
    origin = request.headers.get("Origin")
    if origin is None:
        return request.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none")
    return origin == f"{request.scheme}://{request.get_host()}"


def set_review_cookie(response: HttpResponse, value: str) -> None:
    response.set_cookie(bounds.REVIEW_COOKIE_NAME, value, max_age=bounds.REVIEW_COOKIE_MAX_AGE_SECONDS,
                        path=COOKIE_PATH, secure=True, httponly=True, samesite="Strict")


def clear_review_cookie(response: HttpResponse) -> None:
    response.delete_cookie(bounds.REVIEW_COOKIE_NAME, path=COOKIE_PATH, samesite="Strict")


def public_page(view: Callable) -> Callable:
    """Hardened headers and the Origin check, without a session (sign-in, assets)."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not same_origin(request):
            return harden(HttpResponseForbidden("Cross-origin request refused."))
        try:
            return harden(view(request, *args, **kwargs))
        except Http404:
            return harden(HttpResponseNotFound("Not found."))

    return wrapped


def review_page(view: Callable) -> Callable:
    """A page of the signed-in owner: ``request.review`` is the live session. An ended
    session (revoked token, changed scopes, expired or forged cookie) goes back to sign-in
    and the stale cookie is cleared."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not same_origin(request):
            return harden(HttpResponseForbidden("Cross-origin request refused."))
        session = current_session(request.COOKIES.get(bounds.REVIEW_COOKIE_NAME))
        if session is None:
            response = HttpResponseRedirect(reverse("review:sign-in"))
            if bounds.REVIEW_COOKIE_NAME in request.COOKIES:
                clear_review_cookie(response)
            return harden(response)
        request.review = session
        try:
            return harden(view(request, *args, **kwargs))
        except Http404:  # unknown and foreign IDs alike: one fixed answer, no existence leak
            return harden(HttpResponseNotFound("Not found."))

    return wrapped

"""The API's one error envelope: ``{"error": {"code": ..., "details": [...]}}``.

Details never echo request content or private text: each names a field (a dotted path
into the body, a query parameter or a header) and a problem (a short code or a fixed
phrase). Foreign, unknown and above-ceiling IDs are all ``not_found`` so nothing leaks
existence. Service errors (``memory.errors``) map here too, so views never translate them.
"""
from __future__ import annotations

import re

from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response

from memory import errors


class ApiError(exceptions.APIException):
    code = "error"
    status_code = status.HTTP_400_BAD_REQUEST

    def __init__(self, details: list | None = None):
        super().__init__(detail=self.code)
        self.details = details or []


class ValidationFailed(ApiError):
    code = "validation_error"
    status_code = status.HTTP_400_BAD_REQUEST


class NotFound(ApiError):
    code = "not_found"
    status_code = status.HTTP_404_NOT_FOUND


class Conflict(ApiError):
    code = "conflict"
    status_code = status.HTTP_409_CONFLICT


NO_STORE = "private, no-store"
ERROR_CODES = (
    "validation_error", "authorization_error", "not_found", "conflict", "method_not_allowed",
    "not_acceptable", "rate_limited", "error",
)


def problem(field: str, what: str) -> dict:
    """One detail entry: which field, what is wrong with it (never its value)."""
    return {"field": field, "problem": what}


def error_response(code: str, http_status: int, details: list | None = None) -> Response:
    response = Response({"error": {"code": code, "details": details or []}}, status=http_status)
    response["Cache-Control"] = NO_STORE
    return response


# Services name nested paths like ``memories[0].sources[1].event``; a single-belief API
# body has no ``memories`` list, so the prefix goes and indices become dotted segments.
_BATCH_PREFIX = re.compile(r"^memories\[\d+\]\.?")
_INDEX = re.compile(r"\[(\d+)\]")


def _service_problem(text: str) -> dict:
    field, sep, what = text.partition(": ")
    if not sep:
        return problem("body", text)
    field = _INDEX.sub(r".\1", _BATCH_PREFIX.sub("", field)) or "body"
    return problem(field, what)


# Conflicts from services carry fixed messages; the API answers with a stable code.
_CONFLICT_PROBLEMS = {
    "claim was rejected by the owner": problem("statement", "rejected_claim"),
    "stale content revision": problem("content_revision", "stale"),
}


def _service_error(exc) -> Response | None:
    if isinstance(exc, errors.Invalid):
        return error_response("validation_error", 400, [_service_problem(p) for p in exc.problems])
    if isinstance(exc, errors.MissingReference):
        return error_response("not_found", 404, [_service_problem(p) for p in exc.problems])
    if isinstance(exc, errors.NotFound):
        return error_response("not_found", 404)
    if isinstance(exc, errors.StateConflict):
        return error_response("conflict", 409, [_service_problem(p) for p in exc.problems])
    if isinstance(exc, errors.Conflict):
        if hasattr(exc, "api_field") and hasattr(exc, "api_problem"):
            return error_response("conflict", 409, [problem(exc.api_field, exc.api_problem)])
        known = _CONFLICT_PROBLEMS.get(str(exc))
        return error_response("conflict", 409, [known] if known else [])
    return None


def exception_handler(exc, context):
    if isinstance(exc, ApiError):
        return error_response(exc.code, exc.status_code, exc.details)
    if (service := _service_error(exc)) is not None:
        return service
    if isinstance(exc, Http404) or isinstance(exc, exceptions.NotFound):
        return error_response("not_found", 404)
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        response = error_response("authorization_error", 401)
        response["WWW-Authenticate"] = 'Bearer realm="veetbot"'
        return response
    if isinstance(exc, exceptions.PermissionDenied):
        return error_response("authorization_error", 403)
    if isinstance(exc, (exceptions.ParseError, exceptions.ValidationError, exceptions.UnsupportedMediaType)):
        return error_response("validation_error", 400)
    if isinstance(exc, exceptions.MethodNotAllowed):
        return error_response("method_not_allowed", 405)
    if isinstance(exc, exceptions.NotAcceptable):
        return error_response("not_acceptable", 406)
    if isinstance(exc, exceptions.Throttled):
        return error_response("rate_limited", 429)
    if isinstance(exc, exceptions.APIException):
        return error_response("error", exc.status_code)
    return None

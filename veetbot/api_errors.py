"""The API's one error envelope: ``{"error": {"code": ..., "details": [...]}}``.

Details never echo request content or private text: they name fields and problems only.
Foreign, unknown and above-ceiling IDs are all ``not_found`` so nothing leaks existence.
"""
from __future__ import annotations

from rest_framework import exceptions, status
from rest_framework.response import Response
from django.http import Http404


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


def error_response(code: str, http_status: int, details: list | None = None) -> Response:
    response = Response({"error": {"code": code, "details": details or []}}, status=http_status)
    response["Cache-Control"] = NO_STORE
    return response


def exception_handler(exc, context):
    if isinstance(exc, ApiError):
        return error_response(exc.code, exc.status_code, exc.details)
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
    if isinstance(exc, exceptions.Throttled):
        return error_response("rate_limited", 429)
    return None

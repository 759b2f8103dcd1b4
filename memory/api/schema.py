"""OpenAPI pieces shared by the owner API's views: the bearer scheme, common parameters
and the error responses every route documents. Documentation only — nothing here checks
a request."""
from __future__ import annotations

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

from memory import vocabulary
from memory.api.parsing import IDEMPOTENCY_HEADER
from memory.api.serializers import ErrorEnvelopeSerializer


class OwnerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "veetbot.auth.OwnerTokenAuthentication"
    name = "ownerToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "Owner token (vbt_…). Scopes: memory.read for reads, memory.write for writes.",
        }


CEILING = OpenApiParameter(
    "ceiling", OpenApiTypes.STR, OpenApiParameter.QUERY, required=True, enum=list(vocabulary.SENSITIVITIES),
    description=(
        "Highest sensitivity the caller may see (public < internal < sensitive < restricted). "
        "Anything above it is not_found, like foreign or unknown IDs."
    ),
)
IDEMPOTENCY_KEY = OpenApiParameter(
    IDEMPOTENCY_HEADER, OpenApiTypes.STR, OpenApiParameter.HEADER, required=True,
    description=(
        f"Non-blank, at most {settings.IDEMPOTENCY_KEY_MAX_CHARS} characters. The same key with the same "
        "request replays the first response (re-rendering the resource's current state); with any other "
        "request it is a conflict."
    ),
)
REPLAYED = OpenApiParameter(
    "Idempotency-Replayed", OpenApiTypes.STR, OpenApiParameter.HEADER, response=True, enum=["true"],
    description="Present when the response replays an earlier request with the same Idempotency-Key.",
)


def path_id(name: str, what: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.UUID, OpenApiParameter.PATH, description=f"The {what}'s ID.")


def errors(*statuses: int) -> dict:
    descriptions = {
        400: "validation_error: the request is malformed or not allowed (details name fields, never values).",
        401: "authorization_error: missing, malformed, unknown or revoked token.",
        403: "authorization_error: the token lacks the scope this method needs.",
        404: "not_found: unknown, foreign, erased or above-ceiling ID (or the API is disabled).",
        409: "conflict: Idempotency-Key reused with another request, or a claim the owner rejected.",
    }
    return {code: OpenApiResponse(ErrorEnvelopeSerializer, description=descriptions[code]) for code in statuses}


READ_ERRORS = errors(400, 401, 403, 404)
WRITE_ERRORS = errors(400, 401, 403, 404, 409)

"""OpenAPI pieces shared by the owner API's views: the bearer scheme, request bodies and
parameters derived from what parses them, and the error responses every route documents.

Documentation only — nothing here checks a request. What a client may send is described
*from the parsers themselves* so the document cannot drift from them: request bodies are
the strict pydantic models (``memory.api.inputs`` and friends) rendered as OpenAPI 3.0,
query parameters are the ``parsing.Param`` specs the views parse with, the Idempotency-Key
header is the rule ``parsing.idempotency_key`` applies.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.settings import spectacular_settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

from memory.api import parsing
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


# --- request bodies: the pydantic models, as OpenAPI 3.0 -------------------------------------

def _oas30(schema: Any) -> Any:
    """One pydantic (JSON Schema 2020-12) schema as an OpenAPI 3.0 schema object.

    ``Optional[X]`` (anyOf X/null) becomes X with ``nullable``; ``const`` a one-value enum;
    titles go. A free string (no enum, format or pattern) states the parser's global rule
    that NUL is refused (``parsing.json_object``).
    """
    if not isinstance(schema, dict):
        return schema
    out: dict = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key == "properties":
            out[key] = {name: _oas30(item) for name, item in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _oas30(value)
        elif key in ("anyOf", "oneOf", "allOf"):
            out[key] = [_oas30(item) for item in value]
        elif key == "const":
            out["enum"] = [value]
        else:
            out[key] = value
    branches = out.get("anyOf")
    if branches and {"type": "null"} in branches:
        rest = [item for item in out.pop("anyOf") if item != {"type": "null"}]
        if len(rest) == 1 and "$ref" in rest[0]:
            out["allOf"] = rest
        elif len(rest) == 1:
            out = {**rest[0], **out}
            if "enum" in out:  # drf-spectacular's convention: a nullable choice lists null
                out["enum"] = [*out["enum"], None]
        else:
            out["anyOf"] = rest
        out["nullable"] = True
    if out.get("type") == "string" and not {"enum", "format", "pattern"} & set(out):
        out["pattern"] = parsing.NO_NUL.pattern
    return out


def enum_as_pattern(schema: dict) -> None:
    """``json_schema_extra`` for a choice whose value set is already named by another
    field: the same values as one anchored pattern, so drf-spectacular does not give one
    choice set two enum component names (a schema warning)."""
    values = schema.pop("enum")
    schema["pattern"] = "^(" + "|".join(values) + ")$"


class StrictBodyScheme(OpenApiSerializerExtension):
    """``@extend_schema(request=SomeBody)`` with a strict pydantic model: the model is the
    documentation (closed objects, bounds, patterns, defaults), so there is no second copy.
    Nested models become components of their own (``SourceRequest``)."""

    target_class = "pydantic.BaseModel"
    match_subclasses = True
    priority = 1  # before drf-spectacular's own pydantic contrib (serialization mode, 3.1 nulls)

    def get_name(self, auto_schema, direction):
        return self.target.__name__

    def map_serializer(self, auto_schema, direction):
        suffix = "Request" if direction == "request" and spectacular_settings.COMPONENT_SPLIT_REQUEST else ""
        document = self.target.model_json_schema(
            mode="validation", ref_template="#/components/schemas/{model}" + suffix,
        )
        for name, nested in document.pop("$defs", {}).items():
            auto_schema.registry.register_on_missing(ResolvedComponent(
                name=name + suffix, type=ResolvedComponent.SCHEMA, object=name + suffix, schema=_oas30(nested),
            ))
        return _oas30(document)


# --- parameters ------------------------------------------------------------------------------

def query_parameters(spec: dict[str, parsing.Param]) -> list[OpenApiParameter]:
    """The documented query parameters of a route: exactly the spec it parses with."""
    return [
        OpenApiParameter(name, param.schema, OpenApiParameter.QUERY, required=param.required,
                         description=param.description or None)
        for name, param in spec.items()
    ]


IDEMPOTENCY_KEY = OpenApiParameter(
    parsing.IDEMPOTENCY_HEADER,
    {"type": "string", "minLength": 1, "maxLength": settings.IDEMPOTENCY_KEY_MAX_CHARS,
     "pattern": parsing.NON_BLANK.pattern},
    OpenApiParameter.HEADER, required=True,
    description=(
        f"Non-blank (some character that is not whitespace), at most {settings.IDEMPOTENCY_KEY_MAX_CHARS} "
        "characters. The same key with the same request replays the first response (re-rendering the "
        "resource's current state); with any other request it is a conflict."
    ),
)
def replayed(status: int) -> OpenApiParameter:
    """The response header of a write's success status."""
    return OpenApiParameter(
        "Idempotency-Replayed", OpenApiTypes.STR, OpenApiParameter.HEADER, response=[status], enum=["true"],
        description="Present when the response replays an earlier request with the same Idempotency-Key.",
    )


def path_id(name: str, what: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.UUID, OpenApiParameter.PATH, description=(
        f"The {what}'s ID (canonical hyphenated UUID; anything else names nothing and is not_found)."))


# --- error responses -------------------------------------------------------------------------

_ERRORS = {
    400: "validation_error: the request is malformed or not allowed (details name fields, never values). "
         "Besides what this document states, also for rules it cannot: a body that is not a JSON object or "
         "has duplicate keys, strings with lone surrogates, the cross-field rules each route describes, a "
         "cursor not issued for this very request.",
    401: "authorization_error: missing, malformed, unknown or revoked token.",
    403: "authorization_error: the token lacks the scope this method needs.",
    404: "not_found: unknown, foreign, erased or above-ceiling ID (or the API is disabled); also a "
         "well-formed body whose reference names nothing of the owner's (a cited message part, a session "
         "scope, a person speaker): then details name the field.",
    406: "not_acceptable: the Accept header admits no JSON response.",
    409: "conflict: Idempotency-Key reused with another request, or a claim the owner rejected.",
}


def errors(*statuses: int) -> dict:
    return {code: OpenApiResponse(ErrorEnvelopeSerializer, description=_ERRORS[code]) for code in statuses}


# The web server refuses a request line longer than its limit (gunicorn: 4,094 bytes) before
# the application sees it: a plain 414 without the JSON envelope. Documented on every route so
# a client generated from this document knows the answer exists.
URI_TOO_LONG = {414: OpenApiResponse(description=(
    "The request line (method, path and query) is longer than the web server accepts; answered by the "
    "server before the application, without the JSON error envelope."))}
READ_ERRORS = {**errors(400, 401, 403, 404, 406), **URI_TOO_LONG}
WRITE_ERRORS = {**errors(400, 401, 403, 404, 406, 409), **URI_TOO_LONG}

"""Parsing of owner-API requests: closed JSON bodies, closed query strings, path IDs, headers.

Everything the client sends is checked here before a service runs, and every failure is
a ``validation_error`` whose details name a field and a problem code — never a value
the client sent (not even a fragment of one: pydantic's own messages can quote input,
so only its error *types* are used). Unknown field and parameter names are named only
when they look like identifiers.

Bodies are parsed by hand (not by DRF parsers) so that duplicate keys, NaN/Infinity,
NUL characters and lone surrogates are refused before strict pydantic validation.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, TypeVar
from uuid import UUID

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from pydantic import BaseModel, ValidationError

from memory import vocabulary
from veetbot.api_errors import NotFound, ValidationFailed, problem

IDEMPOTENCY_HEADER = "Idempotency-Key"
# What the server calls blank, as a character class every regex dialect reads alike (Python,
# ECMA-262 in the OpenAPI document, Rust in pydantic): exactly the characters of
# ``str.isspace`` — not ``\s``, whose sets differ between those dialects.
WHITESPACE_CLASS = r"\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# Unanchored: a value is non-blank when this finds one character (JSON Schema patterns
# search, as ``re.search`` does).
NON_BLANK = re.compile(f"[^{WHITESPACE_CLASS}]")
# JSON strings PostgreSQL can store: no NUL (lone surrogates, not Unicode text at all, are
# refused too; no pattern can name them).
NO_NUL = re.compile(r"^[^\u0000]*$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_CANONICAL_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

Model = TypeVar("Model", bound=BaseModel)


class Bad(ValueError):
    """One parameter's problem code (raised by the small value parsers below)."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


def label(name: str, fallback: str) -> str:
    """A client-chosen name, echoed only when it looks like a field name."""
    return name if _IDENTIFIER.match(name) else fallback


def _path(loc: Iterable[Any]) -> str:
    parts: list[str] = []
    for segment in loc:
        if isinstance(segment, int):
            parts.append(str(segment))
        elif _IDENTIFIER.match(str(segment)):
            parts.append(str(segment))
        else:
            break
    return ".".join(parts) or "body"


# --- JSON bodies ------------------------------------------------------------------------

class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__("duplicate key")
        self.key = key


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    found: dict = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def _refuse_constant(name: str):
    raise ValueError("non-finite number")  # NaN, Infinity, -Infinity are not JSON


def _string_problems(value: Any, where: tuple) -> list[dict]:
    """NUL and lone surrogates cannot be stored as PostgreSQL text: refuse them here."""
    def bad(text: str) -> bool:
        if "\x00" in text:
            return True
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False

    if isinstance(value, str):
        return [problem(_path(where), "invalid_character")] if bad(value) else []
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            if bad(key):
                found.append(problem(_path(where), "invalid_character"))
            else:
                found.extend(_string_problems(item, where + (key,)))
        return found
    if isinstance(value, list):
        return [p for n, item in enumerate(value) for p in _string_problems(item, where + (n,))]
    return []


def json_object(request) -> dict:
    """The request body as a JSON object, or validation_error."""
    try:
        raw = request.body
    except RequestDataTooBig:
        raise ValidationFailed([problem("body", "too_large")])
    if not raw.strip():
        raise ValidationFailed([problem("body", "missing")])
    try:
        data = json.loads(raw, object_pairs_hook=_object_without_duplicates, parse_constant=_refuse_constant)
    except _DuplicateKey as error:
        raise ValidationFailed([problem(label(error.key, "body"), "duplicate_key")])
    except (ValueError, RecursionError):  # includes JSONDecodeError and UnicodeDecodeError
        raise ValidationFailed([problem("body", "malformed_json")])
    if not isinstance(data, dict):
        raise ValidationFailed([problem("body", "not_an_object")])
    if problems := _string_problems(data, ()):
        raise ValidationFailed(problems)
    return data


def validation_problems(error: ValidationError) -> list[dict]:
    return [problem(_path(item["loc"]), item["type"]) for item in error.errors(include_input=False)]


def body(request, model: type[Model]) -> tuple[Model, dict]:
    """Parse and strictly validate a closed body: (validated model, parsed JSON for digests).

    Validation runs in pydantic's strict JSON mode: ISO datetimes with an offset and UUID
    strings are accepted, "true" for a boolean or a naive datetime is not.
    """
    data = json_object(request)
    return validated(model, data), data


def validated(model: type[Model], data: dict) -> Model:
    """``data`` (a JSON object ``json_object`` already admitted) strictly validated as
    ``model``: what ``body`` does after parsing, for callers that receive the object
    some other way (the MCP tools' arguments)."""
    try:
        return model.model_validate_json(json.dumps(data), strict=True)
    except ValidationError as error:
        raise ValidationFailed(validation_problems(error))


def no_body(request) -> None:
    """Routes without a body refuse one rather than silently ignoring it."""
    try:
        raw = request.body
    except RequestDataTooBig:
        raw = b"x"
    if raw.strip():
        raise ValidationFailed([problem("body", "not_allowed")])


# --- query strings ----------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """How one query value is parsed, and the JSON Schema of exactly the raw values it
    accepts: the OpenAPI parameters are built from these, so document and parser agree."""

    parse: Callable[[str], Any]
    schema: dict

    def __call__(self, raw: str) -> Any:
        return self.parse(raw)


@dataclass(frozen=True)
class Param:
    parse: Rule
    required: bool = False
    default: Any = None
    description: str = ""
    schema_extra: dict = field(default_factory=dict)

    @property
    def schema(self) -> dict:
        schema = {**self.parse.schema, **self.schema_extra}
        if self.default is not None:
            schema["default"] = self.default
        return schema


def choice(values: Iterable[str]) -> Rule:
    allowed = tuple(values)

    def parse(raw: str) -> str:
        if raw not in allowed:
            raise Bad("invalid_choice")
        return raw
    return Rule(parse, {"type": "string", "enum": list(allowed)})


def matching(pattern: re.Pattern) -> Rule:
    """Values matching the whole of ``pattern`` (fullmatch: a trailing newline is not
    forgiven as ``$`` alone would)."""
    def parse(raw: str) -> str:
        if not pattern.fullmatch(raw):
            raise Bad("invalid_format")
        return raw
    return Rule(parse, {"type": "string", "pattern": pattern.pattern})


_DIGITS = re.compile(r"[0-9]{1,6}")


def bounded_int(low: int, high: int) -> Rule:
    assert 0 <= low <= high < 10 ** 6

    def parse(raw: str) -> int:
        if not _DIGITS.fullmatch(raw):
            raise Bad("not_an_integer")
        value = int(raw)
        if not low <= value <= high:
            raise Bad("out_of_range")
        return value
    return Rule(parse, {"type": "integer", "minimum": low, "maximum": high})


# What ``django.core.signing`` produces: URL-safe base64 (unpadded) and base62 segments
# joined by ":", a compressed payload opening with ".".
SIGNED_TOKEN = re.compile(r"^[A-Za-z0-9_:.-]+$")


def signed_token(max_chars: int) -> Rule:
    """An opaque signed value (a cursor), judged later by whoever signed it.

    Here only its shape: a value no signer could have produced is refused as it would be
    there (one ``invalid``, the same problem the signer reports), so what the document
    admits is exactly what reaches the signer.
    """
    def parse(raw: str) -> str:
        if len(raw) > max_chars or not SIGNED_TOKEN.fullmatch(raw):
            raise Bad("invalid")
        return raw
    return Rule(parse, {"type": "string", "minLength": 1, "maxLength": max_chars, "pattern": SIGNED_TOKEN.pattern})


CEILING = Param(choice(vocabulary.SENSITIVITIES), required=True, description=(
    "Highest sensitivity the caller may see (public < internal < sensitive < restricted). "
    "Anything above it is not_found, like foreign or unknown IDs."))
CEILING_ONLY = {"ceiling": CEILING}  # the whole query string of most ID routes


def query(request, spec: dict[str, Param]) -> dict[str, Any]:
    """A closed query string: unknown, repeated, missing-required or bad values refuse."""
    return query_values(request.query_params, spec)


def query_values(params, spec: dict[str, Param]) -> dict[str, Any]:
    """``query`` over any multi-value mapping with ``getlist`` (a ``QueryDict``), so the
    same rules can judge values that did not arrive in a query string."""
    problems = [problem(label(name, "query"), "unknown_parameter") for name in params if name not in spec]
    values: dict[str, Any] = {}
    for name, param in spec.items():
        given = params.getlist(name)
        if not given:
            if param.required:
                problems.append(problem(name, "missing"))
            values[name] = param.default
        elif len(given) > 1:
            problems.append(problem(name, "repeated"))
        else:
            try:
                values[name] = param.parse(given[0])
            except Bad as error:
                problems.append(problem(name, error.code))
    if problems:
        raise ValidationFailed(problems)
    return values


# --- path IDs and headers ---------------------------------------------------------------

def path_id(raw: str) -> UUID:
    """A path ID; anything that is not a UUID names nothing, so it is not_found."""
    if not _CANONICAL_UUID.match(raw):
        raise NotFound()
    return UUID(raw)


def idempotency_key(request) -> str:
    return checked_key(request.headers.get(IDEMPOTENCY_HEADER), IDEMPOTENCY_HEADER)


def checked_key(key: Any, field: str) -> str:
    """The Idempotency-Key rule wherever the key arrives (a header; an MCP tool argument,
    named ``field`` in the details): present, a string, non-blank, bounded."""
    if key is None:
        raise ValidationFailed([problem(field, "missing")])
    if not isinstance(key, str):
        raise ValidationFailed([problem(field, "string_type")])
    if not NON_BLANK.search(key):
        raise ValidationFailed([problem(field, "blank")])
    if len(key) > settings.IDEMPOTENCY_KEY_MAX_CHARS:
        raise ValidationFailed([problem(field, "too_long")])
    return key

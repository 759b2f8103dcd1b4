"""The OpenAPI document: valid, served, and complete for every owner route."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from rest_framework import serializers as drf

from memory.api import inputs
from memory.api import serializers as out
from memory.domain import EventView, MemoryView, SessionView

ROUTES = {
    ("/v1/memories", "get"): {"200": "MemoryPage"},
    ("/v1/memories", "post"): {"201": "Memory"},
    ("/v1/memories/{memory_id}", "get"): {"200": "MemoryOrDerived"},
    ("/v1/memories/{memory_id}", "delete"): {"204": None},
    ("/v1/memories/{memory_id}/review", "post"): {"200": "MemoryOrDerived"},
    ("/v1/sessions", "post"): {"201": "Session"},
    ("/v1/sessions/{session_id}/events", "post"): {"201": "Event"},
    ("/v1/sessions/{session_id}", "delete"): {"200": "ErasureReceipt"},
    ("/v1/people/{person_id}", "delete"): {"200": "ErasureReceipt"},
    ("/v1/account/erase", "post"): {"200": "ErasureReceipt"},
}
REQUESTS = {
    ("/v1/memories", "post"): "MemoryCreateRequest",
    ("/v1/memories/{memory_id}/review", "post"): "MemoryReviewRequest",
    ("/v1/sessions", "post"): "SessionCreateRequest",
    ("/v1/sessions/{session_id}/events", "post"): "EventAppendRequest",
    ("/v1/account/erase", "post"): "AccountEraseRequest",
}
WRITES = {key for key in ROUTES if key[1] in {"post", "delete"}}


@pytest.fixture(scope="module")
def document() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def _ref(content: dict) -> str:
    return content["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]


def test_schema_is_valid_openapi(document):
    validate_schema(document)


def test_schema_generates_without_warnings(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--format", "openapi-json",
                 "--file", str(tmp_path / "schema.json"))


def test_every_route_is_documented_with_its_response_shape(document):
    documented = {(path, method) for path, item in document["paths"].items() for method in item}
    assert set(ROUTES) <= documented
    for (path, method), responses in ROUTES.items():
        operation = document["paths"][path][method]
        for status, component in responses.items():
            response = operation["responses"][status]
            if component is None:
                assert "content" not in response
            else:
                assert _ref(response["content"]) == component
        assert operation["security"] == [{"ownerToken": []}]


def test_every_body_route_documents_its_request_shape(document):
    for (path, method), component in REQUESTS.items():
        body = document["paths"][path][method]["requestBody"]
        assert body["required"] is True and _ref(body["content"]) == component


def test_every_route_documents_the_error_envelope(document):
    envelope = document["components"]["schemas"]["ErrorEnvelope"]
    assert envelope["required"] == ["error"]
    error = document["components"]["schemas"]["Error"]
    assert set(error["properties"]) == {"code", "details"}
    for (path, method) in ROUTES:
        responses = document["paths"][path][method]["responses"]
        expected = {"400", "401", "403", "404"} | ({"409"} if (path, method) in WRITES else set())
        assert expected <= set(responses)
        for status in expected:
            assert _ref(responses[status]["content"]) == "ErrorEnvelope"


def test_every_write_documents_the_required_idempotency_key_header(document):
    for path, method in WRITES:
        parameters = document["paths"][path][method]["parameters"]
        (key,) = [p for p in parameters if p["name"] == "Idempotency-Key"]
        assert key["in"] == "header" and key["required"] is True


def test_reads_review_and_delete_document_the_required_ceiling(document):
    for path, method in [("/v1/memories", "get"), ("/v1/memories/{memory_id}", "get"),
                         ("/v1/memories/{memory_id}", "delete"), ("/v1/memories/{memory_id}/review", "post")]:
        (ceiling,) = [p for p in document["paths"][path][method]["parameters"] if p["name"] == "ceiling"]
        assert ceiling["required"] is True and set(ceiling["schema"]["enum"]) == {"public", "internal", "sensitive", "restricted"}


def test_list_documents_its_filters_and_cursor(document):
    names = {p["name"] for p in document["paths"]["/v1/memories"]["get"]["parameters"]}
    assert names == {"ceiling", "status", "belief_type", "scope", "limit", "cursor", "include_derived"}


def test_bearer_scheme_is_documented(document):
    assert document["components"]["securitySchemes"]["ownerToken"]["scheme"] == "bearer"


@pytest.mark.parametrize("component,parsed", [
    ("MemoryCreateRequest", inputs.MemoryCreate),
    ("MemoryReviewRequest", inputs.MemoryReview),
    ("SessionCreateRequest", inputs.SessionCreate),
    ("EventAppendRequest", inputs.EventAppend),
    ("AccountEraseRequest", inputs.AccountErase),
    ("SourceRequest", inputs.Source),
])
def test_documented_request_bodies_are_the_parsers_closed_models(document, component, parsed):
    documented = document["components"]["schemas"][component]
    assert documented["additionalProperties"] is False
    assert set(documented["properties"]) == set(parsed.model_fields)
    assert set(documented.get("required", [])) == {n for n, f in parsed.model_fields.items() if f.is_required()}


def test_documented_body_bounds_come_from_the_settings_the_parser_uses(document, settings):
    create = document["components"]["schemas"]["MemoryCreateRequest"]["properties"]
    assert create["statement"]["maxLength"] == settings.MEMORY_STATEMENT_MAX_CHARS
    assert (create["sources"]["minItems"], create["sources"]["maxItems"]) == (1, inputs.MAX_SOURCES)
    assert create["expires_at"]["nullable"] is True and create["expires_at"]["format"] == "date-time"
    parts = document["components"]["schemas"]["EventAppendRequest"]["properties"]["parts"]
    assert parts["maxItems"] == settings.EVENT_MAX_PARTS
    assert parts["items"]["maxLength"] == settings.EVENT_PART_MAX_CHARS
    key = [p for p in document["paths"]["/v1/sessions"]["post"]["parameters"] if p["name"] == "Idempotency-Key"]
    assert key[0]["schema"]["maxLength"] == settings.IDEMPOTENCY_KEY_MAX_CHARS


@pytest.mark.parametrize("documented,value", [
    (out.MemorySerializer, MemoryView), (out.SessionSerializer, SessionView), (out.EventSerializer, EventView),
])
def test_documented_responses_match_the_domain_values(documented, value):
    assert list(documented().fields) == list(value.model_fields)
    assert all(not isinstance(f, drf.SerializerMethodField) for f in documented().fields.values())


def test_schema_is_served_without_a_token(api):
    response = api.get("/v1/schema")
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-store"
    assert response["Content-Type"].startswith("application/vnd.oai.openapi+json")
    served = response.json()
    assert "/v1/memories" in served["paths"] and "/v1/schema" not in served["paths"]
    validate_schema(served)


def test_erasures_document_their_receipt_its_replay_and_the_confirmation(document):
    receipt = document["components"]["schemas"]["ErasureReceipt"]
    assert set(receipt["properties"]) == {"erased", "id", "erased_at"}
    for path, method in [("/v1/sessions/{session_id}", "delete"), ("/v1/people/{person_id}", "delete"),
                         ("/v1/account/erase", "post")]:
        operation = document["paths"][path][method]
        assert "replay" in operation["description"] and "not_found" in operation["description"]
        assert "Idempotency-Replayed" in operation["responses"]["200"]["headers"]
        assert not {p["name"] for p in operation["parameters"]} & {"ceiling"}
    assert "requestBody" not in document["paths"]["/v1/sessions/{session_id}"]["delete"]
    confirm = document["components"]["schemas"]["AccountEraseRequest"]["properties"]["confirm"]
    (ref,) = [part["$ref"] for part in confirm.get("allOf", [confirm]) if "$ref" in part]  # the enum component
    assert document["components"]["schemas"][ref.rsplit("/", 1)[1]]["enum"] == [inputs.ACCOUNT_ERASE_CONFIRMATION]

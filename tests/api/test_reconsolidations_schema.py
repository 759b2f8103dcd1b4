"""The operation routes in the OpenAPI document: every route and its response shape."""
from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

from reconsolidation.api.serializers import OperationSerializer

ROUTES = {
    ("/v1/memory-reconsolidations", "get"): "OperationPage",
    ("/v1/memory-reconsolidations/{operation_id}", "get"): "Operation",
    ("/v1/memory-reconsolidations/{operation_id}/undo", "post"): "Operation",
    ("/v1/memory-reconsolidations/{operation_id}/approve", "post"): "Operation",
    ("/v1/memory-reconsolidations/{operation_id}/reject", "post"): "Operation",
}


@pytest.fixture(scope="module")
def document() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def test_the_document_with_operation_routes_is_valid_openapi(document):
    validate_schema(document)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_operation_route_documents_its_response_errors_and_ceiling(document, route):
    path, method = route
    operation = document["paths"][path][method]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/" + ROUTES[route])
    expected = {"200", "400", "401", "403", "404", "406", "414"} | ({"409"} if method == "post" else set())
    assert set(operation["responses"]) == expected
    params = {(p["in"], p["name"]): p for p in operation["parameters"]}
    assert params[("query", "ceiling")]["required"] is True
    if method == "post":
        assert params[("header", "Idempotency-Key")]["required"] is True
        body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert document["components"]["schemas"][body.rsplit("/", 1)[1]]["required"] == ["expected_revision"]


def test_the_documented_operation_fields_are_the_allowlist(document):
    documented = list(document["components"]["schemas"]["Operation"]["properties"])
    assert documented == list(OperationSerializer().fields)
    assert "input_digest" not in documented and "tenant_id" not in documented

"""POST /v1/memories/search: closed strict body, owner auth, the envelope, no-store, schema.

The module serves as its own URLconf: the project's URLs with the recall routes first,
exactly as veetbot/urls.py must include them (a separate test checks the project URLconf).
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.urls import include, path, resolve

import veetbot.urls
from recall.api.views import MemorySearchView, RecallResultSerializer
from recall.models import RecallTrace
from tests.api.conftest import Api, Owner, assert_error
from tests.factories import make_owner
from tests.recall.helpers import Bank
from veetbot.clock import utcnow
from veetbot.rls import owner_context

urlpatterns = [path("v1/", include("recall.api.urls")), *veetbot.urls.urlpatterns]
pytestmark = pytest.mark.urls(__name__)

URL = "/v1/memories/search"
RESULT_KEYS = ["query", "channel", "requested_channel", "fallback_reason", "selection_mode", "items", "rendered",
               "rendered_tokens", "trace_id"]
ITEM_KEYS = ["id", "score", "subject", "statement", "belief_type", "polarity", "derivation", "authority",
             "attribution", "confidence", "sensitivity", "evidence_at", "valid_from", "expires_at",
             "content_revision", "sources", "record_kind", "operation_id", "operation_revision", "clauses",
             "support_ids", "entity_ids", "excerpts"]


@pytest.fixture
def api(db):
    with override_settings(AGENT_MEMORY_API_ENABLED=True):
        yield Api(Client())


@pytest.fixture
def owner(db) -> Owner:
    principal, token = make_owner("Searcher")
    return Owner(principal, token)


@pytest.fixture
def bank(owner) -> Bank:
    return Bank(owner.principal)


def search(api, owner, body, **kwargs):
    return api.post(URL, owner.token, body, key=None, **kwargs)


def test_search_returns_the_recall_result_and_is_never_cached(api, owner, bank):
    now = utcnow()
    memory_id = bank.add("The owner renewed the passport in May.", subject="passport", belief_type="fact",
                         at=now - timedelta(days=3))
    response = search(api, owner, {"query": "passport renewal", "ceiling": "internal"})
    assert response.status_code == 200, response.content
    assert response["Cache-Control"] == "private, no-store"
    body = response.json()
    assert list(body) == RESULT_KEYS
    assert (body["query"], body["channel"], body["requested_channel"], body["fallback_reason"],
            body["selection_mode"]) == ("passport renewal", "sparse", "hybrid", "semantic_disabled", "relevance")
    assert [item["id"] for item in body["items"]] == [str(memory_id)]
    assert list(body["items"][0]) == ITEM_KEYS
    assert isinstance(body["items"][0]["score"], float)
    assert f"[m:{memory_id}]" in body["rendered"] and body["rendered_tokens"] > 0
    assert "stages" not in body and "candidate_ids" not in response.content.decode()
    with owner_context(owner.principal):
        trace = RecallTrace.objects.get(id=body["trace_id"])
    assert trace.surface == "api" and trace.max_items == 20 and trace.max_tokens == 2000


def test_search_items_carry_their_source_excerpts_only_with_the_setting_on(api, owner, bank, settings):
    import hashlib

    now = utcnow()
    bank.add("The owner renewed the passport in May.", subject="passport", belief_type="fact",
             at=now - timedelta(days=3))
    said = bank.event().parts[0]
    body = {"query": "passport renewal", "ceiling": "restricted"}
    assert search(api, owner, body).json()["items"][0]["excerpts"] == []  # off by default
    settings.RECALL_SOURCE_EXCERPTS_ENABLED = True
    response = search(api, owner, body)
    assert response.status_code == 200, response.content
    (excerpt,) = response.json()["items"][0]["excerpts"]
    assert list(excerpt) == ["event", "part", "created_at", "text", "text_sha256"]
    assert (excerpt["event"], excerpt["part"], excerpt["text"]) == (str(bank.event().id), str(said.id), said.text)
    assert excerpt["text_sha256"] == hashlib.sha256(said.text.encode()).hexdigest()
    assert f'"{said.text}"' in response.json()["rendered"]


def test_search_passes_budgets_channel_and_as_of_through(api, owner, bank):
    now = utcnow()
    bank.add_many([dict(statement=f"Passport note {n}.", subject=f"p {n}", belief_type="fact")
                   for n in range(5)], at=now - timedelta(days=3))
    as_of = (now - timedelta(days=1)).isoformat()
    body = search(api, owner, {"query": "passport note", "ceiling": "internal", "max_items": 2,
                               "max_tokens": 500, "as_of": as_of, "channel": "sparse"}).json()
    assert len(body["items"]) == 2 and body["channel"] == "sparse" and body["fallback_reason"] == ""
    with owner_context(owner.principal):
        trace = RecallTrace.objects.get(id=body["trace_id"])
    assert (trace.max_items, trace.max_tokens, trace.as_of.isoformat()) == (2, 500, as_of)


def test_search_respects_the_ceiling_and_the_owner(api, owner, bank):
    now = utcnow()
    bank.add("Passport number is in the safe.", subject="passport", belief_type="fact", sensitivity="restricted",
             at=now - timedelta(days=1))
    other = Bank.new("Other")
    other.add("Passport renewal due.", subject="passport", belief_type="fact", at=now - timedelta(days=1))
    body = search(api, owner, {"query": "passport", "ceiling": "internal"}).json()
    assert body["items"] == [] and body["rendered"] == ""


@pytest.mark.parametrize("body,details", [
    ({"query": "x", "ceiling": "internal", "bogus": 1}, [{"field": "bogus", "problem": "extra_forbidden"}]),
    ({"query": "x"}, [{"field": "ceiling", "problem": "missing"}]),
    ({"ceiling": "internal"}, [{"field": "query", "problem": "missing"}]),
    ({"query": 5, "ceiling": "internal"}, [{"field": "query", "problem": "string_type"}]),
    ({"query": "", "ceiling": "internal"}, [{"field": "query", "problem": "string_too_short"}]),
    ({"query": "   ", "ceiling": "internal"}, [{"field": "query", "problem": "blank"}]),
    ({"query": "x" * 2001, "ceiling": "internal"}, [{"field": "query", "problem": "string_too_long"}]),
    ({"query": "x", "ceiling": "secret"}, [{"field": "ceiling", "problem": "literal_error"}]),
    ({"query": "x", "ceiling": "internal", "channel": "fast"}, [{"field": "channel", "problem": "literal_error"}]),
    ({"query": "x", "ceiling": "internal", "max_items": 0}, [{"field": "max_items", "problem": "greater_than_equal"}]),
    ({"query": "x", "ceiling": "internal", "max_items": 101}, [{"field": "max_items", "problem": "less_than_equal"}]),
    ({"query": "x", "ceiling": "internal", "max_items": "5"}, [{"field": "max_items", "problem": "int_type"}]),
    ({"query": "x", "ceiling": "internal", "max_items": 5.0}, [{"field": "max_items", "problem": "int_type"}]),
    ({"query": "x", "ceiling": "internal", "max_items": True}, [{"field": "max_items", "problem": "int_type"}]),
    ({"query": "x", "ceiling": "internal", "max_tokens": 0}, [{"field": "max_tokens", "problem": "greater_than_equal"}]),
    ({"query": "x", "ceiling": "internal", "max_tokens": 32001}, [{"field": "max_tokens", "problem": "less_than_equal"}]),
    ({"query": "x", "ceiling": "internal", "as_of": "2026-01-01T00:00:00"}, [{"field": "as_of", "problem": "timezone_aware"}]),
    ({"query": "x", "ceiling": "internal", "as_of": "yesterday"}, [{"field": "as_of", "problem": "datetime_parsing"}]),
    ({"query": "x", "ceiling": "internal", "as_of": "2999-01-01T00:00:00Z"}, [{"field": "as_of", "problem": "in_future"}]),
])
def test_invalid_bodies_are_validation_errors_naming_the_field(api, owner, body, details):
    response = search(api, owner, body)
    assert assert_error(response, 400, "validation_error") == details
    with owner_context(owner.principal):
        assert RecallTrace.objects.count() == 0


@pytest.mark.parametrize("raw,problem", [
    (b'{"query": "x", "query": "y", "ceiling": "internal"}', "duplicate_key"),
    (b'{"query": "x", "ceiling": "internal"', "malformed_json"),
    (b'["query"]', "not_an_object"),
    (b"", "missing"),
    (b'{"query": "x", "ceiling": "internal", "max_items": NaN}', "malformed_json"),
])
def test_malformed_raw_bodies_are_validation_errors(api, owner, raw, problem):
    response = api.post(URL, owner.token, raw=raw, key=None)
    details = assert_error(response, 400, "validation_error")
    assert [d["problem"] for d in details] == [problem]


def test_query_string_parameters_are_refused(api, owner):
    response = api.post(URL, owner.token, {"query": "x", "ceiling": "internal"}, key=None, query={"ceiling": "public"})
    assert assert_error(response, 400, "validation_error") == [{"field": "ceiling", "problem": "unknown_parameter"}]


def test_search_needs_a_token_with_the_read_scope(api, owner):
    body = {"query": "x", "ceiling": "internal"}
    assert_error(api.post(URL, None, body, key=None), 401, "authorization_error")
    assert_error(api.post(URL, "vbt_unknown", body, key=None), 401, "authorization_error")
    write_only = owner.token_with(["memory.write"])
    assert_error(api.post(URL, write_only, body, key=None), 403, "authorization_error")
    read_only = owner.token_with(["memory.read"])
    assert api.post(URL, read_only, body, key=None).status_code == 200


def test_search_is_not_found_while_the_api_is_disabled(owner, db):
    with override_settings(AGENT_MEMORY_API_ENABLED=False):
        response = Api(Client()).post(URL, owner.token, {"query": "x", "ceiling": "internal"}, key=None)
    assert_error(response, 404, "not_found")


def test_other_methods_are_not_allowed(api, owner):
    assert_error(api.get(URL, owner.token), 405, "method_not_allowed")


def test_the_project_urlconf_routes_search_before_memory_detail():
    match = resolve(URL, urlconf="veetbot.urls")
    assert getattr(match.func, "view_class", None) is MemorySearchView


def test_openapi_schema_documents_the_search_operation():
    from drf_spectacular.generators import SchemaGenerator

    document = SchemaGenerator(urlconf=__name__).get_schema(request=None, public=True)
    operation = document["paths"]["/v1/memories/search"]["post"]
    assert operation["operationId"] == "memories_search"
    request_schema = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    fields = document["components"]["schemas"][request_schema]
    assert set(fields["properties"]) == {"query", "ceiling", "max_items", "max_tokens", "as_of", "channel", "scope",
                                         "belief_types", "exclude_ids", "selection_mode"}
    assert set(fields["required"]) == {"query", "ceiling"}
    response_schema = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    assert list(document["components"]["schemas"][response_schema]["properties"]) == RESULT_KEYS
    assert {"400", "401", "403", "404"} <= set(operation["responses"])


def test_documented_result_fields_are_the_domain_result_fields():
    from recall.domain import RecallItem, RecallResult

    # Every field but the never-serialized ones (stages, semantic_list: for evaluators and
    # context assembly only).
    serialized = [f for f, info in RecallResult.model_fields.items() if not info.exclude]
    assert "stages" not in serialized and "semantic_list" not in serialized
    assert list(RecallResultSerializer().fields) == serialized
    assert list(RecallResultSerializer().fields["items"].child.fields) == list(RecallItem.model_fields)
    assert RESULT_KEYS == list(RecallResultSerializer().fields)
    assert ITEM_KEYS == list(RecallItem.model_fields)

"""The rules the OpenAPI document states are the rules the parsers apply, character for
character: what a generated client sends because the document admits it is accepted, and
what the document rules out is refused (``test_schema_conformance`` fuzzes the whole
surface; these pin the edges that found disagreements)."""
from __future__ import annotations

import re

import pytest
from drf_spectacular.generators import SchemaGenerator

from memory.api import inputs, parsing
from recall.api.views import QUERY_PATTERN
from tests.api.conftest import assert_error, memory_body


@pytest.fixture(scope="module")
def document() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def test_the_blank_characters_are_exactly_pythons_whitespace():
    blank = {c for c in map(chr, range(0x110000)) if not parsing.NON_BLANK.search(c)}
    assert blank == {c for c in map(chr, range(0x110000)) if c.isspace()}


def test_the_documented_years_of_an_instant_are_the_ones_accepted():
    pattern = re.compile(inputs.INSTANT_YEAR_PATTERN)
    assert [y for y in range(10000) if pattern.match(f"{y:04d}-01-01")] == list(range(2, 9999))


def test_the_documented_search_query_is_non_blank_without_nul():
    pattern = re.compile(QUERY_PATTERN)
    assert pattern.search("x") and pattern.search("\u3000 x\u00a0") and pattern.search("a\nb")
    assert not pattern.search("\u3000 \u00a0\t") and not pattern.search("x\x00")


def test_documented_query_parameters_are_the_parsers_specs(document):
    from memory.api.views import LIST_QUERY

    documented = {p["name"]: p for p in document["paths"]["/v1/memories"]["get"]["parameters"]}
    assert {name: documented[name]["schema"] for name in LIST_QUERY} == {n: p.schema for n, p in LIST_QUERY.items()}
    assert documented["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
    journal = {p["name"]: p for p in document["paths"]["/v1/memory-reconsolidations"]["get"]["parameters"]}
    assert journal["kind"]["schema"]["enum"] and journal["cursor"]["schema"]["maxLength"] == 512


@pytest.mark.parametrize("key", ["\u00a0", "\t \u3000", "\x1f"])
def test_a_key_of_whitespace_only_is_blank(api, owner, key):
    response = api.post("/v1/sessions", owner.token, {"scope": "user"}, key=key)
    assert assert_error(response, 400, "validation_error") == [{"field": "Idempotency-Key", "problem": "blank"}]


def test_a_key_with_inner_whitespace_is_accepted(api, owner):
    assert api.post("/v1/sessions", owner.token, {"scope": "user"}, key="\u00a0k k\u00a0").status_code == 201


@pytest.mark.parametrize("query", ["\u3000", "\u00a0\x1c"])
def test_a_search_of_whitespace_only_is_blank(api, owner, query):
    response = api.post("/v1/memories/search", owner.token, {"query": query, "ceiling": "internal"})
    assert assert_error(response, 400, "validation_error") == [{"field": "query", "problem": "blank"}]


def test_instants_with_any_rfc3339_offset_are_stored_as_utc(api, owner):
    # PostgreSQL itself refuses offsets beyond 15:59; these used to be server errors.
    body = memory_body(owner.message(), valid_from="2026-09-01T23:30:00+23:59", evidence_at="0002-01-01T00:00:00+01:00")
    memory = api.post("/v1/memories", owner.token, body)
    assert memory.status_code == 201, memory.content
    assert memory.json()["valid_from"] == "2026-08-31T23:31:00Z"
    assert memory.json()["evidence_at"] == "0001-12-31T23:00:00Z"
    search = api.post("/v1/memories/search", owner.token,
                      {"query": "bike", "ceiling": "internal", "as_of": "2026-09-01T00:00:00-23:27"})
    assert search.status_code == 200, search.content


@pytest.mark.parametrize("instant", ["0001-01-01T00:30:00+01:00", "0001-06-01T00:00:00Z", "9999-12-31T23:00:00-01:00"])
def test_instants_outside_the_documented_years_are_refused(api, owner, instant):
    response = api.post("/v1/sessions", owner.token, {"scope": "user", "started_at": instant})
    assert assert_error(response, 400, "validation_error") == [{"field": "started_at", "problem": "value_error"}]


def test_a_scope_filter_with_a_trailing_newline_is_refused(api, owner):
    response = api.get("/v1/memories", owner.token, ceiling="internal", scope="user\n")
    assert assert_error(response, 400, "validation_error") == [{"field": "scope", "problem": "invalid_format"}]


@pytest.mark.parametrize("cursor", ["", "not a cursor", "é" * 3, "x" * 513])
def test_a_cursor_of_the_wrong_shape_is_invalid(api, owner, cursor):
    response = api.get("/v1/memories", owner.token, ceiling="internal", cursor=cursor)
    assert assert_error(response, 400, "validation_error") == [{"field": "cursor", "problem": "invalid"}]

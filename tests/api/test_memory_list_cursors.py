"""Cursor pages of GET /v1/memories: sizes, order, completeness, and cursors bound to their request."""
from __future__ import annotations

import pytest
from django.core import signing

from memory import services
from memory.api import cursors
from tests.api.conftest import assert_error
from memory.services.originals import insert_memories
from tests.factories import T0, draft
from veetbot.rls import owner_context


def _fill(owner, count: int, **overrides) -> None:
    """``count`` beliefs through the batch creation path (the one import and live creation share)."""
    event = owner.message()
    drafts = [draft(event, statement=f"Fact number {n}.", **overrides) for n in range(count)]
    with owner_context(owner.principal):
        insert_memories(owner.principal, drafts, T0)


def _pages(api, token, **query):
    cursor, pages = None, []
    while True:
        params = dict(query, **({"cursor": cursor} if cursor else {}))
        response = api.get("/v1/memories", token, **params)
        assert response.status_code == 200, response.content
        pages.append(response.json()["items"])
        cursor = response.json()["next_cursor"]
        if cursor is None:
            return pages


@pytest.fixture
def many(owner):
    _fill(owner, 130)
    return owner


def test_default_page_is_fifty_items(api, many):
    page = api.get("/v1/memories", many.token, ceiling="internal").json()
    assert len(page["items"]) == 50 and page["next_cursor"]


def test_limit_may_be_one_hundred(api, many):
    assert len(api.get("/v1/memories", many.token, ceiling="internal", limit=100).json()["items"]) == 100


@pytest.mark.parametrize("limit,problem", [("101", "out_of_range"), ("0", "out_of_range"), ("-1", "not_an_integer"),
                                           ("ten", "not_an_integer"), ("1.5", "not_an_integer")])
def test_limit_outside_one_to_one_hundred_is_validation_error(api, owner, limit, problem):
    response = api.get("/v1/memories", owner.token, ceiling="internal", limit=limit)
    assert assert_error(response, 400, "validation_error") == [{"field": "limit", "problem": problem}]


def test_paging_returns_every_memory_exactly_once_in_order(api, many):
    pages = _pages(api, many.token, ceiling="internal", limit=100)
    assert [len(p) for p in pages] == [100, 30]
    items = [m for page in pages for m in page]
    assert len({m["id"] for m in items}) == 130
    keys = [(-m["store_position"], m["id"]) for m in items]
    assert keys == sorted(keys)


def test_paging_with_default_size_covers_everything(api, many):
    pages = _pages(api, many.token, ceiling="internal")
    assert [len(p) for p in pages] == [50, 50, 30]


def test_exactly_full_last_page_has_no_next_cursor(api, owner):
    _fill(owner, 4)
    assert [len(p) for p in _pages(api, owner.token, ceiling="internal", limit=2)] == [2, 2]


def test_memory_revised_between_pages_is_not_repeated(api, many):
    first = api.get("/v1/memories", many.token, ceiling="internal", limit=100).json()
    moved = first["items"][10]["id"]
    services.memory_review(principal=many.principal, memory_id=moved, action="not_here")  # content change: moves up
    rest = api.get("/v1/memories", many.token, ceiling="internal", limit=100, cursor=first["next_cursor"]).json()
    assert moved not in {m["id"] for m in rest["items"]} and len(rest["items"]) == 30


@pytest.fixture
def cursor(api, owner):
    _fill(owner, 3)
    response = api.get("/v1/memories", owner.token, ceiling="internal", limit=1, status="active")
    return response.json()["next_cursor"]


def test_cursor_continues_with_a_different_page_size(api, owner, cursor):
    assert len(api.get("/v1/memories", owner.token, ceiling="internal", limit=5, cursor=cursor).json()["items"]) == 2


def test_cursor_continues_when_default_filters_are_spelled_out_or_left_out(api, owner, cursor):
    response = api.get("/v1/memories", owner.token, ceiling="internal", cursor=cursor)
    assert response.status_code == 200


@pytest.mark.parametrize("change", [
    {"ceiling": "restricted"}, {"ceiling": "public"}, {"status": "all"}, {"status": "retracted"},
    {"belief_type": "preference"}, {"scope": "user"},
])
def test_cursor_reused_with_other_filters_or_ceiling_is_validation_error(api, owner, cursor, change):
    query = {"ceiling": "internal", "cursor": cursor, **change}
    response = api.get("/v1/memories", owner.token, **query)
    assert assert_error(response, 400, "validation_error") == [{"field": "cursor", "problem": "does_not_match_request"}]


def test_cursor_reused_by_another_owner_is_validation_error(api, owner, other_owner, cursor):
    response = api.get("/v1/memories", other_owner.token, ceiling="internal", cursor=cursor)
    assert assert_error(response, 400, "validation_error") == [{"field": "cursor", "problem": "does_not_match_request"}]


def test_tampered_cursor_is_validation_error(api, owner, cursor):
    payload = signing.loads(cursor, salt=cursors.SALT)
    forged_payload = signing.dumps({**payload, "p": payload["p"] + 1}, salt=cursors.SALT)
    # Keep the forged payload but the original signature: the signature no longer matches.
    tampered = forged_payload.rsplit(":", 1)[0] + ":" + cursor.rsplit(":", 1)[1]
    for bad in (tampered, cursor[:-1] + ("A" if cursor[-1] != "A" else "B"), "garbage", "x" * 600):
        response = api.get("/v1/memories", owner.token, ceiling="internal", cursor=bad)
        assert assert_error(response, 400, "validation_error") == [{"field": "cursor", "problem": "invalid"}]


def test_cursor_signed_with_another_salt_is_rejected(api, owner, cursor):
    payload = signing.loads(cursor, salt=cursors.SALT)
    foreign = signing.dumps(payload, salt="some.other.purpose")
    assert_error(api.get("/v1/memories", owner.token, ceiling="internal", cursor=foreign), 400, "validation_error")


def test_cursor_holds_no_filter_values_in_clear(api, owner):
    _fill(owner, 2, scope="project:secret-plans")
    page = api.get("/v1/memories", owner.token, ceiling="internal", limit=1, scope="project:secret-plans").json()
    assert "secret-plans" not in signing.b64_decode(page["next_cursor"].split(":")[0].encode()).decode(errors="replace")


@pytest.mark.parametrize("query,field,problem", [
    ({"order": "asc"}, "order", "unknown_parameter"),
    ({"status": "deleted"}, "status", "invalid_choice"),
    ({"belief_type": "opinion"}, "belief_type", "invalid_choice"),
    ({"scope": "project:"}, "scope", "invalid_format"),
])
def test_unknown_or_bad_query_parameters_are_validation_error(api, owner, query, field, problem):
    response = api.get("/v1/memories", owner.token, ceiling="internal", **query)
    assert assert_error(response, 400, "validation_error") == [{"field": field, "problem": problem}]


def test_repeated_query_parameter_is_validation_error(api, owner):
    response = api.request("GET", "/v1/memories", owner.token, query={"ceiling": ["internal", "public"]})
    assert assert_error(response, 400, "validation_error") == [{"field": "ceiling", "problem": "repeated"}]


def test_write_routes_refuse_query_parameters(api, owner):
    response = api.post("/v1/sessions", owner.token, {"scope": "user"}, query={"ceiling": "internal"})
    assert assert_error(response, 400, "validation_error") == [{"field": "ceiling", "problem": "unknown_parameter"}]
    assert owner.counts()["sessions"] == 0

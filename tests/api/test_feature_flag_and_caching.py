"""The surface switch (AGENT_MEMORY_API_ENABLED) and the no-store rule on every response."""
from __future__ import annotations

import pytest
from django.test import override_settings

from tests.api.conftest import assert_error, memory_body

ROUTES = [
    ("GET", "/v1/memories"),
    ("POST", "/v1/memories"),
    ("GET", "/v1/memories/00000000-0000-4000-8000-000000000000"),
    ("DELETE", "/v1/memories/00000000-0000-4000-8000-000000000000"),
    ("POST", "/v1/memories/00000000-0000-4000-8000-000000000000/review"),
    ("POST", "/v1/sessions"),
    ("POST", "/v1/sessions/00000000-0000-4000-8000-000000000000/events"),
    ("GET", "/v1/schema"),
]


@pytest.mark.parametrize("method,path", ROUTES)
def test_every_route_is_not_found_when_the_api_is_disabled(api, owner, method, path):
    with override_settings(AGENT_MEMORY_API_ENABLED=False):
        with_token = api.request(method, path, owner.token, {"scope": "user"}, query={"ceiling": "internal"})
        without_token = api.request(method, path, None, {"scope": "user"})
    assert_error(with_token, 404, "not_found")
    assert_error(without_token, 404, "not_found")
    assert owner.counts()["sessions"] == 0


def test_disabled_api_writes_nothing(api, owner):
    event = owner.message()
    with override_settings(AGENT_MEMORY_API_ENABLED=False):
        assert_error(api.post("/v1/memories", owner.token, memory_body(event)), 404, "not_found")
    assert owner.counts()["memories"] == 0


def test_flag_is_read_per_request(api, owner):
    assert api.get("/v1/memories", owner.token, ceiling="internal").status_code == 200
    with override_settings(AGENT_MEMORY_API_ENABLED=False):
        assert api.get("/v1/memories", owner.token, ceiling="internal").status_code == 404
    assert api.get("/v1/memories", owner.token, ceiling="internal").status_code == 200


def test_successful_responses_are_private_no_store(api, owner):
    event = owner.message()
    created = api.post("/v1/memories", owner.token, memory_body(event), key="a")
    responses = [
        created,
        api.post("/v1/memories", owner.token, memory_body(event), key="a"),  # a replay
        api.get("/v1/memories", owner.token, ceiling="internal"),
        api.get(f"/v1/memories/{created.json()['id']}", owner.token, ceiling="internal"),
        api.post(f"/v1/memories/{created.json()['id']}/review", owner.token, {"action": "dismiss"}, key="b",
                 query={"ceiling": "internal"}),
        api.post("/v1/sessions", owner.token, {"scope": "user"}, key="c"),
        api.delete(f"/v1/memories/{created.json()['id']}", owner.token, key="d", query={"ceiling": "internal"}),
        api.get("/v1/schema"),
    ]
    assert [r.status_code for r in responses] == [201, 201, 200, 200, 200, 201, 204, 200]
    assert all(r["Cache-Control"] == "private, no-store" for r in responses)


def test_error_responses_are_private_no_store_in_the_envelope(api, owner):
    read_only = owner.token_with(["memory.read"])
    assert_error(api.get("/v1/memories", None, ceiling="internal"), 401, "authorization_error")
    assert_error(api.post("/v1/sessions", read_only, {"scope": "user"}), 403, "authorization_error")
    assert_error(api.get("/v1/memories", owner.token), 400, "validation_error")
    assert_error(api.get("/v1/memories/00000000-0000-4000-8000-000000000000", owner.token, ceiling="public"),
                 404, "not_found")
    api.post("/v1/sessions", owner.token, {"scope": "user"}, key="k")
    assert_error(api.post("/v1/sessions", owner.token, {"scope": "session"}, key="k"), 409, "conflict")
    assert_error(api.request("PUT", "/v1/sessions", owner.token, {}), 405, "method_not_allowed")

"""Unknown /v1 paths answer not_found in the envelope, once the catch-all is mounted last."""
from __future__ import annotations

import pytest
from django.test import override_settings

from tests.api.conftest import assert_error

pytestmark = pytest.mark.urls("tests.api.urls_with_unknown_routes")


@pytest.mark.parametrize("method,path", [("GET", "/v1/nothing-here"), ("POST", "/v1/memories/"),
                                         ("DELETE", "/v1/sessions/x/y/z"), ("GET", "/v1/")])
def test_unknown_v1_route_is_not_found_in_the_envelope(api, owner, method, path):
    assert_error(api.request(method, path, owner.token), 404, "not_found")
    assert_error(api.request(method, path, None), 404, "not_found")


def test_unknown_v1_route_is_not_found_when_the_api_is_disabled(api):
    with override_settings(AGENT_MEMORY_API_ENABLED=False):
        assert_error(api.get("/v1/nothing-here"), 404, "not_found")


def test_known_routes_still_win_over_the_catch_all(api, owner):
    assert api.get("/v1/memories", owner.token, ceiling="internal").status_code == 200

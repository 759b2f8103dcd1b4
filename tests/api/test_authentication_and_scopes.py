"""Bearer owner tokens: who may call, with which scopes; tokens never come back."""
from __future__ import annotations

import logging

import pytest

from memory.services import token_authenticate
from tests.api.conftest import assert_error, memory_body, revoke
from veetbot.identity import SCOPE_READ, SCOPE_WRITE


def _unauthorized(response):
    assert_error(response, 401, "authorization_error")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_missing_authorization_header_is_401(api, owner):
    _unauthorized(api.get("/v1/memories", None, ceiling="internal"))


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearer a b", "vbt_abc", "Token vbt_abc"])
def test_malformed_authorization_header_is_401(api, owner, header):
    response = api.request("GET", "/v1/memories", headers={"Authorization": header}, query={"ceiling": "internal"})
    _unauthorized(response)


def test_unknown_token_is_401(api, owner):
    _unauthorized(api.get("/v1/memories", "vbt_" + "x" * 43, ceiling="internal"))


def test_revoked_token_is_401(api, owner):
    token = owner.token_with([SCOPE_READ])
    assert api.get("/v1/memories", token, ceiling="internal").status_code == 200
    revoke(owner, token)
    _unauthorized(api.get("/v1/memories", token, ceiling="internal"))


def test_token_authenticate_returns_principal_with_the_tokens_scopes(owner):
    principal = token_authenticate(owner.token_with([SCOPE_READ]))
    assert principal.principal_id == owner.principal.principal_id and principal.scopes == {SCOPE_READ}
    assert token_authenticate("vbt_unknown") is None


def test_read_only_token_cannot_write(api, owner):
    token = owner.token_with([SCOPE_READ])
    response = api.post("/v1/memories", token, memory_body(owner.message()))
    assert_error(response, 403, "authorization_error")
    assert_error(api.post("/v1/sessions", token, {"scope": "user"}), 403, "authorization_error")
    assert owner.counts()["memories"] == 0 and owner.counts()["receipts"] == 0


def test_write_only_token_cannot_read(api, owner):
    token = owner.token_with([SCOPE_WRITE])
    memory = api.post("/v1/memories", token, memory_body(owner.message())).json()
    assert_error(api.get("/v1/memories", token, ceiling="internal"), 403, "authorization_error")
    assert_error(api.get(f"/v1/memories/{memory['id']}", token, ceiling="internal"), 403, "authorization_error")


def test_write_only_token_may_erase_but_not_review(api, owner):
    memory = api.post("/v1/memories", owner.token, memory_body(owner.message()), key="a").json()
    token = owner.token_with([SCOPE_WRITE])
    review = api.post(f"/v1/memories/{memory['id']}/review", token, {"action": "dismiss"}, key="b",
                      query={"ceiling": "internal"})
    assert_error(review, 403, "authorization_error")  # review answers with content: it needs read too
    erase = api.delete(f"/v1/memories/{memory['id']}", token, key="c", query={"ceiling": "internal"})
    assert erase.status_code == 204


def test_authentication_is_checked_before_the_body(api, owner):
    response = api.post("/v1/memories", None, raw=b"{not json")
    _unauthorized(response)


def test_token_is_never_echoed_or_logged(api, owner, caplog):
    caplog.set_level(logging.DEBUG)
    read_only = owner.token_with([SCOPE_READ])
    responses = [
        api.get("/v1/memories", owner.token, ceiling="internal"),
        api.post("/v1/memories", read_only, memory_body(owner.message())),
        api.get("/v1/memories", owner.token + "x", ceiling="internal"),
        api.post("/v1/memories", owner.token, raw=b"{"),
    ]
    for response in responses:
        text = response.content.decode() + "".join(f"{k}: {v}" for k, v in response.items())
        assert owner.token not in text and read_only not in text
    assert owner.token not in caplog.text and read_only not in caplog.text

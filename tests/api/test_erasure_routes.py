"""The owner's erasure routes: DELETE /v1/sessions/{id}, DELETE /v1/people/{id} and
POST /v1/account/erase — the content-free receipt, its replay, foreign and unknown IDs as
not_found, the confirmation the account needs, scopes, and token revocation."""
from __future__ import annotations

import uuid

import pytest
from django.test import Client

from memory import services
from memory.models import Event, Memory, OwnerToken, Person, Session
from memory.services import erasure, receipts
from tests.api.conftest import assert_error
from tests.factories import T0, draft
from veetbot.identity import SCOPE_READ
from veetbot.rls import owner_context

CONFIRM = {"confirm": "erase my whole memory bank"}


def session_with_memory(owner, text: str = "I keep the spare key under the blue pot."):
    session = services.session_create(principal=owner.principal, started_at=T0)
    event = owner.message(text, session_id=session.id)
    memory = services.memory_create(principal=owner.principal, draft=draft(event, statement="The spare key is under the blue pot."))
    return session, memory


def person_with_memory(owner, name: str = "Ottoline"):
    person = services.person_create(principal=owner.principal, name=name, now=T0)
    event = owner.message(f"{name} is my oldest friend.")
    memory = services.memory_create(principal=owner.principal, draft=draft(
        event, statement=f"{name} is the owner's oldest friend.", entity_ids=(f"person:{person.id}",)))
    return person, memory


def erased(owner, model, row_id) -> bool:
    with owner_context(owner.principal):
        return model.objects.filter(id=row_id, erased_at__isnull=False).exists()


# --- sessions --------------------------------------------------------------------------

def test_erasing_a_session_answers_a_content_free_receipt_and_erases_its_memories(api, owner):
    session, memory = session_with_memory(owner)
    response = api.delete(f"/v1/sessions/{session.id}", owner.token, key="erase-1")
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-store"
    body = response.json()
    assert set(body) == {"erased", "id", "erased_at"}
    assert body["erased"] == "session" and body["id"] == str(session.id)
    assert "Idempotency-Replayed" not in response
    assert erased(owner, Session, session.id) and erased(owner, Memory, memory.id)
    assert api.get(f"/v1/memories/{memory.id}", owner.token, ceiling="restricted").status_code == 404


def test_a_replayed_session_erasure_answers_the_same_receipt(api, owner):
    session, _memory = session_with_memory(owner)
    first = api.delete(f"/v1/sessions/{session.id}", owner.token, key="erase-1")
    again = api.delete(f"/v1/sessions/{session.id}", owner.token, key="erase-1")
    assert again.status_code == 200 and again.json() == first.json()
    assert again["Idempotency-Replayed"] == "true"
    other, _ = session_with_memory(owner, "Another chat.")
    assert_error(api.delete(f"/v1/sessions/{other.id}", owner.token, key="erase-1"), 409, "conflict")
    assert not erased(owner, Session, other.id)
    # A new key for the already erased session: it no longer exists.
    assert_error(api.delete(f"/v1/sessions/{session.id}", owner.token, key="erase-2"), 404, "not_found")


@pytest.mark.parametrize("path", ["/v1/sessions/{id}", "/v1/people/{id}"])
def test_foreign_unknown_and_malformed_ids_are_not_found(api, owner, other_owner, path):
    foreign_session, _ = session_with_memory(other_owner)
    foreign_person, _ = person_with_memory(other_owner)
    foreign = foreign_session.id if "sessions" in path else foreign_person.id
    for target in (foreign, uuid.uuid4(), "not-a-uuid"):
        assert_error(api.delete(path.format(id=target), owner.token, key=f"k-{target}"), 404, "not_found")
    assert not erased(other_owner, Session, foreign_session.id) and not erased(other_owner, Person, foreign_person.id)


@pytest.mark.parametrize("path", ["/v1/sessions/{id}", "/v1/people/{id}"])
def test_an_erasure_needs_a_key_no_body_and_the_write_scope(api, owner, path):
    session, _ = session_with_memory(owner)
    person, _ = person_with_memory(owner)
    target = path.format(id=session.id if "sessions" in path else person.id)
    details = assert_error(api.delete(target, owner.token, key=None), 400, "validation_error")
    assert details == [{"field": "Idempotency-Key", "problem": "missing"}]
    assert_error(api.request("DELETE", target, owner.token, {"x": 1}), 400, "validation_error")
    assert_error(api.delete(target, owner.token_with([SCOPE_READ])), 403, "authorization_error")
    assert_error(api.delete(target), 401, "authorization_error")
    assert_error(api.request("DELETE", target, owner.token, query={"ceiling": "restricted"}), 400, "validation_error")
    assert not erased(owner, Session, session.id) and not erased(owner, Person, person.id)


# --- people ----------------------------------------------------------------------------

def test_erasing_a_person_removes_their_name_and_the_memories_about_them(api, owner):
    person, memory = person_with_memory(owner)
    response = api.delete(f"/v1/people/{person.id}", owner.token, key="forget-1")
    assert response.status_code == 200
    assert response.json()["erased"] == "person" and response.json()["id"] == str(person.id)
    with owner_context(owner.principal):
        row = Person.objects.get(id=person.id)
    assert row.name == "" and row.erased_at is not None and erased(owner, Memory, memory.id)
    again = api.delete(f"/v1/people/{person.id}", owner.token, key="forget-1")
    assert again.json() == response.json() and again["Idempotency-Replayed"] == "true"
    # A message naming the erased person as speaker names nothing, like any unknown person.
    session = services.session_create(principal=owner.principal, started_at=T0)
    refused = api.post(f"/v1/sessions/{session.id}/events", owner.token, {
        "kind": "user.message.created", "speaker": f"person:{person.id}", "parts": ["hi"]}, key="ev-1")
    assert_error(refused, 404, "not_found")


# --- the whole account -------------------------------------------------------------------

def test_account_erasure_needs_the_exact_confirmation(api, owner):
    session_with_memory(owner)
    details = assert_error(api.post("/v1/account/erase", owner.token, {}), 400, "validation_error")
    assert details == [{"field": "confirm", "problem": "missing"}]
    assert_error(api.post("/v1/account/erase", owner.token, {"confirm": "yes"}), 400, "validation_error")
    assert_error(api.post("/v1/account/erase", owner.token, {**CONFIRM, "also": 1}), 400, "validation_error")
    assert_error(api.post("/v1/account/erase", owner.token, raw=b""), 400, "validation_error")
    assert_error(api.post("/v1/account/erase", owner.token, CONFIRM, key=None), 400, "validation_error")
    assert_error(api.post("/v1/account/erase", owner.token_with([SCOPE_READ]), CONFIRM), 403, "authorization_error")
    assert services.token_authenticate(owner.token) is not None
    with owner_context(owner.principal):
        assert Memory.objects.filter(erased_at__isnull=True).exists()


def test_account_erasure_erases_everything_and_revokes_every_token_and_sign_in(api, owner, other_owner):
    session, memory = session_with_memory(owner)
    person, _ = person_with_memory(owner)
    spare = owner.token_with([SCOPE_READ])
    dashboard = Client()
    assert dashboard.post("/review/sign-in", {"token": owner.token}).status_code == 303
    assert dashboard.get("/review/").status_code == 200
    kept, _ = session_with_memory(other_owner)

    response = api.post("/v1/account/erase", owner.token, CONFIRM, key="bye")
    assert response.status_code == 200
    body = response.json()
    assert body["erased"] == "account" and body["id"] == str(owner.principal.principal_id)
    for token in (owner.token, spare):
        assert services.token_authenticate(token) is None
        assert_error(api.get("/v1/memories", token, ceiling="restricted"), 401, "authorization_error")
    assert dashboard.get("/review/").status_code == 302  # the review cookie's token is revoked
    with owner_context(owner.principal):
        assert not OwnerToken.objects.filter(revoked_at__isnull=True).exists()
        assert not Memory.objects.filter(erased_at__isnull=True).exists()
        assert not Event.objects.filter(erased_at__isnull=True).exists()
        assert not Person.objects.filter(erased_at__isnull=True).exists()
    assert erased(owner, Session, session.id) and erased(owner, Person, person.id) and erased(owner, Memory, memory.id)
    assert not erased(other_owner, Session, kept.id)


def test_an_account_erasure_replayed_by_a_request_that_authenticated_first_answers_the_same_receipt(api, owner):
    """Over HTTP a later replay cannot authenticate (every token is revoked); a duplicate
    that was already past authentication waits on the owner lock and gets the receipt."""
    session_with_memory(owner)
    digest = receipts.request_sha256(route="account.erase", params={}, body=CONFIRM)
    first = erasure.erase_requested(principal=owner.principal, target="account", target_id=None, key="bye",
                                    request_sha256=digest)
    again = erasure.erase_requested(principal=owner.principal, target="account", target_id=None, key="bye",
                                    request_sha256=digest)
    assert again.replayed and not first.replayed and again.value == first.value and again.status_code == 200

"""The dashboard over Django's test client: the sign-in cookie, the security headers,
CSRF and Origin refusals, session end on revocation or scope change, and no private
content in URLs, redirects or logs."""
from __future__ import annotations

import logging
import re
import time
import uuid

import pytest
from django.test import Client

from memory.models import OwnerToken
from memory.services.owners import token_create, token_revoke
from review_ui import bounds
from review_ui.security import CONTENT_SECURITY_POLICY
from tests.factories import make_owner
from tests.review_ui.seed import SECRET, build_bank
from veetbot.identity import SCOPE_READ
from veetbot.rls import owner_context

COOKIE = bounds.REVIEW_COOKIE_NAME


@pytest.fixture(scope="module")
def shared_bank(committed_db):
    return build_bank()


@pytest.fixture
def bank(shared_bank, db):
    """The module's committed bank, seen from inside this test's rolled-back transaction:
    whatever a test changes (approvals, revocations) is undone after it."""
    return shared_bank


def signed_in(token: str, **client_options) -> Client:
    client = Client(**client_options)
    response = client.post("/review/sign-in", {"token": token})
    assert response.status_code == 303, response.status_code
    return client


def form_fields(html: str, action: str) -> dict:
    form = re.search(rf'<form method="post" action="{re.escape(action)}".*?</form>', html, re.S).group(0)
    return dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))


def test_sign_in_sets_a_thirty_day_secure_httponly_strict_cookie_without_the_bearer(bank):
    response = Client().post("/review/sign-in", {"token": bank.token})
    assert response.status_code == 303 and response["Location"] == "/review/"
    cookie = response.cookies[COOKIE]
    assert cookie["secure"] and cookie["httponly"] and cookie["samesite"] == "Strict"
    assert cookie["path"] == "/review/" and cookie["max-age"] == 30 * 24 * 3600
    assert bank.token not in cookie.value and bank.token.removeprefix("vbt_") not in cookie.value


def test_a_wrong_token_is_refused_without_a_cookie(bank):
    response = Client().post("/review/sign-in", {"token": bank.token + "x"})
    assert response.status_code == 401 and COOKIE not in response.cookies
    assert bank.token not in response.content.decode()  # never echoed back


def test_review_pages_require_the_cookie(bank):
    response = Client().get("/review/")
    assert response.status_code == 302 and response["Location"] == "/review/sign-in"


def test_every_review_response_is_private_no_store_under_a_strict_csp(bank):
    client = signed_in(bank.token)
    for url in ("/review/sign-in", "/review/", f"/review/operations/{bank.merge.id}",
                f"/review/sources/{bank.originals['merge'][0].id}", f"/review/operations/{uuid.uuid4()}"):
        response = client.get(url)
        assert response["Cache-Control"] == "private, no-store", url
        assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, url
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY and "script-src 'self'" in CONTENT_SECURITY_POLICY


def test_pages_carry_no_inline_script_or_style(bank):
    client = signed_in(bank.token)
    html = client.get(f"/review/operations/{bank.summary.id}").content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and "<style" not in html and " style=" not in html
    assert re.search(r" on[a-z]+=", html) is None


def test_a_post_without_the_csrf_token_is_refused(bank):
    client = Client(enforce_csrf_checks=True)
    assert client.post("/review/sign-in", {"token": bank.token}).status_code == 403
    page = client.get("/review/sign-in")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    assert client.post("/review/sign-in", {"token": bank.token, "csrfmiddlewaretoken": csrf}).status_code == 303
    fields = form_fields(client.get(f"/review/operations/{bank.merge.id}").content.decode(),
                         f"/review/operations/{bank.merge.id}/approve")
    fields.pop("csrfmiddlewaretoken")
    assert client.post(f"/review/operations/{bank.merge.id}/approve", fields).status_code == 403


def test_a_cross_origin_post_is_refused_before_it_acts(bank):
    client = signed_in(bank.token)
    fields = form_fields(client.get(f"/review/operations/{bank.merge.id}").content.decode(),
                         f"/review/operations/{bank.merge.id}/approve")
    response = client.post(f"/review/operations/{bank.merge.id}/approve", fields, headers={"Origin": "http://evil.test"})
    assert response.status_code == 403
    assert "Pending review" in client.get(f"/review/operations/{bank.merge.id}").content.decode()
    assert Client().get("/review/", headers={"Host": "evil.test"}).status_code == 400  # ALLOWED_HOSTS


def test_revoking_the_token_ends_the_review_session_and_clears_the_cookie(bank):
    client = signed_in(bank.token)
    assert client.get("/review/").status_code == 200
    with owner_context(bank.owner):
        token_id = OwnerToken.objects.get().id
    token_revoke(principal=bank.owner, token_id=token_id)
    response = client.get("/review/")
    assert response.status_code == 302 and response["Location"] == "/review/sign-in"
    assert response.cookies[COOKIE].value == "" and response.cookies[COOKIE]["max-age"] == 0


def test_a_scope_change_of_the_token_ends_the_review_session(bank):
    client = signed_in(bank.token)
    with owner_context(bank.owner):  # arrangement: an operator narrows the token's scopes
        OwnerToken.objects.update(scopes=[SCOPE_READ])
    assert client.get("/review/").status_code == 302


def test_the_cookie_expires_after_thirty_days_and_not_before(bank, monkeypatch):
    client = signed_in(bank.token)
    signed_at = time.time()
    monkeypatch.setattr(time, "time", lambda: signed_at + bounds.REVIEW_COOKIE_MAX_AGE_SECONDS - 5)
    assert client.get("/review/").status_code == 200
    monkeypatch.setattr(time, "time", lambda: signed_at + bounds.REVIEW_COOKIE_MAX_AGE_SECONDS + 5)
    assert client.get("/review/").status_code == 302


def test_a_forged_cookie_is_refused(bank):
    client = signed_in(bank.token)
    value = client.cookies[COOKIE].value
    client.cookies[COOKIE] = value[:-2] + ("AA" if not value.endswith("AA") else "BB")
    assert client.get("/review/").status_code == 302


def test_the_review_cookie_does_not_authenticate_the_api(bank, settings):
    settings.AGENT_MEMORY_API_ENABLED = True
    client = signed_in(bank.token)
    response = client.get("/v1/memories?ceiling=restricted")
    assert response.status_code in (401, 403)


def test_a_read_only_token_may_browse_but_not_act(bank):
    read_only = token_create(principal=bank.owner, scopes=[SCOPE_READ])
    client = signed_in(read_only)
    html = client.get(f"/review/operations/{bank.merge.id}").content.decode()
    assert "action-approve" not in html
    response = client.post(f"/review/operations/{bank.merge.id}/approve",
                           {"expected_revision": 1, "idempotency_key": "k"})
    assert response.status_code == 403


def test_another_owners_operation_is_not_found(bank):
    _other, other_token = make_owner("Other")
    client = signed_in(other_token)
    assert client.get(f"/review/operations/{bank.merge.id}").status_code == 404
    assert client.get(f"/review/sources/{bank.originals['merge'][0].id}").status_code == 404


def test_a_retried_approval_with_the_same_key_and_revision_acts_once(bank):
    client = signed_in(bank.token)
    url = f"/review/operations/{bank.merge.id}/approve"
    fields = form_fields(client.get(f"/review/operations/{bank.merge.id}").content.decode(), url)
    first = client.post(url, fields)
    again = client.post(url, fields)  # an uncertain answer, then an explicit retry of the same form
    assert first.status_code == again.status_code == 303
    assert again["Location"] == f"/review/operations/{bank.merge.id}?feedback=approved"
    assert "Active" in client.get(again["Location"]).content.decode()


def test_a_stale_revision_is_a_conflict_that_shows_the_current_operation(bank):
    client = signed_in(bank.token)
    url = f"/review/operations/{bank.merge.id}/approve"
    fields = form_fields(client.get(f"/review/operations/{bank.merge.id}").content.decode(), url)
    fields["expected_revision"] = "7"
    response = client.post(url, fields)
    html = response.content.decode()
    assert response.status_code == 409 and "Conflict:" in html
    assert form_fields(html, url)["expected_revision"] == "1"
    assert form_fields(html, url)["idempotency_key"] != fields["idempotency_key"]


def test_a_malformed_write_fails_without_mutation_and_keeps_nothing_private_in_the_url(bank):
    client = signed_in(bank.token)
    response = client.post(f"/review/operations/{bank.merge.id}/approve", {"expected_revision": "0",
                                                                            "idempotency_key": "k"})
    assert response.status_code == 400 and "Pending review" in response.content.decode()


def test_no_url_redirect_or_log_line_carries_private_content(bank, caplog):
    caplog.set_level(logging.DEBUG)
    client = signed_in(bank.token)
    seen, queue, urls = set(), ["/review/"], []
    for lens in ("all", "summaries", "connections", "conflicts", "merges"):
        queue.append(f"/review/?lens={lens}")
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        html = client.get(url).content.decode()
        found = re.findall(r'(?:href|action)="([^"]+)"', html)
        urls.extend(found)
        queue.extend(u.replace("&amp;", "&") for u in found if u.startswith("/review/") and "/assets/" not in u)
    assert len(seen) > 10 and any(SECRET in client.get(u).content.decode() for u in seen)
    fields = form_fields(client.get(f"/review/operations/{bank.merge.id}").content.decode(),
                         f"/review/operations/{bank.merge.id}/approve")
    redirect = client.post(f"/review/operations/{bank.merge.id}/approve", fields)
    urls.append(redirect["Location"])
    assert not [u for u in urls if SECRET in u or "Celsius" in u]
    assert SECRET not in caplog.text and bank.token not in caplog.text


def _derived_post(client, bank, action, **changes):
    url = f"/review/operations/{bank.summary.id}/derived/{action}"
    fields = form_fields(client.get(f"/review/operations/{bank.summary.id}").content.decode(), url)
    fields.update(changes)
    return client.post(url, fields)


def test_not_here_and_not_true_go_through_the_derived_service(db):
    bank = build_bank(approve_kinds=("summary",))
    client = signed_in(bank.token)
    response = _derived_post(client, bank, "not_here")
    assert response.status_code == 303 and response["Location"].endswith("feedback=not_here")
    assert "not here" in client.get(response["Location"]).content.decode()
    response = _derived_post(client, bank, "not_true")
    assert response.status_code == 303
    html = client.get(response["Location"]).content.decode()
    assert "Invalidated" in html and SECRET not in html  # retired: content-free, its clauses purged
    assert "action-not_true" not in html


def test_a_derived_action_at_a_stale_revision_is_a_conflict_without_effect(db):
    bank = build_bank(approve_kinds=("summary",))
    client = signed_in(bank.token)
    response = _derived_post(client, bank, "delete", expected_revision="9")
    assert response.status_code == 409 and "Conflict:" in response.content.decode()
    assert "action-delete" in response.content.decode()


def _summary_with_an_omitted_input(owner):
    from tests.reconsolidation.helpers import original
    from tests.reconsolidation.recall_builders import summary
    from tests.review_ui.seed import DAY_ONE

    p, q, left_out = (original(owner, f"The owner {what} {SECRET}.", subject="garden")
                      for what in ("grows tomatoes", "grows basil", "waters at dawn"))
    return summary(owner, [[p.id], [q.id]], omitted=[left_out.id], now=DAY_ONE), (p, q, left_out)


def test_omitted_inputs_are_listed_apart_from_each_claims_exact_support(db):
    owner, token = make_owner()
    op, (p, q, left_out) = _summary_with_an_omitted_input(owner)
    client = signed_in(token)
    html = client.get(f"/review/operations/{op.id}").content.decode()
    claims, omitted = html.split('id="omitted"')
    assert re.findall(r'<li data-source="([^"]+)">', claims) == [str(p.id), str(q.id)]
    assert re.findall(r'<li data-source="([^"]+)">', omitted) == [str(left_out.id)]
    source = client.get(f"/review/sources/{left_out.id}?operation={op.id}").content.decode()
    assert "omitted input" in source and left_out.statement in source
    assert "cited support" in client.get(f"/review/sources/{p.id}?operation={op.id}").content.decode()


def test_an_erased_source_withholds_all_content_of_its_operation(db):
    from memory.services.erasure import memory_erase

    owner, token = make_owner()
    op, (p, q, left_out) = _summary_with_an_omitted_input(owner)
    memory_erase(principal=owner, memory_id=left_out.id)
    client = signed_in(token)
    html = client.get(f"/review/operations/{op.id}").content.decode()
    assert 'id="withheld"' in html and SECRET not in html and "source-link" not in html
    assert "Supporting originals" not in html
    assert client.get(f"/review/sources/{left_out.id}").status_code == 404


def test_the_journal_pages_at_its_bound_and_the_next_page_continues(bank, monkeypatch):
    client = signed_in(bank.token)
    monkeypatch.setattr(bounds, "REVIEW_JOURNAL_PAGE_SIZE", 3)  # exactly the bank's three operations
    html = client.get("/review/").content.decode()
    assert html.count('class="card ') == 3 and 'id="next-page"' not in html
    monkeypatch.setattr(bounds, "REVIEW_JOURNAL_PAGE_SIZE", 2)  # one past the bound: a second page
    html = client.get("/review/").content.decode()
    assert html.count('class="card ') == 2
    older = re.search(r'id="next-page" href="([^"]+)"', html).group(1).replace("&amp;", "&")
    rest = client.get(f"/review/{older}").content.decode()
    assert rest.count('class="card ') == 1 and 'id="next-page"' not in rest
    first_ids = set(re.findall(r'data-operation="([^"]+)"', html))
    assert not first_ids & set(re.findall(r'data-operation="([^"]+)"', rest))


def test_a_connection_is_labelled_an_inferred_hypothesis_and_cites_all_its_support(db):
    from reconsolidation.models import DerivedMemory
    from tests.reconsolidation.helpers import original
    from tests.reconsolidation.recall_builders import operation
    from tests.review_ui.seed import DAY_ONE

    owner, token = make_owner()
    p = original(owner, f"The owner bought hiking boots {SECRET}.", subject="hiking")
    q = original(owner, f"The owner booked a mountain hut {SECRET}.", subject="hiking")
    op = operation(owner, "infer_connection", [p.id, q.id], now=DAY_ONE)
    with owner_context(owner):  # arrangement: the hypothesis projection a reviewed connection writes
        DerivedMemory.objects.create(
            tenant_id=owner.tenant_id, principal_id=owner.principal_id, id=op.id, operation=op, kind="hypothesis",
            clauses=[{"text": "The owner may be planning a hiking trip.", "source_ids": [str(p.id), str(q.id)]}],
            subject="hiking", belief_type="preference", sensitivity="internal", scope="user", portable=True,
            confidence=0.3, evidence_at=DAY_ONE, valid_from=DAY_ONE, status="active", revision=1,
            created_at=DAY_ONE, updated_at=DAY_ONE)
    client = signed_in(token)
    journal = client.get("/review/?lens=connections").content.decode()
    assert journal.count('class="card ') == 1 and "Connection" in journal and "Derived, not an original" in journal
    html = client.get(f"/review/operations/{op.id}").content.decode()
    assert "Hypothesis (inferred, tentative)" in html and "not an original memory" in html
    assert sorted(re.findall(r'<li data-source="([^"]+)">', html)) == sorted([str(p.id), str(q.id)])
    assert 'id="omitted"' not in html


def test_undo_is_offered_only_for_a_committed_merge_and_refused_otherwise(bank):
    client = signed_in(bank.token)
    preview = client.get(f"/review/operations/{bank.merge.id}/undo-preview").content.decode()
    assert 'id="undo-unavailable"' in preview and "action-undo" not in preview  # still pending
    response = client.post(f"/review/operations/{bank.merge.id}/undo",
                           {"expected_revision": bank.merge.revision, "idempotency_key": "u1"})
    assert response.status_code == 409 and "Pending review" in response.content.decode()


def test_a_failed_write_keeps_its_key_and_revision_for_an_explicit_retry(bank):
    client = signed_in(bank.token)
    url = f"/review/operations/{bank.merge.id}/approve"
    response = client.post(url, {"expected_revision": bank.merge.revision, "idempotency_key": "   "})
    html = response.content.decode()
    assert response.status_code == 400 and "you can retry the same request" in html
    assert form_fields(html, url)["idempotency_key"] == "   "
    assert form_fields(html, url)["expected_revision"] == str(bank.merge.revision)

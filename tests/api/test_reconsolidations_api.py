"""/v1/memory-reconsolidations: the operation journal, detail, undo, approve and reject over
HTTP — every route's success, every error code, cursor binding, flags and caching."""
from __future__ import annotations

from datetime import timedelta
from uuid import uuid4

import pytest
from django.test import override_settings

from memory import services
from memory.domain import MemoryChanges
from reconsolidation import bounds
from reconsolidation.models import ReconsolidationMember, ReconsolidationOperation
from tests.api.conftest import assert_error
from tests.api.recon_builders import (
    BASE, DAY_ONE, celsius, committed_merge, committed_summary, proposed, recon, summary_inputs,  # noqa: F401
)
from veetbot.identity import SCOPE_READ, SCOPE_WRITE
from veetbot.rls import owner_context

OP_KEYS = ["id", "kind", "state", "revision", "reason", "policy", "model_identity", "created_at", "committed_at",
           "invalidated_at", "undone_at", "content", "sources"]


def detail(api, owner, op_id, ceiling="restricted", token=None):
    return api.get(f"{BASE}/{op_id}", token or owner.token, ceiling=ceiling)


def act(api, owner, op_id, action, revision, key="k-1", ceiling="restricted", token=None, body=None):
    return api.post(f"{BASE}/{op_id}/{action}", token or owner.token,
                    {"expected_revision": revision} if body is None else body, key=key, query={"ceiling": ceiling})


# --- list and detail -----------------------------------------------------------------

def test_detail_is_the_allowlisted_view_with_content_and_complete_source_links(api, owner, recon):
    op = committed_summary(recon, owner.principal)
    response = detail(api, owner, op.id, ceiling="internal")
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-store"
    body = response.json()
    assert list(body) == OP_KEYS
    assert (body["kind"], body["state"], body["revision"]) == ("summarize_related", "committed", op.revision)
    assert body["content"]["record_kind"] == "summary" and body["content"]["derived_id"] == str(op.id)
    assert [c["text"] for c in body["content"]["clauses"]] == [
        "The owner prefers Celsius.", "The owner reads temperatures in the morning."]
    assert {s["role"] for s in body["sources"]} == {"clause"} and len(body["sources"]) == 2
    assert "input_digest" not in body and "tenant_id" not in body


def test_merge_detail_names_its_canonical_and_members(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    body = detail(api, owner, op.id).json()
    with owner_context(owner.principal):
        canonical = ReconsolidationMember.objects.filter(operation_id=op.id).first().canonical_id
    assert body["content"]["canonical_id"] == str(canonical) and body["content"]["clauses"] == []
    assert [s["role"] for s in body["sources"]] == ["member", "member"]


def test_an_unavailable_source_withholds_all_content_and_links_under_restricted(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    undone = act(api, owner, op.id, "undo", op.revision)
    assert undone.status_code == 200 and undone.json()["state"] == "undone"
    services.memory_erase(principal=owner.principal, memory_id=op.inputs[0].memory_id, now=DAY_ONE)
    body = detail(api, owner, op.id).json()
    assert body["state"] == "undone" and body["content"] is None and body["sources"] == []


def test_below_restricted_an_operation_without_visible_support_is_not_found_and_omitted(api, owner, recon):
    op = committed_merge(recon, owner.principal)  # internal originals
    assert detail(api, owner, op.id, ceiling="internal").json()["content"] is not None
    assert_error(detail(api, owner, op.id, ceiling="public"), 404, "not_found")
    assert api.get(BASE, owner.token, ceiling="public").json()["items"] == []
    assert len(api.get(BASE, owner.token, ceiling="internal").json()["items"]) == 1


def test_unknown_and_foreign_ids_are_not_found(api, owner, other_owner, recon):
    op = committed_merge(recon, owner.principal)
    assert_error(detail(api, other_owner, op.id), 404, "not_found")
    assert_error(detail(api, owner, uuid4()), 404, "not_found")
    assert_error(api.get(f"{BASE}/not-a-uuid", owner.token, ceiling="restricted"), 404, "not_found")
    assert_error(act(api, other_owner, op.id, "undo", op.revision), 404, "not_found")
    assert api.get(BASE, other_owner.token, ceiling="restricted").json() == {"items": [], "next_cursor": None}


def test_a_committed_operation_whose_support_expired_is_invalidated_at_read_time(api, owner, recon):
    op = committed_merge(recon, owner.principal, expires_at=DAY_ONE + timedelta(hours=1))
    listed = api.get(BASE, owner.token, ceiling="restricted", state="invalidated").json()["items"]
    assert [item["id"] for item in listed] == [str(op.id)]  # no prior detail read needed
    body = detail(api, owner, op.id).json()
    assert (body["state"], body["content"], body["sources"]) == ("invalidated", None, [])
    with owner_context(owner.principal):
        assert not ReconsolidationMember.objects.filter(operation_id=op.id, active=True).exists()


def test_list_filters_by_kind_and_state(api, owner, recon):
    merge = proposed(recon, owner.principal, celsius(owner.principal), "merge_equivalent")
    summary = committed_summary(recon, owner.principal)
    ids = lambda **q: [i["id"] for i in api.get(BASE, owner.token, ceiling="restricted", **q).json()["items"]]
    assert set(ids()) == {str(merge.id), str(summary.id)}
    assert ids(kind="merge_equivalent") == [str(merge.id)]
    assert ids(state="committed") == [str(summary.id)]
    assert ids(kind="merge_equivalent", state="committed") == []


def test_list_pages_descend_and_the_cursor_is_bound_to_owner_filters_and_ceiling(api, owner, other_owner, recon):
    ops = [proposed(recon, owner.principal, celsius(owner.principal), "merge_equivalent") for _ in range(3)]
    first = api.get(BASE, owner.token, ceiling="restricted", limit="2").json()
    assert len(first["items"]) == 2 and first["next_cursor"]
    second = api.get(BASE, owner.token, ceiling="restricted", limit="2", cursor=first["next_cursor"]).json()
    assert second["next_cursor"] is None
    seen = [i["id"] for i in first["items"] + second["items"]]
    expected = sorted(ops, key=lambda o: (o.created_at, str(o.id)), reverse=True)
    assert seen == [str(o.id) for o in expected]
    cursor = first["next_cursor"]
    for query in ({"ceiling": "sensitive"}, {"ceiling": "restricted", "kind": "merge_equivalent"},
                  {"ceiling": "restricted", "state": "proposed"}):
        assert assert_error(api.get(BASE, owner.token, cursor=cursor, **query), 400, "validation_error") == []
    assert_error(api.get(BASE, other_owner.token, ceiling="restricted", cursor=cursor), 400, "validation_error")
    assert_error(api.get(BASE, owner.token, ceiling="restricted", cursor=cursor[:-2] + "xx"), 400,
                 "validation_error")


def test_page_size_defaults_to_50_and_is_bounded_at_100(api, owner, recon):
    assert bounds.RECON_OPERATIONS_PAGE_DEFAULT == 50 and bounds.RECON_OPERATIONS_PAGE_MAX == 100
    assert api.get(BASE, owner.token, ceiling="restricted", limit="100").status_code == 200
    for limit in ("101", "0", "-1", "x"):
        assert assert_error(api.get(BASE, owner.token, ceiling="restricted", limit=limit), 400,
                            "validation_error") == []


@pytest.mark.parametrize("query", [
    {}, {"ceiling": "secret"}, {"ceiling": "restricted", "kind": "merge"}, {"ceiling": "restricted", "state": "x"},
    {"ceiling": "restricted", "unknown": "1"}, {"ceiling": ["public", "internal"]},
])
def test_bad_filters_are_validation_errors_with_empty_details(api, owner, recon, query):
    response = api.request("GET", BASE, owner.token, query=query)
    assert assert_error(response, 400, "validation_error") == []


def test_detail_requires_a_ceiling(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    assert assert_error(api.get(f"{BASE}/{op.id}", owner.token), 400, "validation_error") == []


# --- undo ----------------------------------------------------------------------------

def test_undo_answers_the_operation_view_and_ends_suppression(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    response = act(api, owner, op.id, "undo", op.revision)
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-store"
    body = response.json()
    assert list(body) == OP_KEYS and (body["state"], body["revision"]) == ("undone", op.revision + 1)
    assert body["undone_at"] is not None and len(body["sources"]) == 2
    with owner_context(owner.principal):
        assert not ReconsolidationMember.objects.filter(operation_id=op.id, active=True).exists()


def test_undo_replay_returns_the_same_receipt_even_after_sources_vanish(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    first = act(api, owner, op.id, "undo", op.revision, key="same")
    services.memory_erase(principal=owner.principal, memory_id=op.inputs[1].memory_id, now=DAY_ONE)
    replay = act(api, owner, op.id, "undo", op.revision, key="same")
    assert replay.status_code == 200
    expected = {**first.json(), "content": None, "sources": []}  # content filtered again
    assert replay.json() == expected


def test_undo_conflicts_stale_revision_wrong_kind_and_reused_key(api, owner, recon):
    merge = committed_merge(recon, owner.principal)
    summary = committed_summary(recon, owner.principal)
    before = detail(api, owner, merge.id).json()
    assert_error(act(api, owner, merge.id, "undo", merge.revision - 1, key="a"), 409, "conflict")
    assert_error(act(api, owner, summary.id, "undo", summary.revision, key="b"), 409, "conflict")
    assert act(api, owner, merge.id, "undo", merge.revision, key="c").status_code == 200
    assert_error(act(api, owner, merge.id, "undo", merge.revision + 1, key="c"), 409, "conflict")
    assert_error(act(api, owner, merge.id, "undo", merge.revision + 1, key="d"), 409, "conflict")  # not committed
    assert before["state"] == "committed"


def test_a_memory_write_key_reused_for_undo_conflicts(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    assert api.post("/v1/sessions", owner.token, {"scope": "user"}, key="shared").status_code == 201
    assert_error(act(api, owner, op.id, "undo", op.revision, key="shared"), 409, "conflict")


@pytest.mark.parametrize("body", [
    {}, {"expected_revision": "1"}, {"expected_revision": 1.0}, {"expected_revision": True},
    {"expected_revision": 0}, {"expected_revision": -1}, {"expected_revision": 1, "extra": 1}, [1],
])
def test_undo_body_is_closed_with_a_strict_positive_revision(api, owner, recon, body):
    op = committed_merge(recon, owner.principal)
    assert assert_error(act(api, owner, op.id, "undo", 0, body=body), 400, "validation_error") == []
    assert detail(api, owner, op.id).json()["state"] == "committed"


def test_undo_idempotency_key_is_required_nonblank_and_at_most_128(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    for key in (None, " ", "k" * 129):
        assert assert_error(act(api, owner, op.id, "undo", op.revision, key=key), 400, "validation_error") == []
    assert act(api, owner, op.id, "undo", op.revision, key="k" * 128).status_code == 200


def test_undo_above_the_ceiling_is_not_found_and_changes_nothing(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    assert_error(act(api, owner, op.id, "undo", op.revision, ceiling="public"), 404, "not_found")
    assert detail(api, owner, op.id).json()["state"] == "committed"


# --- approve / reject ----------------------------------------------------------------

def test_approve_commits_the_current_revision_and_is_idempotent(api, owner, recon):
    op = proposed(recon, owner.principal, celsius(owner.principal), "merge_equivalent")
    first = act(api, owner, op.id, "approve", op.revision, key="ap")
    assert first.status_code == 200 and first.json()["state"] == "committed"
    assert act(api, owner, op.id, "approve", op.revision, key="ap").json() == first.json()
    assert_error(act(api, owner, op.id, "approve", op.revision, key="ap2"), 409, "conflict")


def test_reject_ends_a_proposal_and_stale_revisions_conflict(api, owner, recon):
    op = proposed(recon, owner.principal, summary_inputs(owner.principal), "summarize_related")
    assert_error(act(api, owner, op.id, "reject", op.revision + 1, key="r0"), 409, "conflict")
    rejected = act(api, owner, op.id, "reject", op.revision, key="r1")
    assert rejected.status_code == 200 and rejected.json()["state"] == "rejected"
    assert_error(act(api, owner, op.id, "approve", rejected.json()["revision"], key="r2"), 409, "conflict")


def _target(recon, owner, action):
    if action == "undo":
        return committed_merge(recon, owner.principal)
    return proposed(recon, owner.principal, celsius(owner.principal), "merge_equivalent")


@pytest.mark.parametrize("action", ["undo", "approve", "reject"])
def test_an_action_replayed_with_its_key_answers_the_same_view_marked_replayed(api, owner, recon, action):
    op = _target(recon, owner, action)
    first = act(api, owner, op.id, action, op.revision, key=f"{action}-once")
    assert first.status_code == 200 and "Idempotency-Replayed" not in first
    again = act(api, owner, op.id, action, op.revision, key=f"{action}-once")
    assert again.status_code == 200 and again["Idempotency-Replayed"] == "true"
    assert again.json() == first.json()
    assert detail(api, owner, op.id).json()["revision"] == op.revision + 1  # acted on once


@pytest.mark.parametrize("action", ["undo", "approve", "reject"])
def test_an_action_key_reused_with_another_revision_conflicts_and_is_not_a_replay(api, owner, recon, action):
    op = _target(recon, owner, action)
    assert act(api, owner, op.id, action, op.revision, key="k").status_code == 200
    reused = act(api, owner, op.id, action, op.revision + 1, key="k")
    assert_error(reused, 409, "conflict")
    assert "Idempotency-Replayed" not in reused


def test_a_proposed_summary_shows_its_clauses_for_review(api, owner, recon):
    op = proposed(recon, owner.principal, summary_inputs(owner.principal), "summarize_related")
    body = detail(api, owner, op.id).json()
    assert body["state"] == "proposed" and len(body["content"]["clauses"]) == 2
    assert body["content"]["derived_id"] is None


# --- scopes, flags, caching ----------------------------------------------------------

def test_missing_scope_is_an_authorization_error(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    write_only, read_only = owner.token_with([SCOPE_WRITE]), owner.token_with([SCOPE_READ])
    assert_error(api.get(BASE, write_only, ceiling="restricted"), 403, "authorization_error")
    assert_error(detail(api, owner, op.id, token=write_only), 403, "authorization_error")
    for action in ("undo", "approve", "reject"):
        assert_error(act(api, owner, op.id, action, op.revision, token=read_only), 403, "authorization_error")
    assert_error(api.get(BASE, None, ceiling="restricted"), 401, "authorization_error")


ROUTES = [("GET", BASE), ("GET", f"{BASE}/{uuid4()}")] + [
    ("POST", f"{BASE}/{uuid4()}/{action}") for action in ("undo", "approve", "reject")] + [
    ("POST", f"{BASE}/approve-exact-copies")]


@pytest.mark.parametrize("method,path", ROUTES)
@pytest.mark.parametrize("flags", [
    {"AGENT_MEMORY_API_ENABLED": False}, {"AGENT_MEMORY_RECONSOLIDATION_API_ENABLED": False}])
def test_routes_answer_not_found_unless_both_flags_are_on(api, owner, recon, method, path, flags):
    with override_settings(**flags):
        response = api.request(method, path, owner.token, {"expected_revision": 1}, query={"ceiling": "restricted"})
        anonymous = api.request(method, path, None, {"expected_revision": 1})
    assert_error(response, 404, "not_found")
    assert_error(anonymous, 404, "not_found")


def test_both_surface_flags_default_off():
    from veetbot import settings as defaults

    assert defaults.AGENT_MEMORY_API_ENABLED is False or "AGENT_MEMORY_API_ENABLED" in __import__("os").environ
    assert (defaults.AGENT_MEMORY_RECONSOLIDATION_API_ENABLED is False
            or "AGENT_MEMORY_RECONSOLIDATION_API_ENABLED" in __import__("os").environ)


def test_history_detail_and_undo_work_with_processing_switched_off(api, owner, recon, settings):
    op = committed_merge(recon, owner.principal)
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    assert api.get(BASE, owner.token, ceiling="restricted").status_code == 200
    assert detail(api, owner, op.id).status_code == 200
    assert act(api, owner, op.id, "undo", op.revision).json()["state"] == "undone"


def test_reads_never_write_when_support_is_intact(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    with owner_context(owner.principal):
        before = ReconsolidationOperation.objects.get(id=op.id).revision
    detail(api, owner, op.id)
    api.get(BASE, owner.token, ceiling="restricted")
    with owner_context(owner.principal):
        assert ReconsolidationOperation.objects.get(id=op.id).revision == before


def test_a_corrected_source_invalidates_and_withholds(api, owner, recon):
    op = committed_merge(recon, owner.principal)
    services.memory_revise(principal=owner.principal, memory_id=op.inputs[0].memory_id,
                           changes=MemoryChanges(confidence=0.3), now=DAY_ONE)
    body = detail(api, owner, op.id).json()
    assert (body["state"], body["content"], body["sources"]) == ("invalidated", None, [])

"""Derived memories on /v1/memories: include_derived browsing, governed lookup and the
owner controls (dismiss, mark_reviewed, not_here, not_true, delete) — while ordinary
behaviour stays byte-for-byte what it was."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings

from memory.models import Memory
from reconsolidation.models import DerivedMemory, ReconsolidationBlock, ReconsolidationOperation
from tests.api.conftest import assert_error
from tests.api.recon_builders import DAY_ONE, committed_summary, recon, summary_inputs  # noqa: F401
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import by_kind, process
from veetbot.rls import owner_context

DERIVED_KEYS = ["id", "record_kind", "operation_id", "revision", "status", "review_flag", "reviewed_at",
                "dismissed_at", "restricted", "created_at", "updated_at", "content", "sources"]


def page(api, owner, **query):
    return api.get("/v1/memories", owner.token, ceiling="restricted", **query)


def review(api, owner, memory_id, action, key, ceiling="restricted"):
    return api.post(f"/v1/memories/{memory_id}/review", owner.token, {"action": action}, key=key,
                    query={"ceiling": ceiling})


def derived_row(owner, derived_id):
    with owner_context(owner.principal):
        return DerivedMemory.objects.get(id=derived_id)


def test_without_include_derived_the_list_is_byte_identical(api, owner, recon):
    summary = committed_summary(recon, owner.principal)
    absent = page(api, owner)
    explicit = page(api, owner, include_derived="false")
    with override_settings(AGENT_MEMORY_RECONSOLIDATION_API_ENABLED=False):
        surface_off = page(api, owner)
    assert absent.content == explicit.content == surface_off.content
    ids = [item["id"] for item in absent.json()["items"]]
    assert len(ids) == 2 and str(summary.id) not in ids
    assert all("record_kind" not in item for item in absent.json()["items"])


def test_include_derived_merges_active_derived_rows_by_store_position(api, owner, recon):
    summary = committed_summary(recon, owner.principal)
    items = page(api, owner, include_derived="true").json()["items"]
    assert len(items) == 3
    derived = items[0]  # its position was allocated after both originals
    assert list(derived) == DERIVED_KEYS
    assert (derived["id"], derived["record_kind"], derived["operation_id"]) == (str(summary.id), "summary",
                                                                                 str(summary.id))
    assert derived["status"] == "active" and derived["review_flag"] is True and derived["restricted"] is False
    assert [c["text"] for c in derived["content"]["clauses"]] == [
        "The owner prefers Celsius.", "The owner reads temperatures in the morning."]
    assert derived["content"]["authority"] == "USER" and len(derived["sources"]) == 2
    assert all("record_kind" not in item for item in items[1:])  # originals unchanged


def test_include_derived_pages_with_a_cursor_bound_to_it(api, owner, recon):
    committed_summary(recon, owner.principal)
    first = page(api, owner, include_derived="true", limit="2").json()
    assert len(first["items"]) == 2 and first["next_cursor"]
    second = page(api, owner, include_derived="true", limit="2", cursor=first["next_cursor"]).json()
    assert len(second["items"]) == 1 and second["next_cursor"] is None
    ids = [i["id"] for i in first["items"] + second["items"]]
    assert len(set(ids)) == 3
    assert_error(page(api, owner, limit="2", cursor=first["next_cursor"]), 400, "validation_error")


def test_include_derived_is_malformed_while_the_surface_is_off(api, owner, recon):
    with override_settings(AGENT_MEMORY_RECONSOLIDATION_API_ENABLED=False):
        assert_error(page(api, owner, include_derived="true"), 400, "validation_error")
    assert_error(page(api, owner, include_derived="yes"), 400, "validation_error")


def test_derived_rows_only_join_active_and_all_pages_and_honour_filters(api, owner, recon):
    committed_summary(recon, owner.principal)
    kinds = lambda **q: ["record_kind" in i for i in page(api, owner, include_derived="true", **q).json()["items"]]
    assert kinds(status="all").count(True) == 1
    assert kinds(status="retracted") == []
    assert kinds(belief_type="fact").count(True) == 0  # the summary inherits "preference"
    assert kinds(belief_type="preference").count(True) == 1


def test_a_derived_row_with_unavailable_support_is_skipped_but_the_page_is_kept(api, owner, recon):
    committed_summary(recon, owner.principal, expires_at=DAY_ONE + timedelta(hours=1))
    items = page(api, owner, include_derived="true", status="all").json()["items"]
    assert len(items) == 2 and all("record_kind" not in i for i in items)


def test_derived_lookup_uses_the_governed_view_and_is_off_with_the_surface(api, owner, other_owner, recon):
    summary = committed_summary(recon, owner.principal)
    body = api.get(f"/v1/memories/{summary.id}", owner.token, ceiling="internal").json()
    assert list(body) == DERIVED_KEYS and body["record_kind"] == "summary"
    assert_error(api.get(f"/v1/memories/{summary.id}", owner.token, ceiling="public"), 404, "not_found")
    assert_error(api.get(f"/v1/memories/{summary.id}", other_owner.token, ceiling="restricted"), 404, "not_found")
    with override_settings(AGENT_MEMORY_RECONSOLIDATION_API_ENABLED=False):
        assert_error(api.get(f"/v1/memories/{summary.id}", owner.token, ceiling="restricted"), 404, "not_found")


def test_dismiss_and_mark_reviewed_change_only_review_flags(api, owner, recon):
    summary = committed_summary(recon, owner.principal)
    before = derived_row(owner, summary.id)
    dismissed = review(api, owner, summary.id, "dismiss", "d1")
    assert dismissed.status_code == 200 and dismissed["Cache-Control"] == "private, no-store"
    assert dismissed.json()["review_flag"] is False and dismissed.json()["dismissed_at"] is not None
    reviewed = review(api, owner, summary.id, "mark_reviewed", "m1").json()
    assert reviewed["reviewed_at"] is not None and reviewed["status"] == "active"
    after = derived_row(owner, summary.id)
    assert (after.revision, after.clauses, after.confidence) == (before.revision, before.clauses, before.confidence)


def test_review_replays_and_a_reused_key_conflicts(api, owner, recon):
    summary = committed_summary(recon, owner.principal)
    first = review(api, owner, summary.id, "dismiss", "same")
    assert review(api, owner, summary.id, "dismiss", "same").json() == first.json()
    assert_error(review(api, owner, summary.id, "not_here", "same"), 409, "conflict")
    assert api.post("/v1/sessions", owner.token, {"scope": "user"}, key="sess").status_code == 201
    assert_error(review(api, owner, summary.id, "dismiss", "sess"), 409, "conflict")  # one key namespace


def test_not_here_overlays_a_local_restriction_without_touching_the_projection(api, owner, recon):
    summary = committed_summary(recon, owner.principal)
    before = derived_row(owner, summary.id)
    body = review(api, owner, summary.id, "not_here", "h1").json()
    assert body["restricted"] is True and body["revision"] == before.revision + 1
    after = derived_row(owner, summary.id)
    assert (after.scope, after.portable, after.clauses) == (before.scope, before.portable, before.clauses)


def test_not_true_retires_content_free_blocks_recreation_and_keeps_originals(api, owner, recon):
    memories = summary_inputs(owner.principal)
    op = by_kind(process(recon, owner.principal, memories, DAY_ONE), "summarize_related")[0]
    from tests.reconsolidation.work_builders import approve

    summary = approve(recon, owner.principal, op, DAY_ONE)
    body = review(api, owner, summary.id, "not_true", "t1").json()
    assert (body["status"], body["content"], body["sources"]) == ("retired", None, [])
    with owner_context(owner.principal):
        assert ReconsolidationOperation.objects.get(id=summary.id).state == "invalidated"
        signatures = list(ReconsolidationBlock.objects.values_list("signature", flat=True))
        assert Memory.objects.filter(id__in=[m.id for m in memories], erased_at__isnull=True).count() == 2
    assert signatures and "Celsius" not in repr(signatures)
    assert derived_row(owner, summary.id).clauses == []
    ids = [i["id"] for i in page(api, owner, include_derived="true").json()["items"]]
    assert str(summary.id) not in ids
    # Newly supplied copies of the same claims (new IDs, new events) do not recreate it.
    copies = summary_inputs(owner.principal)
    assert by_kind(process(recon, owner.principal, copies, DAY_ONE + timedelta(days=1)), "summarize_related") == []
    # ... while an unrelated summary is still formed (the block is not a blanket refusal).
    other = [original(owner.principal, "The owner drinks tea.", subject="drinks"),
             original(owner.principal, "The owner drinks it without sugar.", subject="drinks")]
    assert len(by_kind(process(recon, owner.principal, other, DAY_ONE + timedelta(days=2)), "summarize_related")) == 1


def test_delete_erases_the_derived_copy_only_and_replays_204(api, owner, recon):
    summary = committed_summary(recon, owner.principal)
    response = api.delete(f"/v1/memories/{summary.id}", owner.token, key="del", query={"ceiling": "restricted"})
    assert response.status_code == 204 and response["Cache-Control"] == "private, no-store"
    assert_error(api.get(f"/v1/memories/{summary.id}", owner.token, ceiling="restricted"), 404, "not_found")
    again = api.delete(f"/v1/memories/{summary.id}", owner.token, key="del", query={"ceiling": "restricted"})
    assert again.status_code == 204
    row = derived_row(owner, summary.id)
    assert (row.status, row.clauses, row.subject) == ("erased", [], "") and row.erased_at is not None
    assert len(page(api, owner).json()["items"]) == 2  # both originals remain
    assert_error(api.delete(f"/v1/memories/{summary.id}", owner.token, key="del2",
                            query={"ceiling": "restricted"}), 404, "not_found")


def test_derived_controls_above_the_ceiling_are_not_found_and_write_nothing(api, owner, recon):
    summary = committed_summary(recon, owner.principal)
    before = derived_row(owner, summary.id)
    assert_error(review(api, owner, summary.id, "not_true", "c1", ceiling="public"), 404, "not_found")
    assert_error(api.delete(f"/v1/memories/{summary.id}", owner.token, key="c2", query={"ceiling": "public"}),
                 404, "not_found")
    assert derived_row(owner, summary.id).status == before.status == "active"


@pytest.mark.parametrize("action", ["dismiss", "not_here", "not_true"])
def test_controls_need_write_and_read_scope(api, owner, recon, action):
    summary = committed_summary(recon, owner.principal)
    read_only = owner.token_with(["memory.read"])
    response = api.post(f"/v1/memories/{summary.id}/review", read_only, {"action": action}, key="s",
                        query={"ceiling": "restricted"})
    assert_error(response, 403, "authorization_error")

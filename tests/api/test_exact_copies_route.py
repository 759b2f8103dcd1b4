"""POST /v1/memory-reconsolidations/approve-exact-copies: one request approves the pending
exact-copy merges it names (each at the revision the owner saw), answers every item, leaves
everything else alone, replays under its key and documents itself in the schema."""
from __future__ import annotations

from uuid import uuid4

import pytest
from drf_spectacular.generators import SchemaGenerator

from reconsolidation.models import ReconsolidationOperation
from tests.api.conftest import assert_error
from tests.api.recon_builders import BASE, DAY_ONE, celsius, proposed, recon, summary_inputs  # noqa: F401
from veetbot.identity import SCOPE_READ
from veetbot.rls import owner_context

ROUTE = f"{BASE}/approve-exact-copies"


def post(api, owner, items, key="bulk-1", ceiling="restricted", token=None, body=None):
    return api.post(ROUTE, token or owner.token, {"operations": items} if body is None else body, key=key,
                    query={"ceiling": ceiling})


def item(op, revision=None):
    return {"id": str(op.id), "revision": op.revision if revision is None else revision}


def state(owner, op):
    with owner_context(owner.principal):
        return ReconsolidationOperation.objects.get(id=op.id).state


def test_exact_copies_are_approved_and_every_item_is_answered(api, owner, other_owner, recon):
    merge = proposed(recon, owner.principal, celsius(owner.principal), "merge_equivalent")
    summary = proposed(recon, owner.principal, summary_inputs(owner.principal), "summarize_related")
    foreign = proposed(recon, other_owner.principal, celsius(other_owner.principal), "merge_equivalent")
    unknown = uuid4()
    response = post(api, owner, [item(merge), item(summary), item(foreign), {"id": str(unknown), "revision": 1}])
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-store"
    assert response.json() == {"approved": 1, "items": [
        {"id": str(merge.id), "outcome": "approved", "revision": merge.revision + 1},
        {"id": str(summary.id), "outcome": "not_exact_copy", "revision": summary.revision},
        {"id": str(foreign.id), "outcome": "not_found", "revision": None},
        {"id": str(unknown), "outcome": "not_found", "revision": None},
    ]}
    assert (state(owner, merge), state(owner, summary), state(other_owner, foreign)) == (
        "committed", "proposed", "proposed")


def test_a_stale_revision_is_answered_in_its_item_and_changes_nothing(api, owner, recon):
    merge = proposed(recon, owner.principal, celsius(owner.principal), "merge_equivalent")
    response = post(api, owner, [item(merge, merge.revision + 1)])
    assert response.json()["items"] == [{"id": str(merge.id), "outcome": "stale_revision",
                                         "revision": merge.revision}]
    assert state(owner, merge) == "proposed"


def test_the_same_key_replays_and_with_another_body_conflicts(api, owner, recon):
    merge = proposed(recon, owner.principal, celsius(owner.principal), "merge_equivalent")
    post(api, owner, [item(merge)])
    again = post(api, owner, [item(merge)])
    assert again.json() == {"approved": 1, "items": [{"id": str(merge.id), "outcome": "replayed",
                                                      "revision": merge.revision + 1}]}
    assert_error(post(api, owner, [item(merge, merge.revision + 1)]), 409, "conflict")


def test_above_the_ceiling_is_a_not_found_item(api, owner, recon):
    merge = proposed(recon, owner.principal, celsius(owner.principal), "merge_equivalent")  # internal originals
    response = post(api, owner, [item(merge)], ceiling="public")
    assert response.json()["items"][0]["outcome"] == "not_found" and state(owner, merge) == "proposed"


@pytest.mark.parametrize("body", [
    {}, {"operations": []}, {"operations": [{"id": "x", "revision": 1}]},
    {"operations": [{"id": str(uuid4()), "revision": "1"}]}, {"operations": [{"id": str(uuid4()), "revision": 0}]},
    {"operations": [{"id": str(uuid4()), "revision": 1, "extra": 1}]}, {"operations": [], "more": 1},
    {"operations": [{"id": str(uuid4()), "revision": 1} for _ in range(101)]},
])
def test_the_body_is_closed_and_bounded(api, owner, recon, body):
    assert_error(post(api, owner, None, body=body), 400, "validation_error")


def test_an_operation_named_twice_is_malformed(api, owner, recon):
    same = str(uuid4())
    assert_error(post(api, owner, [{"id": same, "revision": 1}, {"id": same, "revision": 2}]), 400,
                 "validation_error")


def test_the_key_ceiling_and_write_scope_are_required(api, owner, recon):
    merge = proposed(recon, owner.principal, celsius(owner.principal), "merge_equivalent")
    assert_error(post(api, owner, [item(merge)], key=None), 400, "validation_error")
    assert_error(api.post(ROUTE, owner.token, {"operations": [item(merge)]}, key="k"), 400, "validation_error")
    assert_error(post(api, owner, [item(merge)], token=owner.token_with([SCOPE_READ])), 403, "authorization_error")
    assert state(owner, merge) == "proposed"


def test_the_route_is_documented_with_its_body_answers_and_errors():
    document = SchemaGenerator().get_schema(request=None, public=True)
    operation = document["paths"]["/v1/memory-reconsolidations/approve-exact-copies"]["post"]
    assert set(operation["responses"]) == {"200", "400", "401", "403", "404", "406", "409", "414"}
    params = {(p["in"], p["name"]): p for p in operation["parameters"]}
    assert params[("query", "ceiling")]["required"] and params[("header", "Idempotency-Key")]["required"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    operations = document["components"]["schemas"][body]["properties"]["operations"]
    assert (operations["minItems"], operations["maxItems"], operations["uniqueItems"]) == (1, 100, True)
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert set(document["components"]["schemas"][answer]["properties"]) == {"approved", "items"}

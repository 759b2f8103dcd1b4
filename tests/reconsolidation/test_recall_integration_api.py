"""POST /v1/memories/search through reconsolidation: the route renders one member per active
merge set and labels a summary as derived (record_kind, operation_id, complete support),
never as an original; with the switch off the response is plain atomic recall."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import include, path

import veetbot.urls
from tests.api.conftest import api, owner  # noqa: F401  (fixtures)
from tests.reconsolidation.recall_builders import merge, summary
from tests.recall.helpers import Bank
from veetbot.clock import utcnow

urlpatterns = [path("v1/", include("recall.api.urls")), *veetbot.urls.urlpatterns]
pytestmark = pytest.mark.urls(__name__)

URL = "/v1/memories/search"
SAME = "The passport renewal is due in March."


def _search(api, owner):
    response = api.post(URL, owner.token, {"query": "passport renewal", "ceiling": "internal"}, key=None)
    assert response.status_code == 200, response.content
    return response.json()


def test_the_search_route_suppresses_duplicates_and_labels_summaries_only_when_switched_on(api, owner, settings):
    bank = Bank(owner.principal)
    past = utcnow() - timedelta(days=3)
    a, b = (bank.add(SAME, subject="passport", at=past + timedelta(hours=n)) for n in range(2))
    anchor = bank.add("The passport renewal appointment is on Friday.", subject="passport renewal", at=past)
    p = bank.add("The embassy is closed on Mondays.", subject="embassy", at=past)
    q = bank.add("The embassy asks for printed photos.", subject="embassy", at=past)
    op = merge(owner.principal, a, b, now=past + timedelta(days=1))
    derived = summary(owner.principal, [[p], [q]], omitted=[anchor], now=past + timedelta(days=1))

    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    plain = _search(api, owner)
    assert {item["id"] for item in plain["items"]} == {str(a), str(b), str(anchor)}
    assert {item["record_kind"] for item in plain["items"]} == {"belief"}
    assert all(item["operation_id"] is None and item["clauses"] == [] for item in plain["items"])

    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    body = _search(api, owner)
    items = {item["id"]: item for item in body["items"]}
    assert set(items) == {str(a), str(anchor), str(derived.id)}
    assert (items[str(a)]["record_kind"], items[str(a)]["operation_id"]) == ("belief", str(op.id))
    recalled = items[str(derived.id)]
    assert body["items"][-1]["id"] == str(derived.id)  # after every original
    assert (recalled["record_kind"], recalled["operation_id"], recalled["derivation"]) == (
        "summary", str(derived.id), "summary")
    assert set(recalled["support_ids"]) == {str(anchor), str(p), str(q)}
    assert [c["source_ids"] for c in recalled["clauses"]] == [[str(p)], [str(q)]]
    assert f"[m:{derived.id}] Summary of related memories:" in body["rendered"]

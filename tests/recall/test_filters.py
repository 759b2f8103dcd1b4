"""The caller's filters — scope, belief_types, exclude_ids — are hard predicates of every
channel and of the expansion arm, on every surface (retriever, POST /v1/memories/search,
``manage.py recall``); selection_mode picks the legacy arm and says so.

Each filter gets its own planted rows: a permitted row and forbidden rows that match the
query exactly as well — same words, same subject phrase, same entity ID, the same vector
written into the index at the row's revision — so only the filter can keep them out.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Callable
from uuid import UUID

import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import include, path

import veetbot.urls
from memory.services import session_create
from recall import encoders
from recall.arms import expansion, permitted
from recall.models import RecallTrace
from tests.api.conftest import Api
from tests.factories import T0, make_owner
from tests.recall.helpers import NOW, Bank, MappedEncoder, bank, basis, semantic_on  # noqa: F401
from veetbot.rls import owner_context

urlpatterns = [path("v1/", include("recall.api.urls")), *veetbot.urls.urlpatterns]

QUERY = "zqx packing list passport"
STATEMENT = "The packing list includes the passport"
SUBJECT = "packing list"
ENTITY = "trip:alps"


@dataclass
class Planted:
    request: dict  # the filter as RecallRequest / body fields
    permitted: dict[str, UUID] = field(default_factory=dict)
    forbidden: dict[str, UUID] = field(default_factory=dict)


def _add(bank: Bank, name: str, **overrides) -> UUID:
    overrides.setdefault("belief_type", "preference")
    return bank.add(f"{STATEMENT} ({name}).", subject=SUBJECT, at=T0, entity_ids=(ENTITY,), **overrides)


def scope_project(bank: Bank) -> Planted:
    p = Planted({"scope": "project:alpha"})
    p.permitted["same project"] = _add(bank, "same project", scope="project:alpha")
    p.permitted["portable user"] = _add(bank, "portable user")
    p.forbidden["other project"] = _add(bank, "other project", scope="project:beta")
    p.forbidden["non-portable user"] = _add(bank, "non-portable user", portable=False)
    session = session_create(principal=bank.principal, scope="session", started_at=T0)
    p.forbidden["a session"] = _add(bank, "a session", scope=f"session:{session.id}")
    return p


def scope_session(bank: Bank) -> Planted:
    here = session_create(principal=bank.principal, scope="session", started_at=T0)
    elsewhere = session_create(principal=bank.principal, scope="session", started_at=T0)
    p = Planted({"scope": f"session:{here.id}"})
    p.permitted["this session"] = _add(bank, "this session", scope=f"session:{here.id}")
    p.permitted["portable user"] = _add(bank, "portable user")
    p.forbidden["other session"] = _add(bank, "other session", scope=f"session:{elsewhere.id}")
    p.forbidden["non-portable user"] = _add(bank, "non-portable user", portable=False)
    p.forbidden["a project"] = _add(bank, "a project", scope="project:alpha")
    return p


def scope_user(bank: Bank) -> Planted:
    p = Planted({"scope": "user"})
    p.permitted["portable user"] = _add(bank, "portable user")
    p.permitted["non-portable user"] = _add(bank, "non-portable user", portable=False)
    session = session_create(principal=bank.principal, scope="session", started_at=T0)
    p.forbidden["a project"] = _add(bank, "a project", scope="project:alpha")
    p.forbidden["a session"] = _add(bank, "a session", scope=f"session:{session.id}")
    return p


def belief_types(bank: Bank) -> Planted:
    p = Planted({"belief_types": ("preference", "routine")})
    p.permitted["preference"] = _add(bank, "preference")
    p.permitted["routine"] = _add(bank, "routine", belief_type="routine")
    p.forbidden["goal"] = _add(bank, "goal", belief_type="goal")
    p.forbidden["fact"] = _add(bank, "fact", belief_type="fact")
    return p


def exclude_ids(bank: Bank) -> Planted:
    p = Planted({})
    p.permitted["kept"] = _add(bank, "kept")
    p.forbidden["excluded"] = _add(bank, "excluded")
    p.forbidden["also excluded"] = _add(bank, "also excluded")
    p.request["exclude_ids"] = tuple(p.forbidden.values())
    return p


FILTERS: dict[str, Callable[[Bank], Planted]] = {
    "scope project": scope_project, "scope session": scope_session, "scope user": scope_user,
    "belief_types": belief_types, "exclude_ids": exclude_ids,
}
CHANNELS = [("hybrid", "relevance"), ("dense", "relevance"), ("sparse", "relevance"), ("hybrid", "recent")]


# An axis of their own: every vector these tests insert is rolled back but stays in the HNSW
# index as a dead tuple until a vacuum, and hundreds of identical dead vectors on basis(0)
# would crowd out the index-mode tests that query there (test_latency_semantic_plans).
AXIS = 301


def _planted(bank: Bank, name: str) -> tuple[Planted, MappedEncoder]:
    planted = FILTERS[name](bank)
    encoder = MappedEncoder({QUERY: basis(AXIS)})
    for memory_id in [*planted.permitted.values(), *planted.forbidden.values()]:
        bank.vector(memory_id, basis(AXIS), encoder)
    return planted, encoder


def _leaks(planted: Planted, ids) -> list[str]:
    ids = {str(i) for i in ids}
    return sorted(name for name, memory_id in planted.forbidden.items() if str(memory_id) in ids)


@pytest.mark.parametrize("name", list(FILTERS))
@pytest.mark.parametrize("channel,mode", CHANNELS)
def test_each_filter_holds_in_every_channel_and_stage(bank, semantic_on, name, channel, mode):
    planted, encoder = _planted(bank, name)
    result = bank.recall(QUERY, encoder=encoder, channel=channel, selection_mode=mode, entity_ids=(ENTITY,),
                         **planted.request)
    assert result.channel == ("sparse" if mode == "recent" else channel)
    stages = result.stages
    for stage, ids in (("candidates", stages.candidate_ids), ("dense", stages.dense_ids),
                       ("lexical", stages.lexical_ids), ("structured", stages.structured_ids),
                       ("ranked", stages.ranked_ids), ("rendered", stages.rendered_ids),
                       ("items", [i.id for i in result.items])):
        assert _leaks(planted, ids) == [], f"{stage} leaked"
    assert set(planted.permitted.values()) == set(stages.rendered_ids)
    if mode == "relevance" and channel != "sparse":
        assert set(planted.permitted.values()) <= set(stages.dense_ids)
    if mode == "relevance" and channel != "dense":
        assert set(planted.permitted.values()) <= set(stages.lexical_ids)


@pytest.mark.parametrize("name", list(FILTERS))
def test_each_filter_holds_in_the_expansion_arm(bank, semantic_on, name):
    """Every planted row shares the permitted rows' subject and entity: as siblings of a
    permitted seed only the permitted ones come back."""
    planted, encoder = _planted(bank, name)
    semantic_on.RECALL_EXPANSION_PER_SEED = 100
    seed, *rest = planted.permitted.values()
    request = {"scope": "user", "exclude_ids": (), "belief_types": (), **planted.request}
    with owner_context(bank.principal):
        read = permitted.Read(
            params=permitted.base_params(
                tenant_id=bank.principal.tenant_id, principal_id=bank.principal.principal_id, at=NOW, as_of=None,
                sensitivities=["public", "internal"], scope=request["scope"],
                exclude_ids=list(request["exclude_ids"]), belief_types=list(request["belief_types"]),
            ),
            historical=False, limit=permitted.arm_limit(20),
        )
        found = {c.id for c in expansion.expand(read, [seed], basis(AXIS), encoder.tuple.space)}
    assert _leaks(planted, found) == [] and found == set(rest)


def test_a_forbidden_seed_cannot_reach_the_expansion_through_fusion(bank, semantic_on):
    """An excluded row that would top every list never becomes a seed: the hybrid recall's
    candidates hold only the permitted rows and their permitted siblings."""
    planted, encoder = _planted(bank, "exclude_ids")
    result = bank.recall(QUERY, encoder=encoder, channel="hybrid", entity_ids=(ENTITY,), **planted.request)
    assert _leaks(planted, result.stages.candidate_ids) == []


# --- the API ------------------------------------------------------------------------------

def _body(planted: Planted) -> dict:
    body = {"query": QUERY, "ceiling": "internal"}
    for key, value in planted.request.items():
        body[key] = [str(v) for v in value] if isinstance(value, tuple) else value
    return body


@pytest.mark.urls(__name__)
@pytest.mark.parametrize("name", list(FILTERS))
@pytest.mark.parametrize("channel", ["hybrid", "dense", "sparse"])
def test_search_route_applies_each_filter(bank, semantic_on, monkeypatch, name, channel):
    planted, encoder = _planted(bank, name)
    monkeypatch.setattr(encoders, "get_encoder", lambda: encoder)
    token = bank.token
    with override_settings(AGENT_MEMORY_API_ENABLED=True):
        response = Api(Client()).post("/v1/memories/search", token, {**_body(planted), "channel": channel}, key=None)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["channel"] == channel
    ids = [item["id"] for item in body["items"]]
    assert _leaks(planted, ids) == [] and set(ids) == {str(i) for i in planted.permitted.values()}
    for forbidden in planted.forbidden:
        assert f"({forbidden})" not in body["rendered"]


@pytest.mark.urls(__name__)
def test_search_route_selection_mode_recent_is_the_legacy_arm_and_says_so(bank):
    planted, _ = _planted(bank, "belief_types")
    with override_settings(AGENT_MEMORY_API_ENABLED=True):
        response = Api(Client()).post("/v1/memories/search", bank.token,
                                      {**_body(planted), "selection_mode": "recent"}, key=None)
    body = response.json()
    assert body["selection_mode"] == "recent" and body["channel"] == "sparse"
    assert body["fallback_reason"] in ("recent_selection", "semantic_disabled")
    assert {item["id"] for item in body["items"]} == {str(i) for i in planted.permitted.values()}
    with owner_context(bank.principal):
        assert RecallTrace.objects.get(id=body["trace_id"]).selection_mode == "recent"


@pytest.mark.urls(__name__)
@pytest.mark.parametrize("extra,problem", [
    ({"scope": "team:x"}, ("scope", "string_pattern_mismatch")),
    ({"scope": "session:not-a-uuid"}, ("scope", "string_pattern_mismatch")),
    ({"belief_types": ["opinion"]}, ("belief_types.0", "literal_error")),
    ({"belief_types": "goal"}, ("belief_types", "list_type")),
    ({"exclude_ids": ["nope"]}, ("exclude_ids.0", "uuid_parsing")),
    ({"exclude_ids": [str(UUID(int=n)) for n in range(1001)]}, ("exclude_ids", "too_long")),
    ({"selection_mode": "newest"}, ("selection_mode", "literal_error")),
])
def test_search_route_refuses_malformed_filters(bank, extra, problem):
    with override_settings(AGENT_MEMORY_API_ENABLED=True):
        response = Api(Client()).post("/v1/memories/search", bank.token,
                                      {"query": "x", "ceiling": "internal", **extra}, key=None)
    assert response.status_code == 400
    assert [(d["field"], d["problem"]) for d in response.json()["error"]["details"]] == [problem]


# --- the command ----------------------------------------------------------------------------

def _cli_options(planted: Planted) -> dict:
    options = {}
    if "scope" in planted.request:
        options["scope"] = planted.request["scope"]
    if "belief_types" in planted.request:
        options["belief_type"] = list(planted.request["belief_types"])
    if "exclude_ids" in planted.request:
        options["exclude_id"] = [str(i) for i in planted.request["exclude_ids"]]
    return options


@pytest.mark.parametrize("name", list(FILTERS))
@pytest.mark.parametrize("channel", ["hybrid", "dense", "sparse"])
def test_recall_command_applies_each_filter(bank, semantic_on, monkeypatch, name, channel):
    planted, encoder = _planted(bank, name)
    monkeypatch.setattr(encoders, "get_encoder", lambda: encoder)
    out = io.StringIO()
    call_command("recall", QUERY, owner=bank.principal.label, ceiling="internal", channel=channel, json=True,
                 stdout=out, **_cli_options(planted))
    payload = json.loads(out.getvalue())
    ids = [item["id"] for item in payload["items"]]
    assert payload["channel"] == channel
    assert _leaks(planted, ids) == [] and set(ids) == {str(i) for i in planted.permitted.values()}


def test_recall_command_selection_mode_and_bad_filters(bank):
    planted, _ = _planted(bank, "exclude_ids")
    out = io.StringIO()
    call_command("recall", QUERY, owner=bank.principal.label, ceiling="internal", selection_mode="recent",
                 json=True, stdout=out, **_cli_options(planted))
    assert [i["id"] for i in json.loads(out.getvalue())["items"]] == [str(planted.permitted["kept"])]
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--scope"):
        call_command("recall", QUERY, owner=bank.principal.label, ceiling="internal", scope="team:x")
    with pytest.raises(CommandError, match="--exclude-id"):
        call_command("recall", QUERY, owner=bank.principal.label, ceiling="internal", exclude_id=["nope"])


@pytest.fixture
def bank(db) -> Bank:  # noqa: F811 - a bank whose owner has an API token
    principal, token = make_owner("Filter owner")
    owner_bank = Bank(principal)
    owner_bank.token = token
    return owner_bank

"""Visibility parity: every hard predicate holds for every channel and selection mode.

Each scenario plants rows that match the query as strongly as the visible ones — same
words, same subject phrase, same entity ID, an identical vector written directly into the
index with the row's revision — and that must never appear anywhere: not among candidates,
not in the dense order, not ranked, not rendered.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from uuid import UUID

import pytest

from memory.domain import MemoryChanges
from memory.models import MemoryRevision
from memory.services import memory_erase, memory_review, memory_revise, session_create
from tests.factories import T0
from tests.recall.helpers import NOW, Bank, MappedEncoder, bank, basis, semantic_on  # noqa: F401
from veetbot.rls import owner_context

QUERY = "packing list passport"
STATEMENT = "The packing list includes the passport"
SUBJECT = "packing list"
ENTITY = "trip:alps"
CHANGED = T0 + timedelta(days=20)  # state changes happen here
AS_OF = T0 + timedelta(days=10)  # historical recalls look here


@dataclass
class Scenario:
    request: dict
    visible: dict[str, UUID] = field(default_factory=dict)
    forbidden: dict[str, UUID] = field(default_factory=dict)
    vectors: list[tuple[Bank, UUID, int]] = field(default_factory=list)


def _add(bank: Bank, name: str, *, at=T0, **overrides) -> UUID:
    overrides.setdefault("belief_type", "preference")
    overrides.setdefault("entity_ids", (ENTITY,))
    return bank.add(f"{STATEMENT} ({name}).", subject=SUBJECT, at=at, **overrides)


def _revise(bank: Bank, memory_id: UUID, at=CHANGED, **changes) -> None:
    memory_revise(principal=bank.principal, memory_id=memory_id, changes=MemoryChanges(**changes), now=at)


def _revision_at(bank: Bank, memory_id: UUID, instant) -> int:
    with owner_context(bank.principal):
        found = (MemoryRevision.objects.filter(memory_id=memory_id, recorded_at__lte=instant)
                 .order_by("-revision").values_list("revision", flat=True).first())
    return found or 1


def current_project_scenario(bank: Bank, other: Bank) -> Scenario:
    """A project:alpha recall at NOW."""
    s = Scenario(request={"scope": "project:alpha", "belief_types": ("preference",), "ceiling": "internal"})
    s.visible["same project"] = _add(bank, "same project", scope="project:alpha")
    s.visible["portable user"] = _add(bank, "portable user")
    f = s.forbidden
    f["other owner"] = _add(other, "other owner")
    f["other owner same project"] = _add(other, "other owner same project", scope="project:alpha")
    f["retracted"] = _add(bank, "retracted")
    _revise(bank, f["retracted"], status="retracted")
    f["expired status"] = _add(bank, "expired status")
    _revise(bank, f["expired status"], status="expired")
    f["erased"] = _add(bank, "erased")
    memory_erase(principal=bank.principal, memory_id=f["erased"], now=CHANGED)
    f["future valid_from"] = _add(bank, "future valid_from", at=NOW + timedelta(days=1))
    f["expired at instant"] = _add(bank, "expired at instant", expires_at=NOW - timedelta(days=1))
    f["above ceiling"] = _add(bank, "above ceiling", sensitivity="restricted")
    f["other project"] = _add(bank, "other project", scope="project:beta")
    f["non-portable user"] = _add(bank, "non-portable user", portable=False)
    session = session_create(principal=bank.principal, scope="session", started_at=T0)
    f["session-local"] = _add(bank, "session-local", scope=f"session:{session.id}")
    f["excluded"] = _add(bank, "excluded")
    f["wrong type"] = _add(bank, "wrong type", belief_type="goal")
    s.request["exclude_ids"] = (f["excluded"],)
    for name, memory_id in {**s.visible, **f}.items():
        owner = other if name.startswith("other owner") else bank
        s.vectors.append((owner, memory_id, owner.revision(memory_id)))
    return s


def current_session_scenario(bank: Bank, other: Bank) -> Scenario:
    """A recall inside session S1: its own session-local beliefs and portable user ones."""
    here = session_create(principal=bank.principal, scope="session", started_at=T0)
    elsewhere = session_create(principal=bank.principal, scope="session", started_at=T0)
    s = Scenario(request={"scope": f"session:{here.id}", "ceiling": "internal"})
    s.visible["this session"] = _add(bank, "this session", scope=f"session:{here.id}")
    s.visible["portable user"] = _add(bank, "portable user")
    s.forbidden["other session"] = _add(bank, "other session", scope=f"session:{elsewhere.id}")
    s.forbidden["non-portable user"] = _add(bank, "non-portable user", portable=False)
    s.forbidden["a project"] = _add(bank, "a project", scope="project:alpha")
    for memory_id in [*s.visible.values(), *s.forbidden.values()]:
        s.vectors.append((bank, memory_id, bank.revision(memory_id)))
    return s


def current_user_scenario(bank: Bank, other: Bank) -> Scenario:
    """A user-scope recall: user beliefs, portable or not; never a local scope's."""
    session = session_create(principal=bank.principal, scope="session", started_at=T0)
    s = Scenario(request={"scope": "user", "ceiling": "sensitive"})
    s.visible["portable user"] = _add(bank, "portable user")
    s.visible["non-portable user"] = _add(bank, "non-portable user", portable=False)
    s.visible["at ceiling"] = _add(bank, "at ceiling", sensitivity="sensitive")
    s.forbidden["project"] = _add(bank, "project", scope="project:alpha")
    s.forbidden["session-local"] = _add(bank, "session-local", scope=f"session:{session.id}")
    s.forbidden["above ceiling"] = _add(bank, "above ceiling", sensitivity="restricted")
    for memory_id in [*s.visible.values(), *s.forbidden.values()]:
        s.vectors.append((bank, memory_id, bank.revision(memory_id)))
    return s


def historical_scenario(bank: Bank, other: Bank) -> Scenario:
    """A project:alpha recall as of AS_OF; state changed at CHANGED (after AS_OF)."""
    s = Scenario(request={"scope": "project:alpha", "belief_types": ("preference",), "ceiling": "internal",
                          "as_of": AS_OF})
    s.visible["unchanged"] = _add(bank, "unchanged")
    s.visible["expired since"] = _add(bank, "expired since")  # valid at AS_OF; expiry is validity, not a restriction
    _revise(bank, s.visible["expired since"], status="expired")
    f = s.forbidden
    f["other owner"] = _add(other, "other owner")
    f["retracted since"] = _add(bank, "retracted since")
    _revise(bank, f["retracted since"], status="retracted")
    f["erased since"] = _add(bank, "erased since")
    memory_erase(principal=bank.principal, memory_id=f["erased since"], now=CHANGED)
    f["raised above ceiling since"] = _add(bank, "raised above ceiling since")
    _revise(bank, f["raised above ceiling since"], sensitivity="restricted")
    f["above ceiling then"] = _add(bank, "above ceiling then", sensitivity="restricted")
    _revise(bank, f["above ceiling then"], sensitivity="internal")
    f["not portable since"] = _add(bank, "not portable since")
    memory_review(principal=bank.principal, memory_id=f["not portable since"], action="not_here", now=CHANGED)
    f["not portable then"] = _add(bank, "not portable then", portable=False)
    _revise(bank, f["not portable then"], portable=True)
    f["retracted then"] = _add(bank, "retracted then")
    _revise(bank, f["retracted then"], at=T0 + timedelta(days=1), status="retracted")
    _revise(bank, f["retracted then"], status="active")
    f["not yet valid then"] = _add(bank, "not yet valid then", valid_from=AS_OF + timedelta(days=1))
    f["expired at as_of"] = _add(bank, "expired at as_of", expires_at=AS_OF - timedelta(hours=1))
    f["created after as_of"] = _add(bank, "created after as_of", at=CHANGED)
    f["wrong type then"] = _add(bank, "wrong type then", belief_type="goal")
    _revise(bank, f["wrong type then"], belief_type="preference")
    f["other project"] = _add(bank, "other project", scope="project:beta")
    f["excluded"] = _add(bank, "excluded")
    s.request["exclude_ids"] = (f["excluded"],)
    for name, memory_id in {**s.visible, **f}.items():
        owner = other if name == "other owner" else bank
        # The vector of the revision current at AS_OF, so the dense join itself matches.
        s.vectors.append((owner, memory_id, _revision_at(owner, memory_id, AS_OF)))
    return s


SCENARIOS = {
    "current project scope": current_project_scenario,
    "current session scope": current_session_scenario,
    "current user scope": current_user_scenario,
    "historical as_of": historical_scenario,
}


@pytest.fixture
def other(db) -> Bank:
    return Bank.new("Someone else")


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("channel,mode", [("hybrid", "relevance"), ("dense", "relevance"), ("sparse", "relevance"),
                                          ("hybrid", "recent")])
def test_planted_rows_never_appear_in_any_stage(bank, other, semantic_on, scenario, channel, mode):
    s = SCENARIOS[scenario](bank, other)
    encoder = MappedEncoder({QUERY: basis(0)})
    for owner, memory_id, revision in s.vectors:
        owner.vector(memory_id, basis(0), encoder, revision=revision)

    result = bank.recall(QUERY, encoder=encoder, channel=channel, selection_mode=mode,
                         entity_ids=(ENTITY,), **s.request)

    expected_channel = "sparse" if mode == "recent" else channel
    assert result.channel == expected_channel and result.fallback_reason in ("", "recent_selection")
    seen = {
        "candidates": set(result.stages.candidate_ids), "dense": set(result.stages.dense_ids),
        "ranked": set(result.stages.ranked_ids), "rendered": set(result.stages.rendered_ids),
        "items": {item.id for item in result.items},
    }
    for stage, ids in seen.items():
        leaked = sorted(name for name, memory_id in s.forbidden.items() if memory_id in ids)
        assert leaked == [], f"{stage} leaked {leaked}"
    assert set(s.visible.values()) <= seen["rendered"], "a permitted match was not recalled"
    for name in s.forbidden:
        assert f"({name})" not in result.rendered
    if mode == "relevance" and channel != "sparse":
        assert set(s.visible.values()) <= seen["dense"], "the dense arm did not run over the visible rows"
    if mode == "relevance" and channel != "dense":
        assert set(s.visible.values()) <= set(result.stages.lexical_ids)
        assert set(s.visible.values()) <= set(result.stages.structured_ids)


def test_another_owners_recall_sees_none_of_this_bank(bank, other, semantic_on):
    encoder = MappedEncoder({QUERY: basis(0)})
    mine = _add(bank, "mine")
    bank.vector(mine, basis(0), encoder)
    result = other.recall(QUERY, encoder=encoder, channel="hybrid", entity_ids=(ENTITY,))
    assert result.stages.candidate_ids == () and result.items == ()


def test_current_recall_shows_current_content_of_a_revised_belief(bank):
    memory_id = _add(bank, "v1")
    _revise(bank, memory_id, statement=f"{STATEMENT} (v2).")
    result = bank.recall(QUERY, channel="sparse")
    assert [item.statement for item in result.items] == [f"{STATEMENT} (v2)."]
    assert result.items[0].content_revision == 2

"""A recall's policy identity (recall.policy): the registered tags of the stages that ran,
stored as a never-empty ``text[]``, so no combination of stages can overflow the trace or
be cut to fit it.

The walk runs every combination through the real retriever against the real database:
channel × semantic recall on/off × expansion on/off × reconsolidation on/off × current or
historical × relevance or recent selection. Each recall succeeds and writes exactly one
trace whose tags are registered and name exactly the stages that ran, with channel and
fallback reason consistent with them. Semantic recall, expansion and reconsolidation
together once failed every hybrid recall (a 49-character policy in a 40-character column).
"""
from __future__ import annotations

import itertools
import uuid
from datetime import timedelta
from typing import get_args

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connections, transaction

from recall import policy
from recall.admin import RecallTraceAdmin
from recall.domain import FallbackReason, RecallRequest
from recall.models import RecallTrace
from recall.traces import TraceFacts, trace_write
from reconsolidation import read_paths
from tests.factories import T0
from tests.recall.helpers import NOW, Bank, MappedEncoder, bank, basis, blend  # noqa: F401 (the bank fixture)
from tests.reconsolidation.recall_builders import merge
from veetbot.rls import owner_context

QUERY = "passport renewal"
SAME = "The passport renewal is due in March."
HISTORICAL = T0 + timedelta(days=10)  # after the bank and its merge, before NOW

COMBINATIONS = list(itertools.product(
    ("hybrid", "dense", "sparse"), (True, False), (True, False), (True, False), (None, HISTORICAL),
    ("relevance", "recent"),
))


def _name(combination) -> str:
    channel, semantic, expanding, reconsolidating, as_of, mode = combination
    return "-".join((channel, f"semantic_{'on' if semantic else 'off'}", f"expansion_{'on' if expanding else 'off'}",
                     f"reconsolidation_{'on' if reconsolidating else 'off'}", "historical" if as_of else "current", mode))


def _traces(bank: Bank) -> list[RecallTrace]:
    with owner_context(bank.principal):
        return list(RecallTrace.objects.all())


def _expected(channel, semantic, expanding, reconsolidating, as_of, mode) -> tuple[tuple[str, ...], str, str]:
    """(tags, effective channel, fallback reason) the retriever's contract promises."""
    if mode == "recent":
        effective, fallback = "sparse", ("" if channel == "sparse" else "recent_selection")
    elif channel == "sparse":
        effective, fallback = "sparse", ""
    elif not semantic:
        effective, fallback = "sparse", "semantic_disabled"
    else:
        effective, fallback = channel, ""
    ran_semantic = mode == "relevance" and effective != "sparse"
    tags = policy.tags(
        policy.RECALL, policy.SEMANTIC if ran_semantic else None,
        policy.EXPANSION if ran_semantic and effective == "hybrid" and expanding else None,
        policy.FLOOR if ran_semantic else None,  # every belief has a vector: the semantic arm finds some
        policy.RECONSOLIDATION if reconsolidating else None,
    )
    return tags, effective, fallback


@pytest.fixture
def merged_bank(bank):
    """Three equivalent originals in one committed merge set (so reconsolidation has
    something to suppress), a sibling by subject (for expansion) and an unrelated belief,
    every one with a vector in the encoder's space."""
    encoder = MappedEncoder({QUERY: basis(0)}, default=basis(1))
    dupes = [bank.add(SAME, subject="passport", at=T0 + timedelta(hours=n)) for n in range(3)]
    sibling = bank.add("The passport photo is in the desk drawer.", subject="passport")
    unrelated = bank.add("The owner drinks tea in the afternoon.", subject="tea")
    for n, memory_id in enumerate([*dupes, sibling, unrelated]):
        bank.vector(memory_id, blend(0, 5 + n, 0.9 - n * 0.1), encoder)
    merge(bank.principal, *dupes, now=T0 + timedelta(days=2))
    return bank, encoder


@pytest.mark.parametrize("combination", COMBINATIONS, ids=[_name(c) for c in COMBINATIONS])
def test_every_stage_combination_recalls_and_writes_one_trace_naming_the_stages_that_ran(
    merged_bank, settings, combination,
):
    bank, encoder = merged_bank
    channel, semantic, expanding, reconsolidating, as_of, mode = combination
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = semantic
    settings.RECALL_EXPANSION_SEEDS = 5 if expanding else 0
    settings.RECALL_EXPANSION_PER_SEED = 1
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = reconsolidating
    fields = dict(channel=channel, as_of=as_of, selection_mode=mode, max_items=10)
    # The switch as the read path itself reads it.
    assert read_paths.applies(RecallRequest(query=QUERY, ceiling="internal", **fields)) == reconsolidating
    assert _traces(bank) == []

    result = bank.recall(QUERY, encoder=encoder, **fields)

    (trace,) = _traces(bank)
    tags, effective, fallback = _expected(*combination)
    assert trace.id == result.trace_id
    assert tuple(trace.policy) == tags and set(trace.policy) <= set(policy.REGISTERED)
    assert (trace.channel, trace.requested_channel, trace.fallback_reason) == (effective, channel, fallback)
    assert (result.channel, result.fallback_reason) == (effective, fallback)
    assert trace.fallback_reason in get_args(FallbackReason)
    assert (trace.selection_mode, trace.as_of) == (mode, as_of)
    ran_semantic = policy.SEMANTIC in tags
    assert trace.space == (encoder.tuple.space if ran_semantic else "")
    assert bool(trace.dense_ids) == ran_semantic
    assert result.items  # every combination finds the passport beliefs
    # The reconsolidation tag is there exactly when the read path ran: only then is the
    # merge set rendered once.
    assert bool(result.stages.suppressed_ids) == (policy.RECONSOLIDATION in tags)


def test_all_stages_together_make_the_longest_policy_and_it_is_stored_whole(merged_bank, settings):
    bank, encoder = merged_bank
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    settings.RECALL_SOURCE_EXCERPTS_ENABLED = True
    result = bank.recall(QUERY, encoder=encoder, channel="hybrid", ceiling="restricted")
    with owner_context(bank.principal):
        stored = RecallTrace.objects.get(id=result.trace_id).policy
    assert stored == ["recall@1", "semantic@2", "expansion@2", "floor@1", "reconsolidation@3",
                      "excerpts@1"] == list(policy.REGISTERED)
    assert len("+".join(stored)) > 40  # what the old varchar(40) column refused


def _facts(tags) -> TraceFacts:
    return TraceFacts(
        surface="eval", policy=tags, selection_mode="relevance", channel="sparse", requested_channel="sparse",
        fallback_reason="", space="", ceiling="internal", max_items=1, max_tokens=1, as_of=None, candidate_ids=(),
        dense_ids=(), ranked_ids=(), rendered_ids=(), rendered="", rendered_tokens=0, elapsed_ms=0.0,
    )


@pytest.mark.parametrize("tags", [
    ("recall@1", "semantic@3"), ("recall@1", "recall@1"), ("recall@1", "expansion@2", "semantic@2"), (),
], ids=["unregistered", "repeated", "out_of_order", "empty"])
def test_a_policy_that_is_not_registered_tags_in_order_is_refused_before_anything_is_written(bank, tags):
    with pytest.raises(policy.UnregisteredPolicyTag):
        policy.tags(*tags)
    with owner_context(bank.principal):
        with pytest.raises(policy.UnregisteredPolicyTag):
            trace_write(principal=bank.principal, facts=_facts(tags), now=NOW)
        assert not RecallTrace.objects.exists()


def test_the_database_refuses_a_trace_without_a_policy(bank):
    with owner_context(bank.principal):
        trace_write(principal=bank.principal, facts=_facts(("recall@1",)), now=NOW)
        with pytest.raises(IntegrityError, match="recalltrace_policy_nonempty"), transaction.atomic():
            RecallTrace.objects.update(policy=[])
        assert RecallTrace.objects.get().policy == ["recall@1"]


def test_the_reconsolidation_tag_is_defined_once_in_the_registry_not_by_its_read_path():
    assert policy.RECONSOLIDATION == "reconsolidation@3" and not hasattr(read_paths, "TRACE_TAG")


def test_the_staff_admin_shows_the_policy_as_its_tags_in_order():
    trace = RecallTrace(id=uuid.uuid4(), policy=["recall@1", "semantic@2", "reconsolidation@3"])
    assert RecallTraceAdmin.policy_tags(None, trace) == "recall@1 + semantic@2 + reconsolidation@3"


# --- migration 0005: existing rows, and a downgrade that refuses to cut ---------------------

def _migrate_recall(*target: str) -> None:
    for alias in ("default", "owner"):
        connections[alias].close()
    call_command("migrate", "recall", *target, database="owner", verbosity=0, interactive=False)


@pytest.fixture
def recall_schema(live_db):
    """Committed rows on the owning connection; the recall schema is back at its latest after."""
    yield connections["owner"]
    _migrate_recall()


def _insert_trace(owner_connection, policy_sql: str, params) -> None:
    with owner_connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO recall_recalltrace (id, tenant_id, principal_id, created_at, surface, policy, selection_mode,"
            " channel, requested_channel, fallback_reason, space, ceiling, max_items, max_tokens, candidate_ids,"
            " dense_ids, ranked_ids, rendered_ids, rendered_sha256, rendered_tokens, elapsed_ms)"
            f" VALUES (gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), now(), 'eval', {policy_sql},"
            " 'relevance', 'hybrid', 'hybrid', '', '', 'internal', 20, 2000, '{}', '{}', '{}', '{}', %s, 0, 1.0)",
            [*params, "0" * 64],
        )


def _policies(owner_connection) -> list:
    with owner_connection.cursor() as cursor:
        cursor.execute("SELECT policy FROM recall_recalltrace ORDER BY length(policy::text)")
        return [policy for (policy,) in cursor.fetchall()]


def test_the_downgrade_joins_tags_back_and_the_upgrade_splits_existing_rows_on_plus(recall_schema):
    _insert_trace(recall_schema, "%s::text[]", [["recall@1"]])
    _insert_trace(recall_schema, "%s::text[]", [["recall@1", "semantic@2", "expansion@2"]])
    _migrate_recall("0004")
    assert _policies(recall_schema) == ["recall@1", "recall@1+semantic@2+expansion@2"]
    _migrate_recall()
    assert _policies(recall_schema) == [["recall@1"], ["recall@1", "semantic@2", "expansion@2"]]


def test_the_downgrade_refuses_while_a_policy_would_not_fit_the_old_column(recall_schema):
    _insert_trace(recall_schema, "%s::text[]", [list(policy.REGISTERED)])
    with pytest.raises(RuntimeError, match=r"Refusing to narrow.*recall_recalltrace: 1 row\(s\)"):
        _migrate_recall("0004")
    assert _policies(recall_schema) == [list(policy.REGISTERED)]  # nothing was cut or changed

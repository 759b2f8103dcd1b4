"""``manage.py recall``: its options and JSON keys are an interface other tools rely on."""
from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from recall import encoders
from recall.models import RecallTrace
from tests.factories import T0
from tests.recall.helpers import MappedEncoder, bank, basis, semantic_on  # noqa: F401
from veetbot.rls import owner_context


def run(*args, **options) -> str:
    out = io.StringIO()
    call_command("recall", *args, stdout=out, **options)
    return out.getvalue()


@pytest.fixture
def memories(bank):
    return bank.add_many([dict(statement=f"Passport note {n}.", subject=f"p {n}", belief_type="fact")
                          for n in range(3)], at=T0)


def test_json_output_has_exactly_the_documented_keys_in_rank_order(bank, memories):
    out = run("passport note", owner=bank.principal.label, ceiling="internal", json=True)
    payload = json.loads(out)
    assert list(payload) == ["query", "channel", "requested_channel", "fallback_reason", "items", "rendered"]
    assert payload["query"] == "passport note" and payload["channel"] == "sparse"
    assert [list(item) for item in payload["items"]] == [["id", "score"]] * 3
    assert [item["id"] for item in payload["items"]] == [str(i) for i in reversed(memories)]
    scores = [item["score"] for item in payload["items"]]
    assert scores == sorted(scores, reverse=True) and all(isinstance(s, float) for s in scores)
    assert payload["rendered"].count("[m:") == 3
    with owner_context(bank.principal):
        assert RecallTrace.objects.get().surface == "cli"


def test_budget_channel_and_as_of_options_reach_the_retriever(bank, memories, semantic_on, monkeypatch):
    encoder = MappedEncoder({"passport note": basis(0)})
    for memory_id in memories:
        bank.vector(memory_id, basis(0), encoder)
    monkeypatch.setattr(encoders, "get_encoder", lambda: encoder)
    as_of = (T0 + timedelta(days=1)).isoformat()
    payload = json.loads(run("passport note", owner=bank.principal.label, ceiling="internal", channel="dense",
                             max_items=2, max_tokens=900, as_of=as_of, json=True))
    assert payload["channel"] == "dense" and len(payload["items"]) == 2
    with owner_context(bank.principal):
        trace = RecallTrace.objects.get()
    assert (trace.max_items, trace.max_tokens, trace.as_of.isoformat(), trace.requested_channel) == (
        2, 900, as_of, "dense")


def test_json_says_hybrid_fell_back_to_sparse_while_semantic_recall_is_off(bank, memories):
    payload = json.loads(run("passport note", owner=bank.principal.label, ceiling="internal", json=True))
    assert (payload["channel"], payload["requested_channel"], payload["fallback_reason"]) == (
        "sparse", "hybrid", "semantic_disabled")


def test_json_says_hybrid_ran_without_fallback_while_semantic_recall_is_on(bank, memories, semantic_on, monkeypatch):
    encoder = MappedEncoder({"passport note": basis(0)})
    for memory_id in memories:
        bank.vector(memory_id, basis(0), encoder)
    monkeypatch.setattr(encoders, "get_encoder", lambda: encoder)
    payload = json.loads(run("passport note", owner=bank.principal.label, ceiling="internal", json=True))
    assert (payload["channel"], payload["requested_channel"], payload["fallback_reason"]) == ("hybrid", "hybrid", "")
    assert len(payload["items"]) == 3


def test_json_says_the_encoder_was_unavailable_when_it_fails(bank, memories, semantic_on, monkeypatch):
    monkeypatch.setattr(encoders, "get_encoder", lambda: MappedEncoder())  # knows no text: unavailable
    payload = json.loads(run("passport note", owner=bank.principal.label, ceiling="internal", channel="dense",
                             json=True))
    assert (payload["channel"], payload["requested_channel"], payload["fallback_reason"]) == (
        "sparse", "dense", "encoder_unavailable")
    assert len(payload["items"]) == 3


def test_queries_file_answers_each_line_in_one_process(bank, memories, tmp_path):
    path = tmp_path / "queries.jsonl"
    path.write_text('{"id": "q1", "query": "passport note"}\n\n{"id": 2, "query": "nothing matches zzz"}\n')
    lines = run(owner=bank.principal.label, ceiling="internal", queries=str(path)).splitlines()
    first, second = (json.loads(line) for line in lines)
    assert list(first) == ["id", "query", "channel", "requested_channel", "fallback_reason", "items", "rendered"]
    assert (first["id"], first["query"], len(first["items"])) == ("q1", "passport note", 3)
    assert (second["id"], second["items"], second["rendered"]) == (2, [], "")
    assert [list(item) for item in first["items"]] == [["id", "score"]] * 3


@pytest.mark.parametrize("content,message", [
    ('{"id": 1}\n', "exactly"),
    ('{"id": 1, "query": "x", "extra": 1}\n', "exactly"),
    ('{"id": 1, "query": "  "}\n', "non-blank"),
    ('{"id": true, "query": "x"}\n', "id must be"),
    ("not json\n", "not a JSON object"),
])
def test_bad_queries_lines_fail_before_any_query_runs(bank, tmp_path, content, message):
    path = tmp_path / "queries.jsonl"
    path.write_text('{"id": 0, "query": "fine"}\n' + content)
    with pytest.raises(CommandError, match=message):
        run(owner=bank.principal.label, ceiling="internal", queries=str(path))
    with owner_context(bank.principal):
        assert RecallTrace.objects.count() == 0


def test_query_and_queries_are_mutually_exclusive_and_one_is_required(bank, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": 1, "query": "x"}\n')
    with pytest.raises(CommandError, match="exactly one"):
        run("x", owner=bank.principal.label, ceiling="internal", queries=str(path))
    with pytest.raises(CommandError, match="exactly one"):
        run(owner=bank.principal.label, ceiling="internal")


@pytest.mark.parametrize("options,message", [
    ({"owner": "not-an-owner"}, "--owner"),
    ({"as_of": "2026-01-01T00:00:00"}, "--as-of"),
    ({"as_of": "soon"}, "--as-of"),
    ({"max_items": 0}, "max_items"),
    ({"max_tokens": 0}, "max_tokens"),
])
def test_invalid_options_are_command_errors(bank, options, message):
    options = {"owner": bank.principal.label, "ceiling": "internal", **options}
    with pytest.raises(CommandError, match=message):
        run("x", **options)


def test_human_output_prints_the_rendered_context_and_a_summary(bank, memories):
    out = run("passport note", owner=bank.principal.label, ceiling="internal")
    assert out.count("[m:") == 3
    assert "3 items" in out and "channel sparse (fallback: semantic_disabled)" in out


def test_command_options_are_the_documented_interface():
    from django.core.management import load_command_class

    parser = load_command_class("recall", "recall").create_parser("manage.py", "recall")
    options = {o for action in parser._actions for o in action.option_strings}
    assert {"--owner", "--ceiling", "--channel", "--max-items", "--max-tokens", "--as-of", "--json",
            "--queries", "--scope", "--belief-type", "--exclude-id", "--selection-mode"} <= options

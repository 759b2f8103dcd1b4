"""The quick start sets up the demo end to end — import, one dreaming pass, vectors, one
sample hybrid search — and serves /v1/memories for the token it prints."""
import json
import re
from collections import defaultdict
from io import StringIO

from django.core.management import call_command
from django.test import Client, override_settings

from evals.fixtures.make_demo_bank import NEAR_DUPLICATES

from memory.models import Memory
from memory.services import memory_erase
from recall import encoders
from recall.backfill import EMBEDDED_STATUSES
from recall.models import MemoryVector, RecallTrace
from reconsolidation.models import ReconsolidationOperation
from veetbot.identity import Principal
from veetbot.management.commands.quickstart import DEMO_BANK, SAMPLE_QUERY
from veetbot.rls import owner_context

BANK = json.loads(DEMO_BANK.read_text())
BANK_BY_ID = {m["id"]: m for m in BANK["memories"]}
EMBEDDABLE = {m["id"] for m in BANK["memories"] if m["status"] in EMBEDDED_STATUSES}


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def quickstart(**options) -> dict:
    out = StringIO()
    call_command("quickstart", no_serve=True, json=True, stdout=out, **options)
    return json.loads(out.getvalue())


def quickstart_text(**options) -> str:
    out = StringIO()
    call_command("quickstart", no_serve=True, stdout=out, **options)
    return out.getvalue()


def vector_ids(owner: str) -> set[str]:
    with owner_context(Principal.parse(owner)):
        return set(map(str, MemoryVector.objects.values_list("memory_id", flat=True)))


def merges_of(owner: str) -> list[set[str]]:
    with owner_context(Principal.parse(owner)):
        return [set(map(str, ids)) for ids in ReconsolidationOperation.objects.filter(kind="merge_equivalent")
                .values_list("input_ids", flat=True)]


@override_settings(AGENT_MEMORY_API_ENABLED=True)
def test_quickstart_serves_the_demo_bank_and_a_second_run_reuses_bank_and_vectors(live_db):
    first = quickstart()
    assert first["imported"]["memories"] >= 200
    response = Client().get("/v1/memories", {"ceiling": "restricted", "limit": 100},
                            HTTP_AUTHORIZATION=f"Bearer {first['token']}")
    assert response.status_code == 200
    assert len(response.json()["items"]) == 100 and response.json()["next_cursor"]
    embedded = vector_ids(first["owner"])
    quiet = StringIO()
    second = quickstart(stderr=quiet)  # idempotent: same bank and vectors, a fresh token, no second pass today
    assert second["imported"]["memories"] == 0 and second["token"] != first["token"]
    assert not first["imported"]["reused"] and second["imported"]["reused"]
    assert second["owner"] == first["owner"]
    assert second["dreaming"]["slices"] == 0 and second["dreaming"]["stopped"] == "nothing_due"
    assert (second["vectors"]["embedded"], second["vectors"]["remaining"], second["vectors"]["stopped"]) == (0, 0, "")
    assert vector_ids(second["owner"]) == embedded
    assert second["sample_search"] == first["sample_search"]
    assert quiet.getvalue() == ""  # stderr is not a terminal: no progress bar, nothing else


def test_a_second_run_keeps_what_the_owner_erased_erased(live_db):
    first = quickstart()
    owner = Principal.parse(first["owner"])
    with owner_context(owner):
        erased = Memory.objects.filter(erased_at__isnull=True).order_by("id").first().id
    memory_erase(principal=owner, memory_id=erased)
    second = quickstart()
    assert second["imported"]["reused"]
    with owner_context(owner):
        assert Memory.objects.get(id=erased).erased_at is not None


def test_the_dreaming_pass_proposes_merges_of_exact_duplicates_and_never_of_near_duplicates(live_db):
    from django.conf import settings

    summary = quickstart()
    dreaming = summary["dreaming"]
    assert {"AGENT_MEMORY_API_ENABLED", "AGENT_MEMORY_RECONSOLIDATION_API_ENABLED",
            "AGENT_MEMORY_RECONSOLIDATION_ENABLED", "AGENT_MEMORY_SEMANTIC_ENABLED",
            "AGENT_MEMORY_MCP_ENABLED"} == set(summary["flags_enabled"])
    assert not settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED  # on for the pass (and a served process) only
    assert dreaming["slices"] >= 1 and dreaming["stopped"] == "idle" and dreaming["generation_complete"]
    assert set(dreaming) >= {"slices", "anchors_scanned", "groups_processed", "operations", "generation_complete"}
    assert dreaming["anchors_scanned"] == summary["imported"]["memories"]

    key_of = {m["id"]: (m["subject"], m["statement"]) for m in BANK["memories"]}
    copies = defaultdict(set)
    for memory_id, key in key_of.items():
        copies[key].add(memory_id)
    merges = merges_of(summary["owner"])
    assert dreaming["operations"].get("merge_equivalent/proposed", 0) == len(merges)
    assert sum(dreaming["operations"].values()) > 0  # the pass did model work, not only inventory
    near = {frozenset((a, b)) for a, b, _ in NEAR_DUPLICATES}
    for members in merges:  # a merge is a set of exact copies, never a near-duplicate pair
        assert len({key_of[m] for m in members}) == 1
        statements = {key_of[m][1] for m in members}
        assert not any(pair <= statements for pair in near)
    duplicated = {key for key, ids in copies.items() if len(ids) > 1}
    assert {key_of[next(iter(members))] for members in merges} <= duplicated


def test_quickstart_human_output_says_what_it_turned_on_what_it_did_and_shows_the_sample_search(live_db):
    text = quickstart_text()
    assert "AGENT_MEMORY_RECONSOLIDATION_ENABLED=true" in text and "one dreaming pass:" in text
    assert "slices" in text and "anchors scanned" in text and "/proposed" in text
    assert f"embedded {len(EMBEDDABLE)} memories" in text and "AGENT_MEMORY_SEMANTIC_ENABLED=true" in text
    cited = re.findall(r"^  \[m:([0-9a-f-]{36})\] ", text, flags=re.MULTILINE)  # the rendered citation lines
    assert cited and set(cited) <= EMBEDDABLE
    assert f"-- {len(cited)} items, channel hybrid\n" in text and "fell back" not in text
    assert "Review dashboard: http://127.0.0.1:8000/review/sign-in" in text


def test_quickstart_turns_semantic_recall_on_embeds_every_embeddable_demo_memory_and_searches_hybrid(
        live_db, monkeypatch):
    from django.conf import settings

    built = []

    class Counted(encoders.MiniLMEncoder):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(encoders, "_loaded", {})  # as in a new process
    monkeypatch.setattr(encoders, "MiniLMEncoder", Counted)
    summary = quickstart()
    assert len(built) == 1 and built[0].loaded  # the backfill and the search share one load of the model
    assert "AGENT_MEMORY_SEMANTIC_ENABLED" in summary["flags_enabled"]
    assert not settings.AGENT_MEMORY_SEMANTIC_ENABLED  # on for the sample search (and a served process) only
    vectors = summary["vectors"]
    assert (vectors["embedded"], vectors["remaining"], vectors["skipped_stale"], vectors["stopped"]) == (
        len(EMBEDDABLE), 0, 0, "")
    assert vector_ids(summary["owner"]) == EMBEDDABLE  # retracted memories are never recalled, never embedded
    sample = summary["sample_search"]
    assert sample["query"] == SAMPLE_QUERY
    assert (sample["channel"], sample["requested_channel"], sample["fallback_reason"]) == ("hybrid", "hybrid", "")
    assert sample["item_ids"] and set(sample["item_ids"]) <= EMBEDDABLE
    # "dietary" is not "diet": keyword recall alone finds one diet memory, hybrid several.
    assert [BANK_BY_ID[i]["subject"] for i in sample["item_ids"]].count("diet") >= 2
    with owner_context(Principal.parse(summary["owner"])):
        trace = RecallTrace.objects.get(surface="cli")
    assert (trace.channel, trace.fallback_reason) == ("hybrid", "")
    assert {"semantic@2", "reconsolidation@3"} <= set(trace.policy)  # every flag on, as the server recalls


def test_the_backfill_draws_a_progress_bar_on_a_terminal_and_keeps_the_json_clean(live_db):
    terminal, out = Terminal(), StringIO()
    call_command("quickstart", no_serve=True, json=True, stdout=out, stderr=terminal)
    assert "embedding" in terminal.getvalue() and f"{len(EMBEDDABLE)}/{len(EMBEDDABLE)}" in terminal.getvalue()
    assert json.loads(out.getvalue())["vectors"]["embedded"] == len(EMBEDDABLE)


@override_settings(RECALL_ENCODER="openai", RECALL_ENCODER_RESIDENCY_PIN="api.openai.com")
def test_without_a_working_encoder_the_quickstart_still_finishes_and_says_the_search_fell_back(live_db, monkeypatch):
    monkeypatch.delenv("VEETBOT_OPENAI_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    summary = quickstart()
    assert summary["vectors"]["embedded"] == 0 and "no API key configured" in summary["vectors"]["stopped"]
    sample = summary["sample_search"]
    assert (sample["channel"], sample["fallback_reason"]) == ("sparse", "encoder_unavailable")
    text = quickstart_text()
    assert "Note: the sample search fell back from hybrid to sparse (encoder_unavailable)" in text
    assert "Token (shown once): vbt_" in text

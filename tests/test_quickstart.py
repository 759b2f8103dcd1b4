"""The quick start sets up the demo end to end — import, one dreaming pass — and serves
/v1/memories for the token it prints."""
import json
from collections import defaultdict
from io import StringIO

from django.core.management import call_command
from django.test import Client, override_settings

from evals.fixtures.make_demo_bank import NEAR_DUPLICATES

from reconsolidation.models import ReconsolidationOperation
from veetbot.identity import Principal
from veetbot.management.commands.quickstart import DEMO_BANK
from veetbot.rls import owner_context


def quickstart(**options) -> dict:
    out = StringIO()
    call_command("quickstart", no_serve=True, json=True, stdout=out, **options)
    return json.loads(out.getvalue())


def merges_of(owner: str) -> list[set[str]]:
    with owner_context(Principal.parse(owner)):
        return [set(map(str, ids)) for ids in ReconsolidationOperation.objects.filter(kind="merge_equivalent")
                .values_list("input_ids", flat=True)]


@override_settings(AGENT_MEMORY_API_ENABLED=True)
def test_quickstart_imports_the_demo_bank_and_its_token_reads_memories(live_db):
    first = quickstart()
    assert first["imported"]["memories"] >= 200
    response = Client().get("/v1/memories", {"ceiling": "restricted", "limit": 100},
                            HTTP_AUTHORIZATION=f"Bearer {first['token']}")
    assert response.status_code == 200
    assert len(response.json()["items"]) == 100 and response.json()["next_cursor"]
    second = quickstart()  # idempotent: same bank, no new rows, a fresh token, no second pass today
    assert second["imported"]["memories"] == 0 and second["token"] != first["token"]
    assert second["owner"] == first["owner"]
    assert second["dreaming"]["slices"] == 0 and second["dreaming"]["stopped"] == "nothing_due"


def test_the_dreaming_pass_proposes_merges_of_exact_duplicates_and_never_of_near_duplicates(live_db):
    from django.conf import settings

    summary = quickstart()
    dreaming = summary["dreaming"]
    assert {"AGENT_MEMORY_API_ENABLED", "AGENT_MEMORY_RECONSOLIDATION_API_ENABLED",
            "AGENT_MEMORY_RECONSOLIDATION_ENABLED"} == set(summary["flags_enabled"])
    assert not settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED  # on for the pass (and a served process) only
    assert dreaming["slices"] >= 1 and dreaming["stopped"] == "idle" and dreaming["generation_complete"]
    assert set(dreaming) >= {"slices", "anchors_scanned", "groups_processed", "operations", "generation_complete"}
    assert dreaming["anchors_scanned"] == summary["imported"]["memories"]

    bank = json.loads(DEMO_BANK.read_text())
    key_of = {m["id"]: (m["subject"], m["statement"]) for m in bank["memories"]}
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


def test_quickstart_human_output_says_dreaming_was_turned_on_and_what_it_did(live_db):
    out = StringIO()
    call_command("quickstart", no_serve=True, stdout=out)
    text = out.getvalue()
    assert "AGENT_MEMORY_RECONSOLIDATION_ENABLED=true" in text and "one dreaming pass:" in text
    assert "slices" in text and "anchors scanned" in text and "/proposed" in text
    assert "Review dashboard: http://127.0.0.1:8000/review/sign-in" in text

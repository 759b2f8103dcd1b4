"""A native client's contract: the OpenAPI document served at /v1/schema describes what
the running server really accepts and answers. schemathesis generates requests for every
/v1 route from it (a valid owner token, every default check on) against gunicorn; cursors
round-trip page by page; undo, approve and reject replay idempotently.

The schema journey is deterministic: one worker (so the order in which generated requests
change the owner's rows is fixed), a fixed seed, no example database carried between runs,
and the owner's rows snapshotted only once dreaming has settled. To run it for many seeds
(each against its own owner, on one stack)::

    VEETBOT_SCHEMATHESIS_SEEDS=$(seq -s, 1 20) python -m pytest tests/acceptance/test_native_client.py -k conforms
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.acceptance import stack
from tests.acceptance.bank import AcceptanceBank
from tests.acceptance.waiting import eventually
from tests.api.schemathesis_semantics import NOT_FUZZED

pytestmark = pytest.mark.acceptance

SCHEMATHESIS_SECONDS = 600
CONFIG = Path(__file__).with_name("schemathesis.toml")
SEEDS = [int(seed) for seed in os.environ.get("VEETBOT_SCHEMATHESIS_SEEDS", "20261201").split(",") if seed.strip()]


def owner_with_proposals(product, tmp_path, seed: str) -> tuple[dict, AcceptanceBank]:
    """A new owner whose imported bank has been dreamt: a merge, a summary and a conflict proposed."""
    api = product.api()
    owner = product.new_owner(f"Native client owner {seed}")
    bank = AcceptanceBank(seed=seed, marker=f"{seed}-marker")
    stack.manage_json(product.env, "import_memory_bank", str(bank.write(tmp_path / "bank.json")),
                      "--owner", f"{owner['tenant_id']}/{owner['principal_id']}")
    eventually(lambda: len(api.journal(owner["token"], state="proposed")) >= 3, timeout=120,
               what="dreaming proposed a merge, a summary and a conflict")
    eventually(lambda: product.dreaming_settled(owner["principal_id"]), timeout=120, what="dreaming settled")
    return owner, bank


@pytest.fixture(scope="module")
def client_owner(product, tmp_path_factory):
    """An owner the fuzzer never touches (schemathesis writes, approves and erases)."""
    return owner_with_proposals(product, tmp_path_factory.mktemp("native"), "native")


@pytest.mark.parametrize("seed", SEEDS)
def test_every_route_conforms_to_the_served_schema_under_generated_requests(product, tmp_path, seed):
    owner, _ = owner_with_proposals(product, tmp_path, f"fuzzed-{seed}")
    schema = product.api().http.get("/v1/schema")
    assert schema.status_code == 200
    operations = {(path, method) for path, item in schema.json()["paths"].items() for method in item}
    assert len(operations) >= 12 and all(path.startswith("/v1/") for path, _ in operations)
    report = tmp_path / "schemathesis"
    # The hooks give positive cases the references no schema can state (real sources,
    # issued cursors), as a client would: tests/api/schemathesis_semantics.py.
    hooks = {"SCHEMATHESIS_HOOKS": "tests.api.schemathesis_cli_hooks", "VEETBOT_API_URL": product.base_url,
             "VEETBOT_API_TOKEN": owner["token"], "PYTHONPATH": str(stack.ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "--config-file", str(CONFIG), "run", f"{product.base_url}/v1/schema",
         "--url", product.base_url, "-H", f"Authorization: Bearer {owner['token']}",
         # Whole-account erasure would revoke the token every later case uses:
         # tests/api/schemathesis_semantics.NOT_FUZZED.
         *[arg for path in NOT_FUZZED for arg in ("--exclude-path", path)],
         # ST302 ("created resource not found") assumes every sub-resource of a just-created
         # parent exists; a conversation's snapshot exists only from its first turn (documented
         # not_found before), and the stateful phase cannot scope a check to one operation.
         "--checks", "all", "--exclude-checks", "ensure_resource_availability", "--max-examples", "10", "--seed", str(seed), "--workers", "1",
         "--generation-database", "none",
         "--request-timeout", "60", "--no-color", "--report", "ndjson", "--report-dir", str(report)],
        # From a scratch directory: schemathesis keeps a cache in its working directory.
        capture_output=True, text=True, timeout=SCHEMATHESIS_SECONDS, cwd=tmp_path,
        env={**os.environ, **hooks},
    )
    tail = (run.stdout + run.stderr)[-6000:]
    assert run.returncode == 0, tail
    events = [json.loads(line) for file in report.glob("*.ndjson") for line in file.read_text().splitlines() if line]
    assert events, tail
    assert "5xx" not in tail and "Server error" not in tail, tail


def test_cursors_round_trip_one_item_per_page(product, client_owner):
    owner, bank = client_owner
    api = product.api()
    for path, expected in (("/v1/memories", bank.memory_count), ("/v1/memory-reconsolidations", None)):
        whole = [item["id"] for item in api.every_page(path, owner["token"])]
        paged = [item["id"] for item in api.every_page(path, owner["token"], limit=1)]
        assert paged == whole and len(set(paged)) == len(paged)
        assert expected is None or len(whole) == expected


@pytest.mark.parametrize("action", ["approve", "reject"])
def test_review_actions_replay_idempotently(product, client_owner, action):
    owner, _ = client_owner
    api = product.api()
    kind = {"approve": "merge_equivalent", "reject": "flag_conflict"}[action]
    (operation,) = api.journal(owner["token"], kind=kind, state="proposed")
    path = f"/v1/memory-reconsolidations/{operation['id']}/{action}"
    body, key = {"expected_revision": operation["revision"]}, f"replay-{action}"
    first = api.post(path, owner["token"], body, key=key, params={"ceiling": "restricted"})
    again = api.post(path, owner["token"], body, key=key, params={"ceiling": "restricted"})
    assert first.status_code == 200, first.text
    assert again.status_code == 200 and again.json() == first.json()
    assert again.headers.get("Idempotency-Replayed") == "true"
    other = api.post(path, owner["token"], {"expected_revision": operation["revision"] + 5}, key=key,
                     params={"ceiling": "restricted"})
    assert other.status_code == 409  # the same key with another request
    if action == "approve":
        undo = f"/v1/memory-reconsolidations/{operation['id']}/undo"
        revision = first.json()["revision"]
        undone = api.post(undo, owner["token"], {"expected_revision": revision}, key="replay-undo",
                          params={"ceiling": "restricted"})
        replayed = api.post(undo, owner["token"], {"expected_revision": revision}, key="replay-undo",
                            params={"ceiling": "restricted"})
        assert undone.status_code == 200 and replayed.json() == undone.json(), undone.text
        assert replayed.headers.get("Idempotency-Replayed") == "true"


def test_exact_copies_are_approved_in_one_request_and_nothing_else_is(product, tmp_path):
    """The journal's exact copies approved in one call, with the revisions the client saw:
    the merge is approved, the summary and the conflict still wait, and a replay answers the
    same."""
    owner, _ = owner_with_proposals(product, tmp_path, "exact-copies")
    api = product.api()
    waiting = api.journal(owner["token"], state="proposed")
    body = {"operations": [{"id": op["id"], "revision": op["revision"]} for op in waiting]}
    path = "/v1/memory-reconsolidations/approve-exact-copies"
    first = api.post(path, owner["token"], body, key="exact-copies", params={"ceiling": "restricted"})
    assert first.status_code == 200, first.text
    outcomes = {item["id"]: item["outcome"] for item in first.json()["items"]}
    merges = {op["id"] for op in waiting if op["kind"] == "merge_equivalent" and op["reason"] == "equivalence_key"}
    assert merges and {i for i, outcome in outcomes.items() if outcome == "approved"} == merges
    assert first.json()["approved"] == len(merges)
    still = {op["id"] for op in api.journal(owner["token"], state="proposed")}
    assert still == {op["id"] for op in waiting} - merges
    again = api.post(path, owner["token"], body, key="exact-copies", params={"ceiling": "restricted"})
    assert again.status_code == 200 and {i["id"]: i["outcome"] for i in again.json()["items"]}.keys() == outcomes.keys()

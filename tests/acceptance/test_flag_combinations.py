"""Every setting of the four feature flags (16 servers, each its own gunicorn over the same
database, started together): search, list and the journal never answer 5xx, a disabled surface is
not_found in the envelope, and every search says which channel ran and why it fell back."""
from __future__ import annotations

import itertools

import pytest

from tests.acceptance import stack
from tests.acceptance.bank import AcceptanceBank
from tests.acceptance.client import Api, assert_envelope

pytestmark = pytest.mark.acceptance

FLAGS = ("AGENT_MEMORY_API_ENABLED", "AGENT_MEMORY_RECONSOLIDATION_API_ENABLED",
         "AGENT_MEMORY_RECONSOLIDATION_ENABLED", "AGENT_MEMORY_SEMANTIC_ENABLED")
COMBINATIONS = [dict(zip(FLAGS, values)) for values in itertools.product((False, True), repeat=len(FLAGS))]


def test_every_flag_combination_answers_without_a_server_error_and_says_its_channel(product, tmp_path):
    owner = product.new_owner("Flags owner")
    bank = AcceptanceBank(seed="flags", marker="flags-marker")
    stack.manage_json(product.env, "import_memory_bank", str(bank.write(tmp_path / "bank.json")),
                      "--owner", f"{owner['tenant_id']}/{owner['principal_id']}")
    token = owner["token"]
    # All sixteen servers at once (one worker each): each boot loads what its flags need.
    servers = []
    try:
        for number, flags in enumerate(COMBINATIONS):
            env = {**product.env, **{name: "true" if on else "false" for name, on in flags.items()}}
            servers.append((flags, stack.start_gunicorn(env, name=f"gunicorn-flags-{number:02d}", workers=1)))
        for flags, (web, base_url) in servers:
            stack.wait_serving(web, base_url)
            check_combination(Api(base_url), token, bank, flags)
    finally:
        for _, (web, _) in servers:
            web.stop()


def check_combination(api: Api, token: str, bank: AcceptanceBank, flags: dict) -> None:
    listed = api.get("/v1/memories", token, ceiling="restricted")
    search = api.post("/v1/memories/search", token, {"query": "What do I drink in the afternoon?",
                                                     "ceiling": "restricted"})
    journal = api.get("/v1/memory-reconsolidations", token, ceiling="restricted")
    if not flags["AGENT_MEMORY_API_ENABLED"]:
        for response in (listed, search, journal):
            assert_envelope(response, 404, "not_found")
        return
    assert listed.status_code == 200 and len(listed.json()["items"]) == bank.memory_count, flags
    assert search.status_code == 200, (flags, search.text)
    result = search.json()
    semantic = flags["AGENT_MEMORY_SEMANTIC_ENABLED"]
    assert (result["channel"], result["fallback_reason"]) == (
        ("hybrid", "") if semantic else ("sparse", "semantic_disabled")), flags
    assert result["requested_channel"] == "hybrid"
    assert bank.ids["tea"][0] in {item["id"] for item in result["items"]}, flags
    if flags["AGENT_MEMORY_RECONSOLIDATION_API_ENABLED"]:
        assert journal.status_code == 200 and "items" in journal.json(), flags
    else:
        assert_envelope(journal, 404, "not_found")

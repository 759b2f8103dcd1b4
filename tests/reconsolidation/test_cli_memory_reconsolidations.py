"""``memory_reconsolidations list|get|undo``: the exact interface, --json equal to the HTTP
body, errors as the API's envelope, independent of the HTTP surface flags."""
from __future__ import annotations

import json
from io import StringIO
from uuid import uuid4

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client, override_settings

from memory import services
from tests.api.conftest import Api
from tests.api.recon_builders import BASE, DAY_ONE, celsius, committed_merge, proposed, recon  # noqa: F401
from tests.factories import make_owner


@pytest.fixture
def owner(db):
    return make_owner()


def cli(principal, *args) -> tuple[str, bool]:
    out = StringIO()
    owner_arg = f"{principal.tenant_id}/{principal.principal_id}"
    try:
        call_command("memory_reconsolidations", *args, "--owner", owner_arg, stdout=out)
    except CommandError:
        return out.getvalue(), False
    return out.getvalue(), True


def http(token, method, path, **kwargs):
    with override_settings(AGENT_MEMORY_API_ENABLED=True, AGENT_MEMORY_RECONSOLIDATION_API_ENABLED=True):
        return Api(Client()).request(method, path, token, **kwargs)


def test_list_json_is_exactly_the_http_body(owner, recon, monkeypatch):
    principal, token = owner
    # Signed cursors carry their signing second: pin it so both renderings sign alike.
    monkeypatch.setattr("django.core.signing.time.time", lambda: 1_800_000_000.0)
    for _ in range(3):
        proposed(recon, principal, celsius(principal), "merge_equivalent")
    out, ok = cli(principal, "list", "--ceiling", "restricted", "--limit", "2", "--json")
    response = http(token, "GET", BASE, query={"ceiling": "restricted", "limit": "2"})
    assert ok and out.strip() == response.content.decode()
    cursor = json.loads(out)["next_cursor"]
    out, ok = cli(principal, "list", "--ceiling", "restricted", "--limit", "2", "--cursor", cursor, "--json")
    assert ok and len(json.loads(out)["items"]) == 1


def test_list_filters_by_kind_and_state(owner, recon):
    principal, _ = owner
    op = proposed(recon, principal, celsius(principal), "merge_equivalent")
    out, _ = cli(principal, "list", "--ceiling", "restricted", "--kind", "merge_equivalent", "--state", "proposed",
                 "--json")
    assert [i["id"] for i in json.loads(out)["items"]] == [str(op.id)]
    out, _ = cli(principal, "list", "--ceiling", "restricted", "--state", "committed", "--json")
    assert json.loads(out)["items"] == []


def test_get_json_is_exactly_the_http_body(owner, recon):
    principal, token = owner
    op = committed_merge(recon, principal)
    out, ok = cli(principal, "get", str(op.id), "--ceiling", "internal", "--json")
    response = http(token, "GET", f"{BASE}/{op.id}", query={"ceiling": "internal"})
    assert ok and out.strip() == response.content.decode()


def test_undo_json_is_the_http_receipt_and_replays_after_sources_vanish(owner, recon):
    principal, token = owner
    op = committed_merge(recon, principal)
    out, ok = cli(principal, "undo", str(op.id), "--ceiling", "restricted", "--expected-revision", str(op.revision),
                  "--idempotency-key", "cli-undo", "--json")
    assert ok and json.loads(out)["state"] == "undone"
    services.memory_erase(principal=principal, memory_id=op.inputs[0].memory_id, now=DAY_ONE)
    again, ok = cli(principal, "undo", str(op.id), "--ceiling", "restricted", "--expected-revision",
                    str(op.revision), "--idempotency-key", "cli-undo", "--json")
    replay = http(token, "POST", f"{BASE}/{op.id}/undo", body={"expected_revision": op.revision}, key="cli-undo",
                  query={"ceiling": "restricted"})
    assert ok and again.strip() == replay.content.decode()
    assert json.loads(again) == {**json.loads(out), "content": None, "sources": []}


def test_errors_print_the_api_envelope_and_fail(owner, recon):
    principal, _ = owner
    op = committed_merge(recon, principal)
    out, ok = cli(principal, "get", str(uuid4()), "--ceiling", "restricted", "--json")
    assert not ok and json.loads(out) == {"error": {"code": "not_found", "details": []}}
    out, ok = cli(principal, "undo", str(op.id), "--ceiling", "restricted", "--expected-revision",
                  str(op.revision + 5), "--idempotency-key", "k", "--json")
    assert not ok and json.loads(out)["error"]["code"] == "conflict"
    out, ok = cli(principal, "list", "--ceiling", "restricted", "--cursor", "forged", "--json")
    assert not ok and json.loads(out) == {"error": {"code": "validation_error", "details": []}}
    out, ok = cli(principal, "undo", str(op.id), "--ceiling", "restricted", "--expected-revision", "0",
                  "--idempotency-key", "k", "--json")
    assert not ok and json.loads(out)["error"]["code"] == "validation_error"


def test_every_action_requires_ceiling_and_owner(owner, recon):
    principal, _ = owner
    with pytest.raises(CommandError):
        call_command("memory_reconsolidations", "list", "--owner", f"{principal.tenant_id}/{principal.principal_id}")
    with pytest.raises(CommandError):
        call_command("memory_reconsolidations", "list", "--ceiling", "restricted")
    with pytest.raises(CommandError):
        call_command("memory_reconsolidations", "list", "--ceiling", "restricted", "--owner", "not-an-owner")


def test_undo_requires_revision_and_key_and_get_requires_an_id(owner, recon):
    principal, _ = owner
    op = committed_merge(recon, principal)
    assert not cli(principal, "undo", str(op.id), "--ceiling", "restricted", "--expected-revision", "2")[1]
    assert not cli(principal, "undo", str(op.id), "--ceiling", "restricted", "--idempotency-key", "k")[1]
    assert not cli(principal, "get", "--ceiling", "restricted")[1]
    assert not cli(principal, "list", str(op.id), "--ceiling", "restricted")[1]


def test_works_with_every_http_flag_and_processing_off(owner, recon, settings):
    principal, _ = owner
    op = committed_merge(recon, principal)
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    with override_settings(AGENT_MEMORY_API_ENABLED=False, AGENT_MEMORY_RECONSOLIDATION_API_ENABLED=False):
        assert cli(principal, "list", "--ceiling", "restricted", "--json")[1]
        out, ok = cli(principal, "undo", str(op.id), "--ceiling", "restricted", "--expected-revision",
                      str(op.revision), "--idempotency-key", "off")
    assert ok and "undone" in out


def test_human_output_shows_ids_and_states_but_no_content(owner, recon):
    principal, _ = owner
    op = committed_merge(recon, principal)
    out, ok = cli(principal, "get", str(op.id), "--ceiling", "restricted")
    assert ok and str(op.id) in out and "committed" in out and "Celsius" not in out
    out, ok = cli(principal, "list", "--ceiling", "restricted")
    assert ok and str(op.id) in out and "Celsius" not in out

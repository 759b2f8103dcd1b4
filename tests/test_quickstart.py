"""The quick start sets up the demo end to end, and serves /v1/memories for the token it prints."""
import json
from io import StringIO

from django.core.management import call_command
from django.test import Client, override_settings


def quickstart() -> dict:
    out = StringIO()
    call_command("quickstart", no_serve=True, json=True, stdout=out)
    return json.loads(out.getvalue())


@override_settings(AGENT_MEMORY_API_ENABLED=True)
def test_quickstart_imports_the_demo_bank_and_its_token_reads_memories(live_db):
    first = quickstart()
    assert first["imported"]["memories"] >= 200
    response = Client().get("/v1/memories", {"ceiling": "restricted", "limit": 100},
                            HTTP_AUTHORIZATION=f"Bearer {first['token']}")
    assert response.status_code == 200
    assert len(response.json()["items"]) == 100 and response.json()["next_cursor"]
    second = quickstart()  # idempotent: same bank, no new rows, a fresh token
    assert second["imported"]["memories"] == 0 and second["token"] != first["token"]
    assert second["owner"] == first["owner"]

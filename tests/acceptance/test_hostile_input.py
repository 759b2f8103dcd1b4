"""Hostile input against the running product with every feature on: malformed, truncated,
duplicate-key, NaN, invalid UTF-8 and deeply nested JSON; full-text operator syntax,
SQL-looking strings, NUL, lone surrogates and over-long queries; forged cursors,
out-of-range limits, unknown ceilings, malformed Authorization headers, blank and
over-long Idempotency-Keys. Every answer is a 4xx in the error envelope (never a 5xx),
a refused request writes nothing, and a second owner's token never sees the first's rows.
"""
from __future__ import annotations

import base64
import http.client
import json
import time
from urllib.parse import urlsplit

import pytest

from tests.acceptance import stack
from tests.acceptance.bank import AcceptanceBank
from tests.acceptance.client import assert_envelope
from tests.acceptance.waiting import eventually

pytestmark = pytest.mark.acceptance

SECRET = "quartz-lantern-9931"  # planted in owner A's bank: owner B must never see it

NESTED = 5000
MALFORMED_BODIES = {
    "malformed": b'{"query": "tea", "ceiling": ',
    "truncated": b'{"query": "tea", "ceiling": "restricted"',
    "duplicate_key": b'{"query": "tea", "query": "coffee", "ceiling": "restricted"}',
    "nan": b'{"query": "tea", "ceiling": "restricted", "max_items": NaN}',
    "infinity": b'{"query": "tea", "ceiling": "restricted", "max_tokens": Infinity}',
    "invalid_utf8": b'{"query": "\xff\xfe tea", "ceiling": "restricted"}',
    "nested_arrays": b'{"query": ' + b"[" * NESTED + b"]" * NESTED + b', "ceiling": "restricted"}',
    "nested_objects": b'{"query": "tea", "ceiling": "restricted", "x": ' + b'{"a": ' * NESTED + b"1" + b"}" * NESTED + b"}",
    "not_an_object": b'["query", "tea"]',
    "bare_string": b'"tea"',
    "empty": b"",
    "nul_escape": b'{"query": "tea\\u0000", "ceiling": "restricted"}',
    "lone_surrogate": b'{"query": "tea \\ud800", "ceiling": "restricted"}',
    "over_long_query": json.dumps({"query": "tea " * 1250, "ceiling": "restricted"}).encode(),
    "unknown_field": b'{"query": "tea", "ceiling": "restricted", "as_sql": "1=1"}',
    "unknown_ceiling": b'{"query": "tea", "ceiling": "top-secret"}',
    "zero_items": b'{"query": "tea", "ceiling": "restricted", "max_items": 0}',
    "huge_items": b'{"query": "tea", "ceiling": "restricted", "max_items": 100000000000000000000}',
    "wrong_type": b'{"query": 42, "ceiling": "restricted"}',
}
# Accepted as ordinary text: the query is data, never syntax.
ODD_QUERIES = [
    "tea & !coffee | (green:* <-> tea)",
    "'; DROP TABLE memory_memory; --",
    "\") OR 1=1 --",
    "%_\\*?[]{}$^",
    "green tea " * 180,  # 1,800 characters: under the bound
    "🍵 çay чай 茶 شاي",
]


@pytest.fixture(scope="module")
def owners(product, tmp_path_factory):
    """Owner A with a bank, a session, an event and dreaming done; owner B with nothing."""
    api = product.api()
    a, b = product.new_owner("Hostile owner A"), product.new_owner("Hostile owner B")
    bank = AcceptanceBank(seed="hostile", marker=SECRET)
    path = bank.write(tmp_path_factory.mktemp("hostile") / "bank.json")
    stack.manage_json(product.env, "import_memory_bank", str(path), "--owner", f"{a['tenant_id']}/{a['principal_id']}")
    session = api.post("/v1/sessions", a["token"], {"scope": "user"})
    assert session.status_code == 201, session.text
    operations = eventually(lambda: api.journal(a["token"]), timeout=120, what="dreaming proposed for owner A")
    # Beat keeps writing for a while (vector backfill, the rest of the generation); the
    # "writes nothing" checks below compare counts, so start from a settled bank.
    eventually(lambda: settled(product.database, a["principal_id"]), timeout=180, what="owner A's background work settled")
    return {"api": api, "a": a, "b": b, "bank": bank, "session": session.json()["id"], "operations": operations}


def settled(database, principal_id: str) -> bool:
    """Every memory has its vector and nothing changed for a few seconds."""
    first = database.owner_row_counts(principal_id)
    time.sleep(3)
    second = database.owner_row_counts(principal_id)
    return first == second and second["recall_memoryvector"] >= second["memory_memory"]


def routes(owners) -> list[tuple[str, str]]:
    """Every JSON-body route of owner A, with real IDs."""
    bank, operation = owners["bank"], owners["operations"][0]["id"]
    memory = bank.ids["tea"][0]
    return [
        ("POST", "/v1/memories/search"),
        ("POST", "/v1/memories"),
        ("POST", f"/v1/memories/{memory}/review"),
        ("POST", "/v1/sessions"),
        ("POST", f"/v1/sessions/{owners['session']}/events"),
        ("POST", f"/v1/memory-reconsolidations/{operation}/approve?ceiling=restricted"),
        ("POST", f"/v1/memory-reconsolidations/{operation}/reject?ceiling=restricted"),
        ("POST", f"/v1/memory-reconsolidations/{operation}/undo?ceiling=restricted"),
    ]


def test_malformed_bodies_are_refused_in_the_envelope_and_write_nothing(product, owners):
    api, a = owners["api"], owners["a"]
    before = product.database.owner_row_counts(a["principal_id"])
    for method, path in routes(owners):
        for name, raw in MALFORMED_BODIES.items():
            response = api.request(method, path, a["token"], content=raw)
            details = assert_envelope(response, 400, "validation_error")
            assert SECRET not in response.text and "DROP" not in response.text, (path, name)
            # The journal's routes refuse with empty details (spec: "bad filters/body are 400
            # validation_error, with empty error details"); every other route names the field.
            assert bool(details) != path.startswith("/v1/memory-reconsolidations"), (path, name, details)
    assert product.database.owner_row_counts(a["principal_id"]) == before


def test_odd_query_text_is_searched_as_data_and_nothing_but_a_trace_is_written(product, owners):
    api, a = owners["api"], owners["a"]
    before = product.database.owner_row_counts(a["principal_id"])
    for query in ODD_QUERIES:
        result = api.search(a["token"], query)
        assert result["channel"] == "hybrid" and result["fallback_reason"] == ""
    after = product.database.owner_row_counts(a["principal_id"])
    assert after.pop("recall_recalltrace") == before.pop("recall_recalltrace") + len(ODD_QUERIES)
    assert after == before


def test_forged_cursors_bad_limits_and_unknown_ceilings_are_refused(product, owners):
    api, a = owners["api"], owners["a"]
    first = api.get("/v1/memories", a["token"], ceiling="restricted", limit=2).json()
    real = first["next_cursor"]
    flipped = real[:-2] + ("A" if real[-2] != "A" else "B") + real[-1]
    forged = [
        "not-a-cursor", base64.urlsafe_b64encode(b'{"store_position": 1, "memory_id": "x"}').decode(),
        flipped, real + "x", "", "\u0000", "a" * 3000,  # (gunicorn itself refuses request lines over 4,094 bytes)
    ]
    for path in ("/v1/memories", "/v1/memory-reconsolidations"):
        for cursor in forged:
            assert_envelope(api.get(path, a["token"], ceiling="restricted", cursor=cursor), 400, "validation_error")
        for limit in ("0", "-1", "101", "1e9", "ten", "", "99999999999999999999"):
            assert_envelope(api.get(path, a["token"], ceiling="restricted", limit=limit), 400, "validation_error")
        for ceiling in ("top-secret", "", "RESTRICTED", "restricted;"):
            assert_envelope(api.get(path, a["token"], ceiling=ceiling), 400, "validation_error")
        assert_envelope(api.get(path, a["token"]), 400, "validation_error")  # no ceiling
    # A cursor is bound to its owner and its filters.
    b = owners["b"]
    assert_envelope(api.get("/v1/memories", b["token"], ceiling="restricted", cursor=real), 400, "validation_error")
    assert_envelope(api.get("/v1/memories", a["token"], ceiling="public", cursor=real), 400, "validation_error")


def raw_request(base_url: str, method: str, path: str, headers: list[tuple[str, bytes]], body: bytes = b"") -> tuple[int, bytes]:
    """One request with header bytes exactly as given (httpx would refuse some of them)."""
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.putrequest(method, path)
    for name, value in headers:
        connection.putheader(name, value)
    connection.putheader("Content-Length", str(len(body)))
    connection.endheaders(body)
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, payload


def test_malformed_authorization_is_an_authorization_error_for_every_route(product, owners):
    token = owners["a"]["token"]
    values = [b"", b"Bearer", b"Bearer ", b"Basic dXNlcjpwYXNz", b"Token " + token.encode(),
              b"Bearer " + token.encode() + b" extra", b"Bearer vbt_" + b"x" * 8000, b"Bearer vbt_\xc3\xa9t\xc3\xa9",
              b"Bearer \xff\xfe", b"Bearer " + token.encode()[:-1]]
    for method, path in [("GET", "/v1/memories?ceiling=restricted"), *routes(owners)]:
        for value in values:
            status, payload = raw_request(product.base_url, method, path,
                                          [("Authorization", value), ("Content-Type", b"application/json"),
                                           ("Idempotency-Key", b"hostile-auth")], b'{"query": "tea", "ceiling": "public"}')
            assert status == 401, (path, value[:20], status, payload[:200])
            body = json.loads(payload)
            assert body["error"]["code"] == "authorization_error"


def test_blank_and_over_long_idempotency_keys_are_refused_and_write_nothing(product, owners):
    a = owners["a"]
    before = product.database.owner_row_counts(a["principal_id"])
    for key in (None, b"", b" ", b"   ", b"k" * 129, b"k" * 4000):
        headers = [("Authorization", f"Bearer {a['token']}".encode()), ("Content-Type", b"application/json")]
        if key is not None:
            headers.append(("Idempotency-Key", key))
        status, payload = raw_request(product.base_url, "POST", "/v1/sessions", headers, b'{"scope": "user"}')
        assert status == 400, (key, status, payload[:200])
        error = json.loads(payload)["error"]
        assert error["code"] == "validation_error" and error["details"], key
    assert product.database.owner_row_counts(a["principal_id"]) == before


def test_a_second_owner_never_sees_a_row_of_the_first(product, owners):
    api, a, b, bank = owners["api"], owners["a"], owners["b"], owners["bank"]
    a_memories = {item["id"] for item in api.memories(a["token"])}
    a_operations = {op["id"] for op in owners["operations"]}
    assert a_memories and a_operations
    assert not api.memories(b["token"]) and not api.journal(b["token"])
    for statement in bank.statements.values():
        result = api.search(b["token"], statement)
        assert not result["items"] and SECRET not in result["rendered"]
    for memory_id in a_memories:
        assert_envelope(api.get(f"/v1/memories/{memory_id}", b["token"], ceiling="restricted"), 404, "not_found")
    for operation_id in a_operations:
        assert_envelope(api.get(f"/v1/memory-reconsolidations/{operation_id}", b["token"], ceiling="restricted"),
                        404, "not_found")
        for action in ("approve", "reject", "undo"):
            response = api.post(f"/v1/memory-reconsolidations/{operation_id}/{action}", b["token"],
                                {"expected_revision": 1}, params={"ceiling": "restricted"})
            assert_envelope(response, 404, "not_found")
    erase = api.delete(f"/v1/memories/{next(iter(a_memories))}", b["token"], params={"ceiling": "restricted"})
    assert_envelope(erase, 404, "not_found")
    event = api.post(f"/v1/sessions/{owners['session']}/events", b["token"],
                     {"kind": "user.message.created", "speaker": "owner", "parts": ["hello"]})
    assert_envelope(event, 404, "not_found")
    assert {item["id"] for item in api.memories(a["token"])} == a_memories  # nothing of A's lost

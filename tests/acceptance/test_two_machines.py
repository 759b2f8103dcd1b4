"""Two machines' worth at once: the stack's two gunicorn workers and two Celery workers,
several owners importing (and so dreaming), searching, writing (every write sent twice
with its Idempotency-Key, as a retrying client does) and approving for a bounded period.
Afterwards: no 5xx, no write or operation recorded twice, no original lost, and no two
slices of one owner ever overlapped (leases exclusive)."""
from __future__ import annotations

import random
import re
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.acceptance import stack
from tests.acceptance.bank import AcceptanceBank
from tests.acceptance.client import Api
from tests.acceptance.waiting import eventually

pytestmark = pytest.mark.acceptance

OWNERS = 4
CLIENT_THREADS = 6
PERIOD_SECONDS = 40
# After the period, how long the first slice may still take: on a slow machine the workers may
# not have reached a slice yet (the period bounds the load, not the dreaming it set off).
SLICES_TIMEOUT = 300
SERVER_ERROR = re.compile(r'HTTP/1\.[01]" 5\d\d ')  # an access-log line of a 5xx answer
QUERIES = ("What do I drink in the afternoon?", "When do I run?", "Where does my sister live?",
           "How do I get to the office?", "Which units do I prefer?")


class Owner:
    def __init__(self, product, index: int, tmp_path):
        made = product.new_owner(f"Busy owner {index}")
        self.token, self.principal_id = made["token"], made["principal_id"]
        self.ref = f"{made['tenant_id']}/{made['principal_id']}"
        self.bank = AcceptanceBank(seed=f"busy-{index}", marker=f"busy-marker-{index}")
        self.path = self.bank.write(tmp_path / f"bank-{index}.json")
        self.created: set[str] = set()
        self.keys: set[str] = set()
        self.lock = threading.Lock()


def write_twice(api: Api, owner: Owner, session_id: str, n: int) -> None:
    """One new belief from one new message, each write sent twice with one key."""
    event_key, memory_key = f"event-{uuid.uuid4()}", f"memory-{uuid.uuid4()}"
    text = f"Note number {n}: I keep a spare key at the neighbour's."
    event_body = {"kind": "user.message.created", "speaker": "owner", "parts": [text]}
    first = api.post(f"/v1/sessions/{session_id}/events", owner.token, event_body, key=event_key)
    again = api.post(f"/v1/sessions/{session_id}/events", owner.token, event_body, key=event_key)
    assert first.status_code == 201 and again.status_code == 201 and again.json() == first.json()
    event = first.json()
    memory_body = {"subject": f"note {n}", "statement": f"The owner keeps spare key number {n} at the neighbour's.",
                   "belief_type": "fact", "sources": [{"event": event["id"], "part": event["parts"][0]["id"]}]}
    made = api.post("/v1/memories", owner.token, memory_body, key=memory_key)
    replay = api.post("/v1/memories", owner.token, memory_body, key=memory_key)
    assert made.status_code == 201 and replay.status_code == 201, (made.text, replay.text)
    assert replay.json()["id"] == made.json()["id"]
    with owner.lock:
        owner.created.add(made.json()["id"])
        owner.keys.add(memory_key)


def approve_one(api: Api, owner: Owner) -> None:
    proposed = api.get("/v1/memory-reconsolidations", owner.token, ceiling="restricted", state="proposed").json()
    if proposed["items"]:
        op = random.choice(proposed["items"])
        response = api.post(f"/v1/memory-reconsolidations/{op['id']}/approve", owner.token,
                            {"expected_revision": op["revision"]}, params={"ceiling": "restricted"})
        assert response.status_code in (200, 409), response.text  # 409: another thread got there first


def test_two_web_workers_and_two_celery_workers_serve_several_busy_owners_without_loss(product, tmp_path):
    api = product.api()
    owners = [Owner(product, index, tmp_path) for index in range(OWNERS)]
    sessions = {}
    for owner in owners:
        response = api.post("/v1/sessions", owner.token, {"scope": "user"})
        assert response.status_code == 201
        sessions[owner.ref] = response.json()["id"]
    deadline = time.monotonic() + PERIOD_SECONDS
    counter = iter(range(1_000_000))
    counter_lock = threading.Lock()
    # Clients busy an owner only once its bank is in: an owner's first generation starts with
    # its first original, and a generation finished over one live write leaves a same-day
    # import to tomorrow's (``leases.claim_due``), so a write that won the race against the
    # import left that owner without a slice to watch (failed by chance on a slow machine).
    imported: list[Owner] = []
    imported_lock = threading.Lock()

    def client(seed: int) -> int:
        rng = random.Random(seed)
        local = Api(product.base_url)
        done = 0
        while time.monotonic() < deadline:
            with imported_lock:
                ready = list(imported)
            if not ready:
                time.sleep(0.1)
                continue
            owner = rng.choice(ready)
            action = rng.random()
            if action < 0.5:
                result = local.search(owner.token, rng.choice(QUERIES))
                assert result["channel"] in ("hybrid", "sparse") and "fallback_reason" in result
            elif action < 0.8:
                with counter_lock:
                    n = next(counter)
                write_twice(local, owner, sessions[owner.ref], n)
            elif action < 0.9:
                approve_one(local, owner)
            else:
                local.get("/v1/memories", owner.token, ceiling="restricted", limit=50)
            done += 1
        return done

    def importer() -> None:
        # Staggered imports, so that dreaming runs on the workers while clients are busy.
        for owner in owners:
            stack.manage_json(product.env, "import_memory_bank", str(owner.path), "--owner", owner.ref)
            with imported_lock:
                imported.append(owner)
            time.sleep(PERIOD_SECONDS / (OWNERS * 2))

    with ThreadPoolExecutor(CLIENT_THREADS + 1) as pool:
        imports = pool.submit(importer)
        requests = [pool.submit(client, seed) for seed in range(CLIENT_THREADS)]
        imports.result()
        assert sum(future.result() for future in requests) > 50

    for owner in owners:
        listed = {item["id"] for item in api.memories(owner.token)}
        imported = {memory_id for ids in owner.bank.ids.values() for memory_id in ids}
        assert imported | owner.created <= listed, "an original was lost"
        assert len(owner.created) == len(owner.keys), "a replayed write created a second belief"

    with product.database.connect() as conn:
        twice = conn.execute(
            "SELECT principal_id, kind, input_digest, count(*) FROM reconsolidation_reconsolidationoperation"
            " GROUP BY 1, 2, 3 HAVING count(*) > 1").fetchall()
        assert twice == []
        dreamt = conn.execute("SELECT count(DISTINCT principal_id) FROM reconsolidation_reconsolidationjob"
                              " WHERE principal_id = ANY(%s::uuid[])", [[o.principal_id for o in owners]]).fetchone()[0]
        assert dreamt == OWNERS

    def slices() -> list[tuple]:
        """Each slice's spend from its first reservation to its last settlement (a slice still
        running ends, for now, at its reservation); empty until a slice has reserved."""
        with product.database.connect() as conn:
            spans = conn.execute(
                "SELECT principal_id, slice_token, min(reserved_at), max(coalesce(settled_at, reserved_at))"
                " FROM reconsolidation_reconsolidationspend WHERE principal_id = ANY(%s::uuid[])"
                " GROUP BY 1, 2 ORDER BY 1, 3", [[o.principal_id for o in owners]]).fetchall()
        return spans

    spans = eventually(slices, timeout=SLICES_TIMEOUT, what="a dreaming slice")
    for (owner_a, _, _, end_a), (owner_b, _, start_b, _) in zip(spans, spans[1:]):
        if owner_a == owner_b:
            assert start_b >= end_a, "two slices of one owner overlapped"
    eventually(lambda: all("dream_owner" in worker.log() for worker in product.workers), timeout=SLICES_TIMEOUT,
               what="both Celery workers took dreaming tasks")
    assert len(product.workers) == 2
    for service in product.services():
        log = service.log()
        assert "Traceback" not in log and not SERVER_ERROR.search(log), f"{service.name} logged a failure"

"""Two requests with one Idempotency-Key at the same moment perform the write once.

Real commits on separate connections (``live_db``): the receipt check happens under the
owner lock, so the second request waits for the first to commit and then replays it.
"""
from __future__ import annotations

import threading
import time

from django.db import connection
from django.test import Client, override_settings

from memory import services
from memory.models import IdempotencyReceipt, Memory
from tests.api.conftest import Api, memory_body
from tests.factories import make_owner, owner_message
from veetbot.rls import owner_context


def test_concurrent_requests_with_one_key_write_once(live_db, monkeypatch):
    principal, token = make_owner()
    body = memory_body(owner_message(principal, "I prefer Celsius."))
    real_create = services.memory_create

    def slow_create(**kwargs):
        # Hold the first write open long enough for the second request to arrive.
        time.sleep(0.3)
        return real_create(**kwargs)

    monkeypatch.setattr(services, "memory_create", slow_create)
    start = threading.Barrier(2)
    results: list = []

    def call() -> None:
        try:
            start.wait()
            response = Api(Client()).post("/v1/memories", token, body, key="one-key")
            results.append((response.status_code, response.json().get("id")))
        except Exception as error:  # surfaced by the assertion below
            results.append(("error", repr(error)))
        finally:
            connection.close()

    with override_settings(AGENT_MEMORY_API_ENABLED=True):
        threads = [threading.Thread(target=call) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)

    assert [status for status, _ in results] == [201, 201], results
    assert results[0][1] == results[1][1]
    with owner_context(principal):
        assert Memory.objects.count() == 1
        assert IdempotencyReceipt.objects.count() == 1

"""Fixtures of the MCP suite: the app served by pytest-django's ``live_server`` on
127.0.0.1, the official SDK client talking to it over real HTTP (``client.Mcp``), and
committed owners.

``live_server`` asks for ``transactional_db``; as in the dashboard suites it is replaced
by ``committed_db`` (tests/conftest.py): committed data for the module, truncated once at
its end. Every test builds fresh owners, and row-level security keeps owners apart.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from memory import services
from memory.models import IdempotencyReceipt, Memory
from tests.factories import make_owner, owner_message
from tests.mcp_server.client import Mcp
from veetbot.identity import Principal
from veetbot.rls import owner_context

# Read by pytest-django when the session-scoped live server starts: loopback only.
os.environ["DJANGO_LIVE_TEST_SERVER_ADDRESS"] = "127.0.0.1"


@pytest.fixture
def transactional_db(committed_db):
    yield


@pytest.fixture
def enabled(settings):
    settings.AGENT_MEMORY_API_ENABLED = True
    settings.AGENT_MEMORY_MCP_ENABLED = True
    settings.AGENT_MEMORY_RECONSOLIDATION_API_ENABLED = True
    return settings


@dataclass
class Owner:
    principal: Principal
    token: str

    def token_with(self, *scopes: str) -> str:
        return services.token_create(principal=self.principal, scopes=scopes)

    def message(self, text: str = "I prefer Celsius for weather."):
        return owner_message(self.principal, text)

    def counts(self) -> dict[str, int]:
        with owner_context(self.principal):
            return {"memories": Memory.objects.count(),
                    "live_memories": Memory.objects.filter(erased_at__isnull=True).count(),
                    "receipts": IdempotencyReceipt.objects.count()}


@pytest.fixture
def owner(transactional_db) -> Owner:
    return Owner(*make_owner("MCP owner"))


@pytest.fixture
def other_owner(transactional_db) -> Owner:
    return Owner(*make_owner("Another owner"))


@pytest.fixture
def mcp(live_server, enabled) -> Mcp:
    assert live_server.url.startswith("http://127.0.0.1:")
    return Mcp(url=f"{live_server.url}/v1/mcp")

"""Fixtures of the MCP suite: the app served by pytest-django's ``live_server`` on
127.0.0.1, the official SDK client talking to it over real HTTP, and committed owners.

``live_server`` asks for ``transactional_db``; as in the dashboard suites it is replaced
by ``committed_db`` (tests/conftest.py): committed data for the module, truncated once at
its end. Every test builds fresh owners, and row-level security keeps owners apart.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional

import anyio
import httpx2
import pytest
from mcp.client import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

from memory import services
from memory.models import IdempotencyReceipt, Memory
from tests.factories import make_owner, owner_message
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


@dataclass
class Mcp:
    """The SDK's own client against the live server's /v1/mcp."""

    url: str

    def run(self, token: Optional[str], work: Callable[[Any], Awaitable[Any]], *, legacy: bool = False,
            responses: Optional[list] = None) -> Any:
        """``work(client)`` inside one connection. ``Client`` negotiates (server/discover,
        the sessionless 2026-07-28 revision); ``legacy`` drives a bare ``ClientSession``
        through the initialize handshake of earlier revisions instead. ``responses``
        collects every HTTP response of the exchange."""
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}

        async def record(response):
            if responses is not None:
                responses.append(response)

        async def main():
            async with httpx2.AsyncClient(headers=headers, timeout=30, event_hooks={"response": [record]}) as http:
                transport = streamable_http_client(self.url, http_client=http)
                if legacy:
                    async with transport as (read, write), ClientSession(read, write) as session:
                        await session.initialize()
                        return await work(session)
                async with Client(transport) as client:
                    return await work(client)

        return anyio.run(main)

    def call(self, token: str, tool: str, arguments: dict, **kwargs):
        return self.run(token, lambda client: client.call_tool(tool, arguments), **kwargs)


@pytest.fixture
def mcp(live_server, enabled) -> Mcp:
    assert live_server.url.startswith("http://127.0.0.1:")
    return Mcp(url=f"{live_server.url}/v1/mcp")

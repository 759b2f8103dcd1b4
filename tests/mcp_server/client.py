"""The official MCP SDK's own client against a running server's /v1/mcp, from synchronous
test code: the MCP suite drives the live test server with it, the acceptance journeys drive
gunicorn. Django-free, so the acceptance suite (separate processes) can use it too."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional

import anyio
import httpx2
from mcp.client import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client


@dataclass
class Mcp:
    """The SDK's own client against one server's /v1/mcp (``url``)."""

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

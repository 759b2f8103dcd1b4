"""The owner API over the Model Context Protocol: one route, ``/v1/mcp``.

``tools`` holds the tools (the REST routes' use cases under MCP names); ``transport``
holds the Django view that serves them through the official ``mcp`` SDK's streamable-HTTP
handler inside the WSGI app. Part of the project's composition root: it wires memory,
recall and reconsolidation together, so it may import their ``api`` packages and nothing
lower may import it.
"""

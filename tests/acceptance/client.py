"""A native client's view of the owner API: JSON over HTTP to the running server, a bearer
token, an Idempotency-Key on every write. Every response is checked for what any
response of this API must be: never a 5xx, never cacheable."""
from __future__ import annotations

import uuid
from typing import Any, Optional

import httpx


class Api:
    def __init__(self, base_url: str):
        self.base_url = base_url
        self.http = httpx.Client(base_url=base_url, timeout=60)

    def request(self, method: str, path: str, token: Optional[str] = None, *, json: Any = None,
                params: Optional[dict] = None, key: Optional[str] = None, headers: Optional[dict] = None,
                content: Optional[bytes] = None) -> httpx.Response:
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if method in {"POST", "DELETE"} and key is not False:
            sent["Idempotency-Key"] = key or f"acceptance-{uuid.uuid4()}"
        if content is not None:
            sent.setdefault("Content-Type", "application/json")
        response = self.http.request(method, path, json=json, params=params, headers=sent, content=content)
        assert response.status_code < 500, f"{method} {path}: {response.status_code} {response.text[:500]}"
        assert response.headers.get("Cache-Control") == "private, no-store", (method, path, response.headers)
        return response

    def get(self, path: str, token: str, **params) -> httpx.Response:
        return self.request("GET", path, token, params=params)

    def post(self, path: str, token: str, body: Any = None, **kwargs) -> httpx.Response:
        return self.request("POST", path, token, json=body, **kwargs)

    def delete(self, path: str, token: str, **kwargs) -> httpx.Response:
        return self.request("DELETE", path, token, **kwargs)

    def search(self, token: str, query: str, **fields) -> dict:
        response = self.post("/v1/memories/search", token, {"query": query, "ceiling": "restricted", **fields})
        assert response.status_code == 200, response.text
        return response.json()

    def every_page(self, path: str, token: str, **params) -> list[dict]:
        """Every item of a cursor-paged list, following next_cursor to the end."""
        items, cursor = [], None
        while True:
            query = {"ceiling": "restricted", "limit": 100, **params, **({"cursor": cursor} if cursor else {})}
            response = self.get(path, token, **query)
            assert response.status_code == 200, response.text
            page = response.json()
            items.extend(page["items"])
            cursor = page.get("next_cursor")
            if not cursor:
                return items

    def journal(self, token: str, **params) -> list[dict]:
        return self.every_page("/v1/memory-reconsolidations", token, **params)

    def memories(self, token: str, **params) -> list[dict]:
        return self.every_page("/v1/memories", token, **params)


def assert_envelope(response: httpx.Response, status: int, code: str) -> list:
    assert response.status_code == status, (response.status_code, response.text[:500])
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "details"}, body
    assert body["error"]["code"] == code, body
    return body["error"]["details"]

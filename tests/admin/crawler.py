"""Crawl the admin as a logged-in user by following every link from the index.

Every admin page reachable by a GET link is fetched: app indexes, changelists, each
filter value and each single-column sort, each change (detail) page and its history.
Searches are added per changelist: the marker itself and a real row ID. Two kinds of
link are pruned because they only multiply pages already covered: the preserved
``_changelist_filters`` of detail links, and combinations (two filters, or a filter,
sort or search together); sorts are followed ascending by one column each. The logout
link is skipped so the session survives.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from html import unescape
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

HREF = re.compile(r'href="([^"]+)"')
PRUNED = {"_changelist_filters"}
NON_FILTER = {"o", "q", "p"}
SKIP = ("/admin/logout/",)
MAX_PAGES = 3000


@dataclass
class Crawl:
    pages: dict[str, object] = field(default_factory=dict)  # url -> response

    def statuses(self) -> dict[str, int]:
        return {url: response.status_code for url, response in self.pages.items()}

    def leaks(self, marker: str) -> list[str]:
        """URLs whose body, headers or address hold the marker (case-insensitive)."""
        needle = marker.lower()
        found = []
        for url, response in self.pages.items():
            text = response.content.decode("utf-8", "replace")
            headers = " ".join(f"{k}: {v}" for k, v in response.headers.items())
            if needle in (url + text + headers).lower() or needle in unescape(text).lower():
                found.append(url)
        return found


def _normalise(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.netloc not in ("", "testserver") or not parts.path.startswith("/admin/"):
        return None
    if parts.path.startswith(SKIP):
        return None
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in PRUNED]
    # One filter may span several keys (a date range: day__gte and day__lt).
    filters = {k.split("__")[0] for k, _ in query if k not in NON_FILTER}
    sort, search = dict(query).get("o"), dict(query).get("q")
    if len(filters) + bool(sort) + bool(search) > 1 or (sort is not None and not sort.isdigit()):
        return None
    return parts.path + (f"?{urlencode(sorted(query))}" if query else "")


def crawl(client, *, start: str = "/admin/", searches: tuple[str, ...] = ()) -> Crawl:
    result = Crawl()
    queue = deque([start])
    seen = {start}
    changelists: set[str] = set()
    while queue:
        url = queue.popleft()
        assert len(result.pages) < MAX_PAGES, "the crawl did not converge"
        response = client.get(url)
        result.pages[url] = response
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        path = urlsplit(url).path
        links = [unescape(href) for href in HREF.findall(response.content.decode())]
        if 'id="changelist"' in response.content.decode() and path not in changelists:
            changelists.add(path)
            links += [f"{path}?{urlencode({'q': term})}" for term in searches]
        for link in links:
            target = _normalise(urljoin(url, link))
            if target and target not in seen:
                seen.add(target)
                queue.append(target)
    return result

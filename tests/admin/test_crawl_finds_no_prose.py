"""The staff admin shows no owner prose anywhere: a crawl of every page reachable from
the admin index (app indexes, changelists, every filter value and sort, searches, every
detail and history page) over two planted owners never meets the marker planted in
every prose column, and every page answers 200 (or a deliberate 403).

The same crawl over a deliberately leaky admin finds the marker, so it can fail."""
from __future__ import annotations

import re

import pytest
from django.contrib import admin

from memory.models import (
    EventPart, Memory, MemoryRevision, OwnerToken, Person, Owner as OwnerRow, Session,
)
from reconsolidation.models import DerivedMemory
from tests.admin import leaky_site
from tests.admin.crawler import crawl
from tests.admin.planting import MARKER
from veetbot.admin import is_owner_model
from veetbot.rls import owner_context

# Marker-free fragments of the planted prose: an admin searching prose would find rows.
PROSE_SEARCHES = ("statement secret", "display name secret", "summary clause secret")
# A view-only user may open a user's page but not its password form: deliberate.
DELIBERATE_403 = re.compile(r"^/admin/auth/user/\d+/password/$")
RESULT_COUNT = re.compile(r"(\d+) results? \(")


def planted_prose_columns(principal) -> dict[str, bool]:
    """Where the marker sits in the owner's rows (read as that owner)."""
    m = MARKER
    with owner_context(principal):
        return {
            "principal.display_name": OwnerRow.objects.filter(display_name__contains=m).exists(),
            "token.label": OwnerToken.objects.filter(label__contains=m).exists(),
            "person.name": Person.objects.filter(name__contains=m).exists(),
            "session.scope": Session.objects.filter(scope__contains=m).exists(),
            "event_part.text": EventPart.objects.filter(text__contains=m).exists(),
            "memory.subject": Memory.objects.filter(subject__contains=m).exists(),
            "memory.statement": Memory.objects.filter(statement__contains=m).exists(),
            "memory.scope": Memory.objects.filter(scope__contains=m).exists(),
            "memory.entity_ids": Memory.objects.filter(entity_ids__contains=[f"{m}0"]).exists(),
            "revision.snapshot": any(m in str(s) for s in MemoryRevision.objects.values_list("snapshot", flat=True)),
            "derived.subject": DerivedMemory.objects.filter(subject__contains=m).exists(),
            "derived.clauses": any(m in str(c) for c in DerivedMemory.objects.values_list("clauses", flat=True)),
        }


def expected_detail_pages(planted) -> set[str]:
    """The change page of every row of every registered owner model, listed per owner."""
    pages = set()
    for owner in planted:
        with owner_context(owner.principal):
            for model in admin.site._registry:
                if is_owner_model(model):
                    meta = model._meta
                    pages |= {f"/admin/{meta.app_label}/{meta.model_name}/{pk}/change/"
                              for pk in model.objects.values_list("pk", flat=True)}
    return pages


def test_the_marker_is_planted_in_every_prose_column(planted):
    for owner in planted:
        assert planted_prose_columns(owner.principal) == dict.fromkeys(planted_prose_columns(owner.principal), True)


def test_no_admin_page_reachable_from_the_index_shows_planted_prose(planted, staff_client):
    result = crawl(staff_client, searches=PROSE_SEARCHES)
    statuses = result.statuses()

    assert result.leaks(MARKER) == []
    assert {url: s for url, s in statuses.items() if s != 200 and not (s == 403 and DELIBERATE_403.match(url))} == {}
    # The crawl really covered the site: every registered changelist, every row's detail
    # and history page, filters, sorts and searches.
    for model in admin.site._registry:
        assert f"/admin/{model._meta.app_label}/{model._meta.model_name}/" in statuses, model
    details = expected_detail_pages(planted)
    assert len(details) > 50
    assert details <= set(statuses)
    assert {page.replace("/change/", "/history/") for page in details} <= set(statuses)
    for exercised in ("state__exact=", "day__gte=", "o="):
        assert any(exercised in url for url in statuses), exercised
    searches = [url for url in statuses if "q=" in url]
    assert len(searches) >= len(admin.site._registry) * len(PROSE_SEARCHES)
    for url in searches:
        counts = RESULT_COUNT.findall(result.pages[url].content.decode())
        assert counts in ([], ["0"]), f"a prose search matched rows at {url}"


@pytest.mark.urls("tests.admin.leaky_site")
def test_the_crawl_catches_an_admin_that_shows_statements(planted, superuser_client, monkeypatch):
    monkeypatch.setattr(leaky_site, "OWNER", planted[0].principal)
    leaks = crawl(superuser_client, searches=PROSE_SEARCHES).leaks(MARKER)
    assert "/admin/memory/memory/" in leaks
    assert any(url.endswith("/change/") for url in leaks)


@pytest.mark.urls("tests.admin.unguarded_staff_site")
def test_even_a_memory_admin_on_the_staff_site_lists_nothing(planted, superuser_client):
    """Row-level security is the guarantee: under the staff context prose rows do not exist."""
    result = crawl(superuser_client, searches=PROSE_SEARCHES)
    assert "/admin/memory/memory/" in result.pages
    assert "0 memorys" in result.pages["/admin/memory/memory/"].content.decode()
    memory_id = planted[0].memory_ids[0]
    detail = superuser_client.get(f"/admin/memory/memory/{memory_id}/change/")
    assert detail.status_code == 302  # "does not exist", back to the index
    assert result.leaks(MARKER) == [] and MARKER.lower() not in detail.content.decode().lower()

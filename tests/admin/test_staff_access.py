"""Who may open the staff admin, and that nobody can write owner data through it.

Staff pages are read-only for everyone, superusers included: owner writes go through
the services (owner, revision, idempotency checks), never through the admin."""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client

from reconsolidation.models import ReconsolidationJob
from veetbot.admin import is_owner_model
from veetbot.rls import staff_context


def owner_models():
    return [model for model in admin.site._registry if is_owner_model(model)]


def url(model, suffix: str = "") -> str:
    return f"/admin/{model._meta.app_label}/{model._meta.model_name}/{suffix}"


def one_row(planted, model):
    """The first owner's first row, read as staff read it (the directory views are empty
    in an owner's own context)."""
    with staff_context():
        return model.objects.filter(principal_id=planted[0].principal.principal_id).order_by("pk").first()


@pytest.mark.parametrize("make_user", [
    lambda: None,
    lambda: User.objects.create_user(username="owner-side", password="x"),
    lambda: User.objects.create_user(username="former-staff", password="x", is_staff=True, is_active=False),
], ids=["anonymous", "not-staff", "inactive-staff"])
def test_only_active_staff_get_past_the_login_page(db, make_user):
    client, user = Client(), make_user()
    if user is not None:
        client.force_login(user)
    for path in ("/admin/", url(ReconsolidationJob), "/admin/reconsolidation/"):
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), path


def test_staff_without_view_permission_see_no_owner_tables(planted):
    client = Client()
    client.force_login(User.objects.create_user(username="bare", password="x", is_staff=True))
    assert client.get("/admin/").status_code == 200
    assert client.get(url(ReconsolidationJob)).status_code == 403


def test_staff_list_every_owners_rows_in_one_changelist(planted, staff_client):
    page = staff_client.get(url(ReconsolidationJob)).content.decode()
    for owner in planted:
        assert str(owner.principal.principal_id) in page


@pytest.mark.parametrize("who", ["staff_client", "superuser_client"])
def test_nobody_can_add_change_or_delete_owner_rows(planted, who, request):
    client = request.getfixturevalue(who)
    for model in owner_models():
        row = one_row(planted, model)
        assert row is not None, model
        before = {f.attname: getattr(row, f.attname) for f in model._meta.concrete_fields}
        change = url(model, f"{row.pk}/change/")
        assert client.get(url(model, "add/")).status_code == 403, model
        assert client.post(url(model, "add/"), {}).status_code == 403, model
        assert client.post(change, {"state": "completed", "reason": "edited"}).status_code == 403, model
        assert client.get(url(model, f"{row.pk}/delete/")).status_code == 403, model
        assert client.post(url(model, f"{row.pk}/delete/"), {"post": "yes"}).status_code == 403, model
        client.post(url(model), {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"})
        page = client.get(change).content.decode()
        assert client.get(change).status_code == 200 and 'name="_save"' not in page, model
        after = one_row(planted, model)
        assert {f.attname: getattr(after, f.attname) for f in model._meta.concrete_fields} == before, model


def test_changelists_offer_no_bulk_actions(planted, superuser_client):
    for model in owner_models():
        page = superuser_client.get(url(model)).content.decode()
        assert 'name="action"' not in page, model


def test_a_lookup_on_prose_through_a_relation_is_refused(planted, staff_client):
    """Filtering by query string could otherwise be an oracle on statements."""
    dependency = "/admin/reconsolidation/reconsolidationdependency/"
    for probe in ({"memory__statement__icontains": "secret"}, {"memory__subject__startswith": "Q"},
                  {"event__parts__text__contains": "secret"}):
        response = staff_client.get(dependency, probe)
        assert response.status_code == 400, probe


def test_unregistered_prose_tables_have_no_pages(planted, staff_client):
    memory_id = planted[0].memory_ids[0]
    for path in (f"/admin/memory/memory/{memory_id}/change/", "/admin/memory/memory/", "/admin/memory/eventpart/",
                 f"/admin/reconsolidation/derivedmemory/{planted[0].derived_id}/change/", "/admin/memory/principal/",
                 "/admin/memory/ownertoken/", "/admin/memory/person/", "/admin/reconsolidation/reconsolidationblock/"):
        assert staff_client.get(path).status_code == 404, path


def test_the_view_on_site_shortcut_cannot_reach_a_memory(planted, staff_client):
    from django.contrib.contenttypes.models import ContentType

    from memory.models import Memory

    content_type = ContentType.objects.get_for_model(Memory)
    response = staff_client.get(f"/admin/r/{content_type.id}/{planted[0].memory_ids[0]}/")
    assert response.status_code == 404

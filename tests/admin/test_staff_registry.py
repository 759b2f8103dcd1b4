"""What the staff site registers: only tables whose forced RLS carries the read-only
staff policy, never a prose table, and never with a writable or prose-showing admin.
Django's own auth tables are not owner tables: no RLS, and the runtime role may use them."""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from memory.models import (
    ChangeJournal, Event, EventPart, Memory, MemoryRevision, MemorySource, Owner, OwnerToken, Person, Rejection,
    Session, StaffOwnerDirectory, StaffTokenDirectory,
)
from recall.models import ContextSnapshot, MemoryVector
from reconsolidation.models import DerivedMemory, ReconsolidationBlock
from veetbot.admin import ContentFreeAdmin, StaffAdminSite, is_owner_model

PROSE_MODELS = [Owner, OwnerToken, Person, Session, Event, EventPart, Memory, MemorySource, MemoryRevision,
                Rejection, MemoryVector, ContextSnapshot, DerivedMemory, ReconsolidationBlock]
AUTH_TABLES = ["auth_user", "auth_group", "auth_permission", "auth_user_user_permissions", "auth_user_groups",
               "django_session", "django_admin_log", "django_content_type"]


def policies(table: str) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT policyname FROM pg_policies WHERE tablename = %s", [table])
        return {name for (name,) in cursor.fetchall()}


def test_the_default_admin_site_is_the_staff_site():
    assert isinstance(admin.site, StaffAdminSite)


DIRECTORY_VIEWS = [StaffOwnerDirectory, StaffTokenDirectory]


def test_every_registered_owner_table_is_staff_readable_and_forced(db):
    owner_models = [model for model in admin.site._registry if is_owner_model(model) and model not in DIRECTORY_VIEWS]
    assert len(owner_models) == 13
    for model in owner_models:
        table = model._meta.db_table
        assert {"owner_isolation", "staff_read"} <= policies(table), table
        with connection.cursor() as cursor:
            cursor.execute("SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = %s", [table])
            assert cursor.fetchone() == (True, True), table
        assert isinstance(admin.site._registry[model], ContentFreeAdmin), table


def test_no_prose_table_is_registered_and_none_is_staff_readable(db):
    for model in PROSE_MODELS:
        assert model not in admin.site._registry, model
        assert "staff_read" not in policies(model._meta.db_table), model


def test_the_staff_site_refuses_a_writable_admin_for_an_owner_model():
    with pytest.raises(ImproperlyConfigured, match="owner model"):
        StaffAdminSite(name="probe").register(Memory)
    with pytest.raises(ImproperlyConfigured, match="owner model"):
        StaffAdminSite(name="probe").register(ChangeJournal, admin.ModelAdmin)


def test_the_staff_site_refuses_an_admin_that_shows_or_searches_prose():
    class Shows(ContentFreeAdmin):
        list_display = ("id", "statement")

    class Searches(ContentFreeAdmin):
        search_fields = ("=subject",)

    for admin_class in (Shows, Searches):
        with pytest.raises(ImproperlyConfigured, match="must not show or search"):
            StaffAdminSite(name="probe").register(Memory, admin_class)
    StaffAdminSite(name="probe").register(ChangeJournal, ContentFreeAdmin)  # content-free: accepted


def test_auth_tables_have_no_rls_and_the_runtime_role_may_use_them(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
        role, superuser, bypass = cursor.fetchone()
        assert not superuser and not bypass  # these checks run as the runtime role
        for table in AUTH_TABLES:
            cursor.execute("SELECT relrowsecurity FROM pg_class WHERE relname = %s", [table])
            assert cursor.fetchone() == (False,), table
            for privilege in ("SELECT", "INSERT", "UPDATE", "DELETE"):
                cursor.execute("SELECT has_table_privilege(%s, %s, %s)", [role, table, privilege])
                assert cursor.fetchone() == (True,), (table, privilege)


def test_owner_and_token_directories_are_content_free_views_shown_only_to_staff(db):
    from memory.services import owner_create, token_create
    from veetbot.identity import Principal
    from veetbot.rls import owner_context, staff_context

    created = owner_create(display_name="directory secret name")
    owner = Principal(tenant_id=created.tenant_id, principal_id=created.principal_id)
    token_create(principal=owner, label="directory secret label")
    for model in DIRECTORY_VIEWS:
        assert model in admin.site._registry and isinstance(admin.site._registry[model], ContentFreeAdmin)
        columns = {field.column for field in model._meta.fields}
        assert not columns & {"display_name", "label", "token_hash"}, model
    with staff_context():
        assert StaffOwnerDirectory.objects.filter(principal_id=owner.principal_id).count() == 1
        assert StaffTokenDirectory.objects.filter(principal_id=owner.principal_id).count() == 2
    with owner_context(owner):  # the owner's own context is not staff: the views are empty
        assert not StaffOwnerDirectory.objects.exists() and not StaffTokenDirectory.objects.exists()
    assert not StaffOwnerDirectory.objects.exists()  # no context at all

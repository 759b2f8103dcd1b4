"""The staff admin site: content-free, read-only operational pages.

Staff never act as an owner, so every admin view runs inside ``staff_context()``: a
transaction in which only tables carrying the read-only ``staff_read`` policy show rows
(jobs, groups, receipts, operation metadata, dependencies, members, spend, audit, the
change journal, owner allocators and fences, recall traces). Tables holding prose
(statements, subjects, excerpts, event parts, person names, derived clauses) have no such
policy, so even a mistakenly registered admin for them would list nothing. The template
response is rendered inside the same context because changelists evaluate their
querysets while rendering, after the view has returned.

This module must never open an owner context, register an owner model with a
ModelAdmin that can write, or offer search over anything but opaque identifiers.
"""
from __future__ import annotations

from functools import wraps

from django.contrib import admin
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import models

from veetbot.rls import staff_context


def is_owner_model(model) -> bool:
    """Owner rows carry both owner columns (and forced RLS in their migration)."""
    names = {field.name for field in model._meta.get_fields()}
    return {"tenant_id", "principal_id"} <= names


def prose_fields(model, admin_class) -> list[str]:
    """Free-text columns an admin would show or search. The long prose of this schema
    (statements, subjects, event part text, person names, derived subjects) is held in
    TextFields, and no content-free table has one. Shorter owner-chosen strings (display
    names, scope names, token labels) sit in tables without the staff policy: there, row-
    level security is what keeps them out, not this check."""
    named = [*(admin_class.fields or ()), *admin_class.list_display, *admin_class.search_fields,
             *admin_class.list_filter]
    found = []
    for name in named:
        if not isinstance(name, str):
            continue
        try:
            field = model._meta.get_field(name.lstrip("^=@").split("__")[0])
        except FieldDoesNotExist:
            continue
        if isinstance(field, models.TextField):
            found.append(field.name)
    return found


class ContentFreeAdmin(admin.ModelAdmin):
    """Read-only changelist and detail pages over opaque IDs, states, counts and instants.

    Staff must not write owner data: writes go through the services, which check the
    owner, the revision and the idempotency key. So nothing here can add, change, delete
    or run bulk actions, even for a superuser; viewing needs Django's view permission.
    Search looks up exact identifiers only (cast to text, so a malformed UUID matches
    nothing instead of raising).
    """

    actions = None
    show_facets = admin.ShowFacets.NEVER  # counts per filter value add nothing here
    search_fields = ("id__exact", "tenant_id__exact", "principal_id__exact")
    search_help_text = "Exact row, tenant or principal ID."

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)


class StaffAdminSite(admin.AdminSite):
    """The default admin site (see ``veetbot.admin_apps``), wrapped in the staff context."""

    site_header = "Veetbot staff (content-free)"
    site_title = "Veetbot staff"
    index_title = "Operational data"

    def admin_view(self, view, cacheable=False):
        @wraps(view)
        def in_staff_context(request, *args, **kwargs):
            with staff_context():
                response = view(request, *args, **kwargs)
                if not getattr(response, "is_rendered", True):
                    response.render()
            return response

        return super().admin_view(in_staff_context, cacheable)

    def register(self, model_or_iterable, admin_class=None, **options):
        models = [model_or_iterable] if isinstance(model_or_iterable, type) else list(model_or_iterable)
        for model in models:
            if is_owner_model(model) and not (admin_class and issubclass(admin_class, ContentFreeAdmin)):
                raise ImproperlyConfigured(
                    f"{model._meta.label} is an owner model: register it with a ContentFreeAdmin "
                    "(read-only, content-free fields) or not at all"
                )
            if is_owner_model(model) and (prose := prose_fields(model, admin_class)):
                raise ImproperlyConfigured(f"{model._meta.label}: staff pages must not show or search {prose}")
        super().register(model_or_iterable, admin_class, **options)

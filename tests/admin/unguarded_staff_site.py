"""The staff site with its registration guard bypassed: ``Memory`` registered with its
statement and subject. Used to show that the staff context, not the guard, is what
keeps prose out (``pytest.mark.urls("tests.admin.unguarded_staff_site")``)."""
from django.contrib import admin
from django.urls import path

from memory.models import Memory
from veetbot.admin import StaffAdminSite


class MemoryAdmin(admin.ModelAdmin):
    list_display = ("id", "subject", "statement")
    search_fields = ("statement",)


site = StaffAdminSite(name="admin")
admin.AdminSite.register(site, Memory, MemoryAdmin)  # skips StaffAdminSite.register's guard
urlpatterns = [path("admin/", site.urls)]

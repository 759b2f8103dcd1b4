"""A deliberately leaky admin, only for proving that the crawl can fail.

It does what the staff site must never do: registers ``Memory`` with its statement and
subject, and runs every view inside an *owner* context (``OWNER`` is set by the test).
Mounted with ``pytest.mark.urls("tests.admin.leaky_site")``.
"""
from django.contrib import admin
from django.urls import path

from memory.models import Memory
from veetbot.rls import owner_context

OWNER = None


class LeakySite(admin.AdminSite):
    def admin_view(self, view, cacheable=False):
        def as_owner(request, *args, **kwargs):
            with owner_context(OWNER):
                response = view(request, *args, **kwargs)
                if not getattr(response, "is_rendered", True):
                    response.render()
            return response

        return super().admin_view(as_owner, cacheable)


class MemoryAdmin(admin.ModelAdmin):
    list_display = ("id", "subject", "statement")


site = LeakySite(name="admin")
site.register(Memory, MemoryAdmin)
urlpatterns = [path("admin/", site.urls)]

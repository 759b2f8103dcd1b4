"""URL map. API routes check their feature flag per request, so the flag can change
without re-importing URLs and a disabled surface answers not_found like an unknown route."""
from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("v1/", include("memory.api.urls")),
    path("admin/", admin.site.urls),
]

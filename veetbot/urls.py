"""URL map. API routes check their feature flag per request, so the flag can change
without re-importing URLs and a disabled surface answers not_found like an unknown route.

Order matters under /v1/: recall's ``memories/search`` before memory's
``memories/<id>``, and the enveloped catch-all for unknown routes last.
"""
from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from memory.api.urls import unknown_routes
from veetbot.mcp_server.transport import McpView

urlpatterns = [
    path("v1/", include("recall.api.urls")),
    path("v1/", include("memory.api.urls")),
    path("v1/", include("reconsolidation.api.urls")),
    path("v1/mcp", McpView.as_view(), name="mcp"),  # the same operations as MCP tools (veetbot.mcp_server)
    path("v1/", include(unknown_routes)),  # keep last among the /v1 includes
    path("admin/", admin.site.urls),
    path("review/", include("review_ui.urls")),  # the owner's review dashboard (cookie sign-in)
    path("", RedirectView.as_view(pattern_name="review:journal"), name="home"),  # / leads to the dashboard
    path("favicon.ico", RedirectView.as_view(url="/review/assets/favicon.svg", permanent=True)),
]

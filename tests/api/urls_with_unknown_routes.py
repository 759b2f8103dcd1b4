"""The project URL map plus the /v1 catch-all, mounted the way veetbot.urls should mount it."""
from django.urls import include, path

from memory.api.urls import unknown_routes
from veetbot.urls import urlpatterns as project_urlpatterns

urlpatterns = [*project_urlpatterns, path("v1/", include(unknown_routes))]

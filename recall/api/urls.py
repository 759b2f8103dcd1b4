"""Routes of the recall API, mounted under /v1/ by veetbot.urls *before* memory's routes:
``memories/<memory_id>`` would otherwise take ``memories/search``."""
from django.urls import path

from recall.api import views

urlpatterns = [
    path("memories/search", views.MemorySearchView.as_view(), name="memories-search"),
    path("memories/context", views.MemoryContextView.as_view(), name="memories-context"),
]

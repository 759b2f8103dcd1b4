"""Routes of the recall API, mounted under /v1/ by veetbot.urls *before* memory's routes:
``memories/<memory_id>`` would otherwise take ``memories/search``. The conversation routes under
``sessions/<session_id>/`` (turns, snapshot, citations) are recall.snapshots'."""
from django.urls import path

from recall.api import snapshots, views

urlpatterns = [
    path("memories/search", views.MemorySearchView.as_view(), name="memories-search"),
    path("memories/context", views.MemoryContextView.as_view(), name="memories-context"),
    path("sessions/<str:session_id>/turns", snapshots.SessionTurnsView.as_view(), name="session-turns"),
    path("sessions/<str:session_id>/snapshot", snapshots.SessionSnapshotView.as_view(), name="session-snapshot"),
    path("sessions/<str:session_id>/turns/<str:turn>/citations", snapshots.TurnCitationsView.as_view(),
         name="session-turn-citations"),
]

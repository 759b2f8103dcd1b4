"""Routes of the owner API, mounted under /v1/ by veetbot.urls.

Path IDs are matched as plain segments and parsed in the views, so a malformed ID is a
not_found in the envelope rather than Django's own 404 page.

``unknown_routes`` is a catch-all for veetbot.urls to mount under /v1/ *after* every
other /v1 include, so unknown /v1 paths also answer not_found in the envelope with
no-store. It is kept out of ``urlpatterns`` because a catch-all here would shadow the
routes of apps included after this one.
"""
from django.urls import path, re_path

from memory.api import views

urlpatterns = [
    path("memories", views.MemoryCollectionView.as_view(), name="memories"),
    path("memories/<str:memory_id>", views.MemoryDetailView.as_view(), name="memory-detail"),
    path("memories/<str:memory_id>/review", views.MemoryReviewView.as_view(), name="memory-review"),
    path("sessions", views.SessionCollectionView.as_view(), name="sessions"),
    path("sessions/<str:session_id>", views.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<str:session_id>/events", views.SessionEventsView.as_view(), name="session-events"),
    path("people/<str:person_id>", views.PersonDetailView.as_view(), name="person-detail"),
    path("account/erase", views.AccountEraseView.as_view(), name="account-erase"),
    path("schema", views.SchemaView.as_view(), name="schema"),
]

unknown_routes = [re_path(r"", views.UnknownRouteView.as_view(), name="v1-unknown")]

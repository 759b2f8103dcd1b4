"""Routes of the review dashboard, mounted under /review/. IDs are the only variable
parts of a URL: no statement, subject or search text ever appears in one."""
from django.urls import path

from review_ui import memory_views, views

app_name = "review"

urlpatterns = [
    path("", views.journal, name="journal"),
    path("journal/subject", views.journal_subject, name="journal-subject"),
    path("journal/bulk/preview", views.bulk_preview, name="bulk-preview"),
    path("journal/bulk/apply", views.bulk_apply, name="bulk-apply"),
    path("journal/bulk/exact-copies", views.bulk_exact, name="bulk-exact"),
    path("ask", views.ask, name="ask"),
    path("memories", memory_views.browse, name="memories"),
    path("memories/<uuid:memory_id>", memory_views.original_page, name="original"),
    path("memories/<uuid:memory_id>/<str:action>", memory_views.original_action, name="original-action"),
    path("conversations/<uuid:session_id>/erase", memory_views.erase_session, name="erase-session"),
    path("account/erase", memory_views.erase_account, name="erase-account"),
    path("dreaming", memory_views.dreaming, name="dreaming"),
    path("sign-in", views.sign_in, name="sign-in"),
    path("sign-out", views.sign_out, name="sign-out"),
    path("assets/<str:name>", views.asset, name="asset"),
    path("operations/<uuid:operation_id>", views.detail, name="detail"),
    path("operations/<uuid:operation_id>/undo-preview", views.undo_preview, name="undo-preview"),
    path("operations/<uuid:operation_id>/derived/<str:action>", views.derived_action, name="derived-action"),
    path("operations/<uuid:operation_id>/<str:action>", views.operation_action, name="operation-action"),
    path("sources/<uuid:memory_id>", views.source, name="source"),
]

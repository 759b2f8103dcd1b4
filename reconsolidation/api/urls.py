"""Routes of the operation journal, mounted under /v1/ by veetbot.urls (before the
unknown-routes catch-all). Path IDs are plain segments parsed in the views, so a
malformed ID is not_found in the envelope."""
from django.urls import path

from reconsolidation.api import views

urlpatterns = [
    path("memory-reconsolidations", views.OperationCollectionView.as_view(), name="memory-reconsolidations"),
    # Before the detail route, which would otherwise take the name as an ID.
    path("memory-reconsolidations/approve-exact-copies", views.ExactCopiesApproveView.as_view(),
         name="memory-reconsolidations-approve-exact-copies"),
    path("memory-reconsolidations/<str:operation_id>", views.OperationDetailView.as_view(),
         name="memory-reconsolidation-detail"),
    path("memory-reconsolidations/<str:operation_id>/undo", views.OperationUndoView.as_view(),
         name="memory-reconsolidation-undo"),
    path("memory-reconsolidations/<str:operation_id>/approve", views.OperationApproveView.as_view(),
         name="memory-reconsolidation-approve"),
    path("memory-reconsolidations/<str:operation_id>/reject", views.OperationRejectView.as_view(),
         name="memory-reconsolidation-reject"),
]

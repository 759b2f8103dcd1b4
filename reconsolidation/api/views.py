"""HTTP views of the operation journal under /v1/memory-reconsolidations.

Thin: parse (``memory.api.parsing``, the strict ``inputs``), call one selector or service
(``selectors.operation_views`` for reads, ``services.operations.operation_act`` for actions), render with
``serializers``. The surface answers not_found unless both AGENT_MEMORY_API_ENABLED and
AGENT_MEMORY_RECONSOLIDATION_API_ENABLED are on (read per request, before
authentication), but never looks at the processing switch: history, detail, review and
undo keep working with processing off. Every response is ``private, no-store``.

Malformed filters, bodies, cursors and keys are ``validation_error`` with *empty*
details (spec: the operation routes never describe what was wrong with a request), so
every parse failure is re-raised without its details here.

``approve-exact-copies`` approves several exact-copy merges in one request
(``services.exact_copies``), answering each item; an unknown or foreign ID is an item's
not_found, not an error.

An action replayed with the same Idempotency-Key answers ``Idempotency-Replayed: true``,
like every other write (the service says whether it replayed).
"""
from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema

from memory import errors as memory_errors
from memory.api import parsing, schema
from memory.api.views import OwnerApiView
from reconsolidation import bounds
from reconsolidation.api import inputs
from reconsolidation.api.serializers import (
    ExactApprovalsSerializer, OperationPageSerializer, OperationSerializer, render_exact_approvals, render_operation,
    render_page,
)
from reconsolidation.domain import OPERATION_KINDS, OPERATION_STATES
from reconsolidation.selectors import operation_views
from reconsolidation.selectors.operations import MAX_CURSOR_CHARS
from reconsolidation.services.exact_copies import operations_approve_exact
from reconsolidation.services.operations import operation_act
from rest_framework import exceptions
from rest_framework.response import Response
from veetbot import api_errors
from veetbot.identity import SCOPE_READ, SCOPE_WRITE, Principal

TAG = "memory-reconsolidations"


def require_operation_surface() -> None:
    """The operation surface exists only while AGENT_MEMORY_RECONSOLIDATION_API_ENABLED is on
    (read per request); otherwise not_found, like an unknown route. Shared with the MCP
    ``journal`` tool."""
    if not settings.AGENT_MEMORY_RECONSOLIDATION_API_ENABLED:
        raise api_errors.NotFound()


def without_details(exc: Exception) -> Exception:
    """The operation routes never describe what was wrong with a request: any parse or
    validation failure becomes a validation_error with empty details. Shared with MCP."""
    if isinstance(exc, (api_errors.ValidationFailed, memory_errors.Invalid, exceptions.ParseError,
                        exceptions.ValidationError)):
        return api_errors.ValidationFailed([])
    return exc


class OperationApiView(OwnerApiView):
    http_method_names = ["get", "post", "head"]

    def initial(self, request, *args, **kwargs):
        require_operation_surface()
        super().initial(request, *args, **kwargs)

    def handle_exception(self, exc):
        return super().handle_exception(without_details(exc))


ID = schema.path_id("operation_id", "operation")
LIST_QUERY = {
    "ceiling": parsing.CEILING,
    "kind": parsing.Param(parsing.choice(OPERATION_KINDS)),
    "state": parsing.Param(parsing.choice(OPERATION_STATES)),
    "limit": parsing.Param(parsing.bounded_int(1, bounds.RECON_OPERATIONS_PAGE_MAX),
                           default=bounds.RECON_OPERATIONS_PAGE_DEFAULT, description="Page size."),
    # The shape here; the signature and binding in reconsolidation.selectors.operations.
    "cursor": parsing.Param(parsing.signed_token(MAX_CURSOR_CHARS), description=(
        "next_cursor of the previous page, exactly; valid only with the same owner, kind, state and ceiling "
        "(otherwise validation_error).")),
}


class OperationCollectionView(OperationApiView):
    required_scopes = {"GET": SCOPE_READ}

    @extend_schema(
        operation_id="memory_reconsolidations_list", tags=[TAG],
        summary="Operation history, newest (created_at, id) first, in cursor pages.",
        description=(
            "Operations whose complete support is not visible under the ceiling are omitted (below restricted); "
            "under restricted they appear as opaque metadata with null content. The state filter applies after "
            "read-time revalidation, so elapsed expiry lists as invalidated."),
        parameters=schema.query_parameters(LIST_QUERY),
        responses={200: OperationPageSerializer, **schema.READ_ERRORS},
    )
    def get(self, request):
        return Response(journal_requested(principal=self.principal, query=parsing.query(request, LIST_QUERY)))


def journal_requested(*, principal: Principal, query: dict) -> dict:
    """A rendered page of the operation journal for parsed ``LIST_QUERY`` values: what GET
    /v1/memory-reconsolidations does after parsing, shared with the MCP ``journal`` tool."""
    page = operation_views.operation_page(principal=principal, ceiling=query["ceiling"], cursor=query["cursor"],
                                          limit=query["limit"], kind=query["kind"], state=query["state"])
    return render_page(page)


class OperationDetailView(OperationApiView):
    required_scopes = {"GET": SCOPE_READ}

    @extend_schema(
        operation_id="memory_reconsolidations_retrieve", tags=[TAG],
        summary="One operation: the allowlisted view, content and source links only with complete visible support.",
        parameters=[ID, *schema.query_parameters(parsing.CEILING_ONLY)],
        responses={200: OperationSerializer, **schema.READ_ERRORS},
    )
    def get(self, request, operation_id: str):
        operation_id = parsing.path_id(operation_id)
        q = parsing.query(request, parsing.CEILING_ONLY)
        return Response(render_operation(operation_views.operation_detail(principal=self.principal, operation_id=operation_id,
                                                                  ceiling=q["ceiling"])))


def _action_schema(name: str, summary: str):
    return extend_schema(
        operation_id=f"memory_reconsolidations_{name}", tags=[TAG], summary=summary,
        parameters=[ID, *schema.query_parameters(parsing.CEILING_ONLY), schema.IDEMPOTENCY_KEY, schema.replayed(200)],
        request=inputs.OperationAction,
        responses={200: OperationSerializer, **schema.WRITE_ERRORS},
    )


class OperationActionView(OperationApiView):
    """POST {expected_revision} with an Idempotency-Key; answers the operation view."""

    required_scopes = {"POST": SCOPE_WRITE}
    action = "undo"  # a key of reconsolidation.services.operations.ACTIONS

    def post(self, request, operation_id: str):
        operation_id = parsing.path_id(operation_id)
        q = parsing.query(request, parsing.CEILING_ONLY)
        key = parsing.idempotency_key(request)
        body, _ = parsing.body(request, inputs.OperationAction)
        # Existence under this ceiling first: above-ceiling is not_found, never acted on.
        operation_views.operation_detail(principal=self.principal, operation_id=operation_id, ceiling=q["ceiling"])
        acted = operation_act(principal=self.principal, action=self.action, operation_id=operation_id,
                              expected_revision=body.expected_revision, idempotency_key=key)
        response = Response(render_operation(operation_views.operation_detail(
            principal=self.principal, operation_id=acted.operation.id, ceiling=q["ceiling"])))
        if acted.replayed:
            response["Idempotency-Replayed"] = "true"
        return response


class OperationUndoView(OperationActionView):
    action = "undo"

    @_action_schema("undo", "Undo a committed merge: end duplicate suppression and block the same merge recurring.")
    def post(self, request, operation_id: str):
        return super().post(request, operation_id)


class OperationApproveView(OperationActionView):
    action = "approve"

    @_action_schema("approve", "Approve a proposed operation at its current revision (reviewed mode).")
    def post(self, request, operation_id: str):
        return super().post(request, operation_id)


class OperationRejectView(OperationActionView):
    action = "reject"

    @_action_schema("reject", "Reject a proposed operation and block it recurring (reviewed mode).")
    def post(self, request, operation_id: str):
        return super().post(request, operation_id)


class ExactCopiesApproveView(OperationApiView):
    """POST {"operations": [{id, revision}, ...]} with an Idempotency-Key: approve the pending
    exact-copy merges among them (``services.exact_copies``); one answer per item."""

    required_scopes = {"POST": SCOPE_WRITE}

    @extend_schema(
        operation_id="memory_reconsolidations_approve_exact_copies", tags=[TAG],
        summary="Approve several exact-copy merges at once, each at the revision the owner saw.",
        description=(
            "Only pending merges recorded for the local equivalence key whose members still match word for "
            "word are approved, each by the ordinary revision-checked approval; anything else is answered in "
            "its item and left alone. Unknown, foreign and above-ceiling IDs are not_found items, not errors. "
            "The same key with the same body replays (approved items answer replayed); with another body it "
            "is a conflict."),
        parameters=[*schema.query_parameters(parsing.CEILING_ONLY), schema.IDEMPOTENCY_KEY],
        request=inputs.ApproveExactCopies,
        responses={200: ExactApprovalsSerializer, **schema.WRITE_ERRORS},
    )
    def post(self, request):
        q = parsing.query(request, parsing.CEILING_ONLY)
        key = parsing.idempotency_key(request)
        body, _ = parsing.body(request, inputs.ApproveExactCopies)
        answers = operations_approve_exact(principal=self.principal, ceiling=q["ceiling"], idempotency_key=key,
                                           expected={item.id: item.revision for item in body.operations})
        return Response(render_exact_approvals(answers))

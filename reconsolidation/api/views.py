"""HTTP views of the operation journal under /v1/memory-reconsolidations.

Thin: parse (``memory.api.parsing``, the strict ``inputs``), call one owner service
(``journal`` for reads, ``undo`` / ``review`` for actions), render with
``serializers``. The surface answers not_found unless both AGENT_MEMORY_API_ENABLED and
AGENT_MEMORY_RECONSOLIDATION_API_ENABLED are on (read per request, before
authentication), but never looks at the processing switch: history, detail, review and
undo keep working with processing off. Every response is ``private, no-store``.

Malformed filters, bodies, cursors and keys are ``validation_error`` with *empty*
details (spec: the operation routes never describe what was wrong with a request), so
every parse failure is re-raised without its details here.

An action replayed with the same Idempotency-Key answers ``Idempotency-Replayed: true``,
like every other write. The services replay silently, so the view asks the receipts
first — under the owner lock the service takes next, in the same transaction, so the
answer is the one the service acts on even when identical requests race.
"""
from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema

from memory import errors as memory_errors
from memory.api import parsing, schema
from memory.api.views import OwnerApiView
from memory.services.owner_state import lock_owner
from reconsolidation import bounds
from reconsolidation.api import inputs
from reconsolidation.api.serializers import OperationPageSerializer, OperationSerializer, render_operation, render_page
from reconsolidation.models import OPERATION_KINDS, OPERATION_STATES
from reconsolidation.owner import journal, reads, receipts, review, undo
from rest_framework import exceptions
from rest_framework.response import Response
from veetbot import api_errors
from veetbot.identity import SCOPE_READ, SCOPE_WRITE
from veetbot.rls import owner_context

TAG = "memory-reconsolidations"


class OperationApiView(OwnerApiView):
    http_method_names = ["get", "post", "head"]

    def initial(self, request, *args, **kwargs):
        if not settings.AGENT_MEMORY_RECONSOLIDATION_API_ENABLED:
            raise api_errors.NotFound()
        super().initial(request, *args, **kwargs)

    def handle_exception(self, exc):
        if isinstance(exc, (api_errors.ValidationFailed, memory_errors.Invalid, exceptions.ParseError,
                            exceptions.ValidationError)):
            exc = api_errors.ValidationFailed([])
        return super().handle_exception(exc)


ID = schema.path_id("operation_id", "operation")
LIST_QUERY = {
    "ceiling": parsing.CEILING,
    "kind": parsing.Param(parsing.choice(OPERATION_KINDS)),
    "state": parsing.Param(parsing.choice(OPERATION_STATES)),
    "limit": parsing.Param(parsing.bounded_int(1, bounds.RECON_OPERATIONS_PAGE_MAX),
                           default=bounds.RECON_OPERATIONS_PAGE_DEFAULT, description="Page size."),
    # The shape here; the signature and binding in reconsolidation.owner.reads.
    "cursor": parsing.Param(parsing.signed_token(reads.MAX_CURSOR_CHARS), description=(
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
        q = parsing.query(request, LIST_QUERY)
        page = journal.operation_page(self.principal, ceiling=q["ceiling"], cursor=q["cursor"],
                                          limit=q["limit"], kind=q["kind"], state=q["state"])
        return Response(render_page(page))


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
        return Response(render_operation(journal.operation_detail(self.principal, operation_id,
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
    service = staticmethod(undo.undo)
    # The action name the service digests its requests under (``receipts.request_digest``).
    action = "undo"

    def post(self, request, operation_id: str):
        operation_id = parsing.path_id(operation_id)
        q = parsing.query(request, parsing.CEILING_ONLY)
        key = parsing.idempotency_key(request)
        body, _ = parsing.body(request, inputs.OperationAction)
        # Existence under this ceiling first: above-ceiling is not_found, never acted on.
        journal.operation_detail(self.principal, operation_id, ceiling=q["ceiling"])
        with owner_context(self.principal):
            lock_owner(self.principal)
            digest = receipts.request_digest(self.action, operation_id, body.expected_revision)
            replayed = receipts.replayed(key, digest) is not None
            view = type(self).service(self.principal, operation_id, expected_revision=body.expected_revision,
                                     idempotency_key=key)
        response = Response(render_operation(journal.operation_result(self.principal, view,
                                                                          ceiling=q["ceiling"])))
        if replayed:
            response["Idempotency-Replayed"] = "true"
        return response


class OperationUndoView(OperationActionView):
    service = staticmethod(undo.undo)
    action = "undo"

    @_action_schema("undo", "Undo a committed merge: end duplicate suppression and block the same merge recurring.")
    def post(self, request, operation_id: str):
        return super().post(request, operation_id)


class OperationApproveView(OperationActionView):
    service = staticmethod(review.approve)
    action = "approved"

    @_action_schema("approve", "Approve a proposed operation at its current revision (reviewed mode).")
    def post(self, request, operation_id: str):
        return super().post(request, operation_id)


class OperationRejectView(OperationActionView):
    service = staticmethod(review.reject)
    action = "rejected"

    @_action_schema("reject", "Reject a proposed operation and block it recurring (reviewed mode).")
    def post(self, request, operation_id: str):
        return super().post(request, operation_id)

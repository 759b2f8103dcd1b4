"""HTTP views of the owner API under /v1.

Each view is thin: parse (``memory.api.parsing`` / ``inputs``), call one selector or
service, render with an output serializer. Every write goes through
``memory.services.receipts.idempotent_write`` so its Idempotency-Key receipt commits with
it. Views never touch the ORM, never log or echo a token, and never name an owner other
than the authenticated one.

The whole surface answers not_found while ``AGENT_MEMORY_API_ENABLED`` is off (checked
per request, before authentication), and every response — errors included — is
``Cache-Control: private, no-store``.
"""
from __future__ import annotations

from typing import Any, Optional

from django.conf import settings
from drf_spectacular.renderers import OpenApiJsonRenderer
from drf_spectacular.utils import OpenApiResponse, extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from memory import selectors, services, vocabulary
from memory.api import cursors, derived_hook, inputs, parsing, schema
from memory.api.serializers import (
    MEMORY_OR_DERIVED, DerivedMemorySerializer, ErasureReceiptSerializer, EventSerializer, MemoryPageSerializer,
    MemorySerializer, SessionSerializer,
)
from memory.services import ceilings, erasure, receipts
from veetbot import api_errors
from veetbot.clock import utcnow
from veetbot.identity import SCOPE_READ, SCOPE_WRITE, Principal
from veetbot.rls import owner_context

# "all" lists every live status; erased beliefs ("deleted") do not exist for readers.
LIST_STATUSES = ("active", "retracted", "expired", "all")
DEFAULT_LIST_STATUS = "active"
# Derived rows are only ever currently valid and active: they join active and all pages.
DERIVED_LIST_STATUSES = ("active", "all")
DERIVED_NOTE = (" A derived ID (summary or hypothesis) answers the DerivedMemory shape through the governed "
                "derived service while AGENT_MEMORY_RECONSOLIDATION_API_ENABLED is on; otherwise not_found.")


def _derived_surface(principal: Principal, memory_id) -> "derived_hook.DerivedSurface | None":
    """The derived surface when ``memory_id`` names a derived memory and it is enabled."""
    surface = derived_hook.available()
    if surface is not None and surface.is_derived(principal, memory_id):
        return surface
    return None


class ApiSurface:
    """The behaviour every /v1 view shares: the feature flag and no-store caching."""

    def initial(self, request, *args, **kwargs):
        if not settings.AGENT_MEMORY_API_ENABLED:
            raise api_errors.NotFound()
        super().initial(request, *args, **kwargs)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Cache-Control"] = api_errors.NO_STORE
        return response


class OwnerApiView(ApiSurface, APIView):
    http_method_names = ["get", "post", "delete", "head"]
    required_scopes: dict[str, Any] = {}

    @property
    def principal(self) -> Principal:
        return self.request.user.principal


# The query strings of these routes: what the views parse and what the document says.
LIST_QUERY = {
    "ceiling": parsing.CEILING,
    "status": parsing.Param(parsing.choice(LIST_STATUSES), default=DEFAULT_LIST_STATUS,
                            description="all = every status except erased."),
    "belief_type": parsing.Param(parsing.choice(vocabulary.BELIEF_TYPES)),
    "scope": parsing.Param(parsing.matching(vocabulary.SCOPE)),
    "limit": parsing.Param(parsing.bounded_int(1, settings.MEMORY_PAGE_MAX_ITEMS),
                           default=settings.MEMORY_PAGE_DEFAULT_ITEMS, description="Page size."),
    # The shape here; the signature and binding in cursors.decode (both "invalid").
    "cursor": parsing.Param(parsing.signed_token(cursors.MAX_CURSOR_CHARS), description=(
        "next_cursor of the previous page, exactly; valid only with the same owner, filters and ceiling "
        "(otherwise validation_error).")),
    "include_derived": parsing.Param(parsing.choice(("true", "false")), default="false", description=(
        "true merges currently valid active summaries and hypotheses (record_kind, operation_id) into "
        "active/all pages by store position then ID; validation_error while the reconsolidation API is "
        "off. Absent or false: exactly the originals, as before.")),
}


def _respond(outcome: receipts.Outcome, serializer) -> Response:
    data = None if outcome.value is None else serializer(outcome.value).data
    response = Response(data, status=outcome.status_code)
    if outcome.replayed:
        response["Idempotency-Replayed"] = "true"
    return response


class MemoryCollectionView(OwnerApiView):
    required_scopes = {"GET": SCOPE_READ, "POST": SCOPE_WRITE}

    @extend_schema(
        operation_id="memories_list", tags=["memories"],
        summary="List memories, newest store position first, in cursor pages.",
        parameters=schema.query_parameters(LIST_QUERY),
        responses={200: MemoryPageSerializer, **schema.READ_ERRORS},
    )
    def get(self, request):
        q = parsing.query(request, LIST_QUERY)
        filters = {"status": q["status"], "belief_type": q["belief_type"], "scope": q["scope"]}
        surface = None
        if q["include_derived"] == "true":
            surface = derived_hook.available()
            if surface is None:
                raise api_errors.ValidationFailed([api_errors.problem("include_derived", "unavailable")])
            filters["include_derived"] = True  # only then: ordinary cursors stay byte-identical
        bound_to = cursors.fingerprint(principal=self.principal, ceiling=q["ceiling"], filters=filters)
        after = cursors.decode(q["cursor"], bound_to=bound_to) if q["cursor"] is not None else None
        with owner_context(self.principal):
            rows = selectors.memory_page(
                ceiling=q["ceiling"], limit=q["limit"] + 1, after=after,
                status=None if q["status"] == "all" else q["status"],
                belief_type=q["belief_type"], scope=q["scope"],
            )
            positioned = [(row.store_position, row) for row in rows]
            if surface is not None and q["status"] in DERIVED_LIST_STATUSES:
                positioned += surface.browse(self.principal, ceiling=q["ceiling"], limit=q["limit"] + 1, after=after,
                                             belief_type=q["belief_type"], scope=q["scope"])
                positioned.sort(key=lambda item: (-item[0], item[1].id))
        page = positioned[: q["limit"]]
        next_cursor = (
            cursors.encode(store_position=page[-1][0], memory_id=page[-1][1].id, bound_to=bound_to)
            if len(positioned) > q["limit"] else None
        )
        return Response(MemoryPageSerializer({"items": [value for _, value in page], "next_cursor": next_cursor}).data)

    @extend_schema(
        operation_id="memories_create", tags=["memories"],
        summary="Remember something the owner said: an explicit USER memory citing the owner's own message.",
        parameters=[schema.IDEMPOTENCY_KEY, schema.replayed(201)],
        request=inputs.MemoryCreate,
        responses={201: MemorySerializer, **schema.WRITE_ERRORS},
    )
    def post(self, request):
        parsing.query(request, {})
        key = parsing.idempotency_key(request)
        body, data = parsing.body(request, inputs.MemoryCreate)
        outcome = memory_create_requested(principal=self.principal, key=key, body=body, data=data, now=utcnow())
        return _respond(outcome, MemorySerializer)


def memory_create_requested(*, principal: Principal, key: str, body: inputs.MemoryCreate, data: dict,
                            now) -> receipts.Outcome:
    """Remember, once per key: what POST /v1/memories does after parsing. Shared with the
    MCP ``remember`` tool so both surfaces write, key and replay by one rule (one receipt
    namespace: the same key and body replays across them)."""
    def write() -> receipts.Written:
        # The draft is built only for a first run: a replay must not re-judge defaults
        # ("now") against a later clock.
        draft = body.to_draft(now)
        created = services.memory_create(principal=principal, draft=draft, now=now, owner_evidence_only=True)
        return receipts.written(201, "memory", created)

    return receipts.idempotent_write(
        principal=principal, key=key, now=now, write=write,
        request_sha256=receipts.request_sha256(route="memories.create", params={}, body=data),
    )


class MemoryDetailView(OwnerApiView):
    required_scopes = {"GET": SCOPE_READ, "DELETE": SCOPE_WRITE}

    @extend_schema(
        operation_id="memories_retrieve", tags=["memories"], summary="One memory, if visible under the ceiling.",
        description=DERIVED_NOTE.strip(),
        parameters=[schema.path_id("memory_id", "memory"), *schema.query_parameters(parsing.CEILING_ONLY)],
        responses={200: MEMORY_OR_DERIVED, **schema.READ_ERRORS},
    )
    def get(self, request, memory_id: str):
        memory_id = parsing.path_id(memory_id)
        q = parsing.query(request, parsing.CEILING_ONLY)
        if (surface := _derived_surface(self.principal, memory_id)) is not None:
            return Response(DerivedMemorySerializer(surface.get(self.principal, memory_id, ceiling=q["ceiling"])).data)
        with owner_context(self.principal):
            memory = selectors.memory_get(memory_id=memory_id, ceiling=q["ceiling"])
        return Response(MemorySerializer(memory).data)

    @extend_schema(
        operation_id="memories_erase", tags=["memories"],
        summary="Erase a memory (its text is removed for good; the cited messages stay).",
        description="Answers 204 with no body; a replay with the same Idempotency-Key answers 204 again." + DERIVED_NOTE,
        parameters=[schema.path_id("memory_id", "memory"), *schema.query_parameters(parsing.CEILING_ONLY),
                    schema.IDEMPOTENCY_KEY, schema.replayed(204)],
        request=None,
        responses={204: OpenApiResponse(description="Erased."), **schema.WRITE_ERRORS},
    )
    def delete(self, request, memory_id: str):
        memory_id = parsing.path_id(memory_id)
        q = parsing.query(request, parsing.CEILING_ONLY)
        key = parsing.idempotency_key(request)
        parsing.no_body(request)
        outcome = memory_erase_requested(principal=self.principal, memory_id=memory_id, ceiling=q["ceiling"],
                                         key=key, now=utcnow())
        return _respond(outcome, MemorySerializer)


def memory_erase_requested(*, principal: Principal, memory_id, ceiling: str, key: str, now) -> receipts.Outcome:
    """Erase (forget) an original or derived memory, once per key: what DELETE
    /v1/memories/{id} does after parsing, shared with the MCP ``forget`` tool. A derived
    memory's control replays by its own receipt, so its outcome never says replayed."""
    request_sha256 = receipts.request_sha256(
        route="memories.erase", params={"memory_id": str(memory_id), "ceiling": ceiling}, body=None,
    )
    if (surface := _derived_surface(principal, memory_id)) is not None:
        surface.delete(principal, memory_id, ceiling=ceiling, idempotency_key=key, request_sha256=request_sha256)
        return receipts.Outcome(status_code=204, value=None, replayed=False)

    def write() -> receipts.Written:
        ceilings.memory_erase_within_ceiling(principal=principal, memory_id=memory_id, ceiling=ceiling, now=now)
        return receipts.Written(status_code=204, resource_kind="memory", resource_id=memory_id)

    return receipts.idempotent_write(principal=principal, key=key, now=now, write=write, request_sha256=request_sha256)


class MemoryReviewView(OwnerApiView):
    # Review answers with the memory's content, so it needs read as well as write.
    required_scopes = {"POST": (SCOPE_READ, SCOPE_WRITE)}

    @extend_schema(
        operation_id="memories_review", tags=["memories"],
        summary="Owner review: mark_reviewed, not_true (retract and block the claim), "
                "not_here (stop it crossing scopes), dismiss.",
        description=DERIVED_NOTE.strip() + " On a derived memory not_true retires it (content-free, blocks recreation).",
        parameters=[schema.path_id("memory_id", "memory"), *schema.query_parameters(parsing.CEILING_ONLY),
                    schema.IDEMPOTENCY_KEY, schema.replayed(200)],
        request=inputs.MemoryReview,
        responses={200: MEMORY_OR_DERIVED, **schema.WRITE_ERRORS},
    )
    def post(self, request, memory_id: str):
        memory_id = parsing.path_id(memory_id)
        q = parsing.query(request, parsing.CEILING_ONLY)
        key = parsing.idempotency_key(request)
        body, data = parsing.body(request, inputs.MemoryReview)
        principal, now = self.principal, utcnow()
        if (surface := _derived_surface(principal, memory_id)) is not None:
            derived = surface.review(principal, memory_id, action=body.action, ceiling=q["ceiling"],
                                     idempotency_key=key, request_sha256=receipts.request_sha256(
                                         route="memories.review",
                                         params={"memory_id": str(memory_id), "ceiling": q["ceiling"]}, body=data))
            return Response(DerivedMemorySerializer(derived).data)

        def write() -> receipts.Written:
            reviewed = ceilings.memory_review_within_ceiling(
                principal=principal, memory_id=memory_id, action=body.action, ceiling=q["ceiling"], now=now,
            )
            return receipts.written(200, "memory", reviewed)

        outcome = receipts.idempotent_write(
            principal=principal, key=key, now=now, write=write, ceiling=q["ceiling"],
            request_sha256=receipts.request_sha256(
                route="memories.review", params={"memory_id": str(memory_id), "ceiling": q["ceiling"]}, body=data,
            ),
        )
        return _respond(outcome, MemorySerializer)


class SessionCollectionView(OwnerApiView):
    required_scopes = {"POST": SCOPE_WRITE}

    @extend_schema(
        operation_id="sessions_create", tags=["sessions"], summary="Open a conversation.",
        parameters=[schema.IDEMPOTENCY_KEY, schema.replayed(201)],
        request=inputs.SessionCreate,
        responses={201: SessionSerializer, **schema.WRITE_ERRORS},
    )
    def post(self, request):
        parsing.query(request, {})
        key = parsing.idempotency_key(request)
        body, data = parsing.body(request, inputs.SessionCreate)
        principal, now = self.principal, utcnow()

        def write() -> receipts.Written:
            session = services.session_create(principal=principal, scope=body.scope, started_at=body.started_at or now)
            return receipts.written(201, "session", session)

        outcome = receipts.idempotent_write(
            principal=principal, key=key, now=now, write=write,
            request_sha256=receipts.request_sha256(route="sessions.create", params={}, body=data),
        )
        return _respond(outcome, SessionSerializer)


class SessionEventsView(OwnerApiView):
    required_scopes = {"POST": SCOPE_WRITE}

    @extend_schema(
        operation_id="sessions_events_create", tags=["sessions"],
        summary="Record one message (or tool result) with ordered text parts; each part gets a stable ID to cite.",
        parameters=[schema.path_id("session_id", "session"), schema.IDEMPOTENCY_KEY, schema.replayed(201)],
        request=inputs.EventAppend,
        responses={201: EventSerializer, **schema.WRITE_ERRORS},
    )
    def post(self, request, session_id: str):
        session_id = parsing.path_id(session_id)
        parsing.query(request, {})
        key = parsing.idempotency_key(request)
        body, data = parsing.body(request, inputs.EventAppend)
        principal, now = self.principal, utcnow()

        def write() -> receipts.Written:
            event = services.event_append(
                principal=principal, session_id=session_id, kind=body.kind, speaker=body.speaker,
                parts=list(body.parts), created_at=body.created_at, now=now,
            )
            return receipts.written(201, "event", event)

        outcome = receipts.idempotent_write(
            principal=principal, key=key, now=now, write=write,
            request_sha256=receipts.request_sha256(
                route="sessions.events.create", params={"session_id": str(session_id)}, body=data,
            ),
        )
        return _respond(outcome, EventSerializer)


ERASURE_NOTE = (
    " One transaction, with reverse invalidation: every summary, connection and search vector built on an "
    "erased original goes with it, and a full dump of the database afterwards holds none of the erased text "
    "(opaque IDs and hashes remain, so history and rejections can still name them). Answers a content-free "
    "receipt; a replay with the same Idempotency-Key answers the same receipt (Idempotency-Replayed: true) "
    "even though what it names is gone. An unknown, foreign or already erased ID is not_found.")


def _erase(view: OwnerApiView, request, target: str, raw_id: Optional[str] = None, *, route: str,
           body_model=None) -> Response:
    """The shared parse of every erasure route (path ID, no query, the key, the body or
    none), then ``erasure.erase_requested``."""
    target_id = parsing.path_id(raw_id) if raw_id is not None else None
    parsing.query(request, {})
    key = parsing.idempotency_key(request)
    data = None
    if body_model is None:
        parsing.no_body(request)
    else:
        _body, data = parsing.body(request, body_model)
    outcome = erasure.erase_requested(
        principal=view.principal, target=target, target_id=target_id, key=key,
        request_sha256=receipts.request_sha256(route=route, params={"id": str(target_id)} if target_id else {},
                                               body=data),
    )
    return _respond(outcome, ErasureReceiptSerializer)


class SessionDetailView(OwnerApiView):
    required_scopes = {"DELETE": SCOPE_WRITE}

    @extend_schema(
        operation_id="sessions_erase", tags=["sessions"],
        summary="Erase a conversation: its messages and every memory formed from them or local to it.",
        description="A memory citing any message of the session is erased too." + ERASURE_NOTE,
        parameters=[schema.path_id("session_id", "session"), schema.IDEMPOTENCY_KEY, schema.replayed(200)],
        request=None,
        responses={200: ErasureReceiptSerializer, **schema.WRITE_ERRORS},
    )
    def delete(self, request, session_id: str):
        return _erase(self, request, "session", session_id, route="sessions.erase")


class PersonDetailView(OwnerApiView):
    required_scopes = {"DELETE": SCOPE_WRITE}

    @extend_schema(
        operation_id="people_erase", tags=["people"],
        summary="Erase a person: their name, their messages, memories attributed to or about them, and the "
                "messages those memories cite.",
        description="Only recorded links count (attribution, entity IDs, speaker): a mention of the person in an "
                    "unrelated message that no memory about them cites is not found." + ERASURE_NOTE,
        parameters=[schema.path_id("person_id", "person"), schema.IDEMPOTENCY_KEY, schema.replayed(200)],
        request=None,
        responses={200: ErasureReceiptSerializer, **schema.WRITE_ERRORS},
    )
    def delete(self, request, person_id: str):
        return _erase(self, request, "person", person_id, route="people.erase")


class AccountEraseView(OwnerApiView):
    required_scopes = {"POST": SCOPE_WRITE}

    @extend_schema(
        operation_id="account_erase", tags=["account"],
        summary="Erase the whole account: every memory, message, person and name; revoke every token.",
        description=(
            "Needs the confirmation phrase in the body. Every owner token is revoked in the same transaction "
            "(this one too), which also ends every review-dashboard sign-in; so a later replay over HTTP "
            "answers 401, while a concurrent duplicate that authenticated first answers the same receipt."
            + ERASURE_NOTE),
        parameters=[schema.IDEMPOTENCY_KEY, schema.replayed(200)],
        request=inputs.AccountErase,
        responses={200: ErasureReceiptSerializer, **schema.WRITE_ERRORS},
    )
    def post(self, request):
        return _erase(self, request, "account", route="account.erase", body_model=inputs.AccountErase)


class SchemaView(ApiSurface, SpectacularAPIView):
    """The OpenAPI document (JSON). Public while the API is enabled: it holds no owner data."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    renderer_classes = [OpenApiJsonRenderer]


class UnknownRouteView(ApiSurface, APIView):
    """For a catch-all placed after every /v1 include: unknown routes answer in the envelope."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    schema = None  # not part of the documented API

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        raise api_errors.NotFound()

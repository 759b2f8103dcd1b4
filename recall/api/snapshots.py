"""The conversation-snapshot routes under /v1/sessions/{session_id} (``recall.snapshots``).

* ``POST …/turns`` — one turn: the first freezes the conversation's prefix, every later one
  answers the same prefix bytes with its turn context (new items, the limitation notice,
  corrections). No Idempotency-Key: like context assembly it is a read that records only
  content-free references, digests and trace IDs; each call is the next turn.
* ``GET …/snapshot`` — the conversation's snapshot (prefix and frozen references).
* ``POST …/turns/{turn}/citations`` — what the answer for that turn cited, once per
  Idempotency-Key (a replay answers the recorded report, ``Idempotency-Replayed: true``).

Thin, like every /v1 view (``memory.api.views.OwnerApiView``: the API flag, bearer owner auth,
``Cache-Control: private, no-store`` on every response, the one error envelope).
"""
from __future__ import annotations

import re
from datetime import datetime
from uuid import UUID

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from memory.api import parsing, schema
from memory.api.views import OwnerApiView
from recall.api.inputs import CitationReportBody, ConversationTurn
from recall.api.views import ContextTraceSerializer, RecallItemSerializer, context_trace, refuse_blank
from recall.snapshots import selectors, services
from recall.snapshots.domain import CITATION_OUTCOMES, CORRECTION_REASONS, TurnView
from veetbot import api_errors
from veetbot.clock import utcnow
from veetbot.identity import SCOPE_READ, SCOPE_WRITE, Principal

TURN_MAX = 999_999  # what the path parser reads; turns are bounded far lower (RECALL_SNAPSHOT_MAX_TURNS)
_TURN = re.compile(r"[0-9]{1,6}")


class FrozenItemSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="What the prefix cites it by ([m:<id>]).")
    record_kind = serializers.ChoiceField(choices=("belief", "summary", "hypothesis"))
    content_revision = serializers.IntegerField(help_text="The revision rendered.")
    operation_id = serializers.UUIDField(allow_null=True, help_text="The merge set or derived item's operation.")
    operation_revision = serializers.IntegerField(allow_null=True, help_text="That operation's revision then.")
    support_ids = serializers.ListField(child=serializers.UUIDField(),
                                        help_text="A derived item's originals (empty for a belief).")


class SnapshotSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    session_id = serializers.UUIDField()
    created_at = serializers.DateTimeField()
    prefix = serializers.CharField(allow_blank=True, help_text=(
        "The frozen memory records, byte-identical on every turn; empty when nothing was found, or once "
        "prefix_withheld."))
    prefix_sha256 = serializers.CharField(help_text="SHA-256 of the prefix as frozen.")
    prefix_tokens = serializers.IntegerField(help_text="ceil(UTF-8 bytes of the prefix / 4).")
    prefix_withheld = serializers.BooleanField(help_text=(
        "True once something the prefix copied was erased: its text is gone for good (drop any cached copy); "
        "the turn context still names the erased item by its citation."))
    items = FrozenItemSerializer(many=True, help_text="The prefix's items, in prefix order (content free).")
    ceiling = serializers.CharField(help_text="The filters every turn of this conversation shares.")
    scope = serializers.CharField()
    selection_mode = serializers.CharField()
    belief_types = serializers.ListField(child=serializers.CharField())
    turns = serializers.IntegerField(help_text=f"Turns so far (at most {settings.RECALL_SNAPSHOT_MAX_TURNS}).")


class CorrectionSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="The citation of the item that no longer holds.")
    record_kind = serializers.CharField()
    reason = serializers.ChoiceField(choices=CORRECTION_REASONS, help_text=(
        "The most decisive of: erased, retracted (not true), expired, corrected (a new statement), withdrawn (no "
        "longer visible here), undone (the owner undid the merge it represented), invalidated (a derived item's "
        "or merge set's support changed)."))
    changed_at = serializers.DateTimeField(allow_null=True)
    delivered_turn = serializers.IntegerField(help_text="The turn that gave it to the model (1: the prefix).")


class TurnSerializer(serializers.Serializer):
    turn = serializers.IntegerField(help_text="1 for the turn that froze the prefix.")
    snapshot = SnapshotSerializer()
    context = serializers.CharField(allow_blank=True, help_text=(
        "The turn context, sent after the prefix: this turn's new items (the header, one line per item), then "
        "any [limitation] notice, then [correction] notices — the conversation's corrections (prefix items in "
        "prefix order, then earlier turns' items in delivery order), then those of this turn's found originals."))
    tokens = serializers.IntegerField(help_text="ceil(UTF-8 bytes of the new items' rendering / 4).")
    items = RecallItemSerializer(many=True, help_text="This turn's new items (never the prefix's).")
    corrections = CorrectionSerializer(many=True)
    notices = serializers.ListField(child=serializers.CharField())
    trace = ContextTraceSerializer(help_text="What this turn's assembly did (counts, channels, trace IDs, times).")


class CitedItemSerializer(serializers.Serializer):
    citation = serializers.CharField(help_text="As reported, in lower case.")
    outcome = serializers.ChoiceField(choices=CITATION_OUTCOMES, help_text=(
        "credited (its utility and last use raised), ambiguous (a short ID naming more than one item: nothing "
        "changes), unavailable (it no longer holds), repeated (already credited for this turn)."))
    id = serializers.UUIDField(allow_null=True)
    record_kind = serializers.CharField(allow_null=True)


class CitationReportSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    session_id = serializers.UUIDField()
    turn = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    citations = CitedItemSerializer(many=True)


def _turn_data(view: TurnView) -> dict:
    return {"turn": view.turn, "snapshot": view.snapshot, "context": view.context, "tokens": view.tokens,
            "items": view.items, "corrections": view.corrections, "notices": list(view.notices),
            "trace": context_trace(view.assembly)}


SESSION_ID = schema.path_id("session_id", "session")
TURN = OpenApiParameter("turn", {"type": "integer", "minimum": 1, "maximum": TURN_MAX}, OpenApiParameter.PATH,
                        description="The turn's number (anything else names nothing and is not_found).")


def turn_number(raw: str) -> int:
    """A turn named in a path (or an MCP argument): 1..TURN_MAX, anything else names nothing."""
    if not _TURN.fullmatch(raw) or int(raw) < 1:
        raise api_errors.NotFound()
    return int(raw)


class SessionTurnsView(OwnerApiView):
    # A turn answers memory content and records the conversation's snapshot: read and write.
    required_scopes = {"POST": (SCOPE_READ, SCOPE_WRITE)}

    @extend_schema(
        operation_id="sessions_turns_create", tags=["sessions"],
        summary="One assistant turn of a conversation: its frozen memory prefix and its turn context.",
        description=(
            "The first turn runs context assembly (as POST /v1/memories/context) and freezes its rendered records "
            "as the conversation's prefix (one per conversation). Every later turn answers the same prefix bytes "
            "plus a turn context: its own assembly without what the prefix holds, then corrections of what the "
            "conversation was told that no longer holds (named by citation, never with erased content). The first "
            "turn fixes ceiling, scope, belief_types and selection_mode (another value later is conflict "
            "differs_from_snapshot: the conversation is frozen with them); at most "
            f"{settings.RECALL_SNAPSHOT_MAX_TURNS} turns (then conflict limit_reached). Not idempotent: each call is "
            "the next turn."),
        parameters=[SESSION_ID],
        request=ConversationTurn,
        responses={200: TurnSerializer, **schema.WRITE_ERRORS},
    )
    def post(self, request, session_id: str):
        session_id = parsing.path_id(session_id)
        parsing.query(request, {})
        body, _data = parsing.body(request, ConversationTurn)
        return Response(turn_requested(principal=self.principal, session_id=session_id, body=body, now=utcnow()))


def turn_requested(*, principal: Principal, session_id: UUID, body: ConversationTurn, now: datetime) -> dict:
    """One conversation turn, rendered: what POST /v1/sessions/{id}/turns does after parsing,
    shared with the MCP ``turn`` tool, so both surfaces freeze, repeat and correct a
    conversation by one rule (the same snapshot, whichever surface took which turn)."""
    refuse_blank(body.current_message, "current_message")
    view = services.conversation_turn(principal=principal, session_id=session_id, need=body.need(),
                                      filters=body.hard_filters(), now=now, **body.allowance())
    return TurnSerializer(_turn_data(view)).data


class SessionSnapshotView(OwnerApiView):
    required_scopes = {"GET": SCOPE_READ}

    @extend_schema(
        operation_id="sessions_snapshot_retrieve", tags=["sessions"],
        summary="The conversation's frozen memory prefix and its references.",
        description="not_found until the conversation's first turn (and for an erased conversation).",
        parameters=[SESSION_ID],
        responses={200: SnapshotSerializer, **schema.READ_ERRORS},
    )
    def get(self, request, session_id: str):
        session_id = parsing.path_id(session_id)
        parsing.query(request, {})
        return Response(SnapshotSerializer(selectors.snapshot_get(principal=self.principal,
                                                                  session_id=session_id)).data)


class TurnCitationsView(OwnerApiView):
    required_scopes = {"POST": SCOPE_WRITE}

    @extend_schema(
        operation_id="sessions_turns_citations_create", tags=["sessions"],
        summary="Report what the answer for one turn cited.",
        description=(
            "A faithful, unambiguous citation of an item the turn gave the model that still holds raises only "
            "that item's utility (bounded at 1.0) and last use — never its supports, evidence time, expiry or "
            "content. An ambiguous short ID, an item that no longer holds and a repeat change nothing. Once per "
            "Idempotency-Key."),
        parameters=[SESSION_ID, TURN, schema.IDEMPOTENCY_KEY, schema.replayed(200)],
        request=CitationReportBody,
        responses={200: CitationReportSerializer, **schema.WRITE_ERRORS},
    )
    def post(self, request, session_id: str, turn: str):
        session_id = parsing.path_id(session_id)
        number = turn_number(turn)
        parsing.query(request, {})
        key = parsing.idempotency_key(request)
        body, _data = parsing.body(request, CitationReportBody)
        data, replayed = citations_requested(principal=self.principal, session_id=session_id, turn=number,
                                             key=key, body=body, now=utcnow())
        response = Response(data)
        if replayed:
            response["Idempotency-Replayed"] = "true"
        return response


def citations_requested(*, principal: Principal, session_id: UUID, turn: int, key: str, body: CitationReportBody,
                        now: datetime) -> tuple[dict, bool]:
    """One citation report, once per key: what POST /v1/sessions/{id}/turns/{turn}/citations
    does after parsing, shared with the MCP ``cite`` tool — one receipt namespace, so the same
    key and citations replay across the two surfaces. (The report's body, replayed)."""
    report, replayed = services.citation_report(principal=principal, session_id=session_id, turn=turn,
                                                citations=body.citations, idempotency_key=key, now=now)
    return CitationReportSerializer(report).data, replayed

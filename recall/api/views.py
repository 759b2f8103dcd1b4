"""POST /v1/memories/search: recall for a query within a context budget.

Thin, like every /v1 view (``memory.api.views.OwnerApiView``: the AGENT_MEMORY_API_ENABLED
flag per request, bearer owner auth, ``Cache-Control: private, no-store`` on every
response, the one error envelope): parse a closed JSON body strictly (duplicate keys,
unknown fields, wrong JSON types are validation_error), call ``recall.retriever.recall``
once, render with the output serializer below — which is also the documented schema. The
body model ``recall.api.inputs.MemorySearch`` is its own documentation
(``memory.api.schema.StrictBodyScheme``); its filters (scope, belief types, exclusions,
selection mode) are hard predicates of every channel.

The response carries the rendered context and the rendered items; never the transient
stage IDs (``RecallResult.stages``). Needs the memory.read scope. Searching is a read: it
takes no Idempotency-Key, though it writes a content-free trace.
"""
from __future__ import annotations

from datetime import datetime
from typing import get_args

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from memory import vocabulary
from memory.api import parsing, schema
from memory.api.serializers import SourceSerializer
from memory.api.views import OwnerApiView
from recall import retriever
from recall.api.inputs import QUERY_PATTERN, MemoryContext, MemorySearch  # noqa: F401 - QUERY_PATTERN re-exported
from recall.context import planner
from recall.context.former import Purpose
from recall.domain import FallbackReason, RecallRequest
from veetbot.api_errors import ValidationFailed, problem
from veetbot.clock import utcnow
from veetbot.identity import SCOPE_READ, Principal

CHANNELS = ("hybrid", "dense", "sparse")


# --- output (the rendering and the documented schema) -------------------------------------

# A choice set already named by another field (SensitivityEnum, ChannelEnum) would get a
# second enum component under this field's name (a schema warning), so these two are
# documented as patterns over the same values.
def _one_of(values) -> str:
    return "^(" + "|".join(values) + ")$"


@extend_schema_field({"type": "string", "pattern": _one_of(CHANNELS)})
class RequestedChannelField(serializers.CharField):
    pass


# Summary items may say "mixed" (their supports differ); patterns, not enums, so these sets
# do not collide with the originals' named enum components.
@extend_schema_field({"type": "string", "pattern": _one_of((*vocabulary.BELIEF_TYPES, "mixed"))})
class RecalledBeliefTypeField(serializers.ChoiceField):
    pass


@extend_schema_field({"type": "string", "pattern": _one_of((*vocabulary.POLARITIES, "mixed"))})
class RecalledPolarityField(serializers.ChoiceField):
    pass


class SummaryClauseSerializer(serializers.Serializer):
    text = serializers.CharField()
    source_ids = serializers.ListField(child=serializers.UUIDField(), help_text="The originals this clause repeats.")


class SourceExcerptSerializer(serializers.Serializer):
    event = serializers.UUIDField(help_text="The owner's message (a user.message.created event).")
    part = serializers.UUIDField(help_text="The text part quoted, whole.")
    created_at = serializers.DateTimeField(help_text="When the owner sent the message.")
    text = serializers.CharField(help_text=(
        "The part's text as stored (the rendering quotes it flattened, as data). At most "
        f"{settings.RECALL_SOURCE_EXCERPT_MAX_CHARS} characters (RECALL_SOURCE_EXCERPT_MAX_CHARS)."))
    text_sha256 = serializers.CharField(min_length=64, max_length=64, help_text=(
        "SHA-256 of the text (hex): what the recall's trace records in its place."))


class RecallItemSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    score = serializers.FloatField(help_text="Reciprocal-rank-fusion score; higher ranks first.")
    subject = serializers.CharField()
    statement = serializers.CharField()
    # "mixed" and "summary" occur on summary items only (record_kind summary).
    belief_type = RecalledBeliefTypeField(choices=(*vocabulary.BELIEF_TYPES, "mixed"))
    polarity = RecalledPolarityField(choices=(*vocabulary.POLARITIES, "mixed"))
    derivation = serializers.ChoiceField(choices=(*vocabulary.DERIVATIONS, "summary"))
    authority = serializers.ChoiceField(choices=vocabulary.AUTHORITIES)
    attribution = serializers.CharField(help_text="owner or person:<uuid>")
    confidence = serializers.FloatField(min_value=0.0, max_value=1.0)
    sensitivity = serializers.ChoiceField(choices=vocabulary.SENSITIVITIES)
    evidence_at = serializers.DateTimeField()
    valid_from = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    content_revision = serializers.IntegerField(help_text="The revision recalled (for as_of: the one current then).")
    sources = SourceSerializer(many=True)
    record_kind = serializers.ChoiceField(
        choices=("belief", "summary", "hypothesis"),
        help_text="belief: an original; summary: an extractive summary derived by reconsolidation; "
                  "hypothesis: a tentative inferred connection (both only with reconsolidation on, only in "
                  "slots the originals left).",
    )
    operation_id = serializers.UUIDField(
        allow_null=True, help_text="The reconsolidation operation: the merge set a belief represents, or the summary's.",
    )
    operation_revision = serializers.IntegerField(allow_null=True, help_text="That operation's revision.")
    clauses = SummaryClauseSerializer(many=True, help_text="Summary only: its extractive clauses.")
    support_ids = serializers.ListField(
        child=serializers.UUIDField(), help_text="Summary only: every original it depends on, rendered or omitted.",
    )
    entity_ids = serializers.ListField(
        child=serializers.CharField(), help_text="Belief only: the original's entity IDs (empty on a summary).",
    )
    excerpts = SourceExcerptSerializer(many=True, help_text=(
        "Belief only, and only with RECALL_SOURCE_EXCERPTS_ENABLED (default off; otherwise always empty): whole "
        "parts of the owner's own messages this original was formed from, exactly those its rendered line "
        "quotes — for a restricted-ceiling, current (no as_of) recall, from conversations of the recall's own "
        "scope, never an erased, excluded, changed or another speaker's message nor one a correction "
        "superseded. They use only what the items left of the token budget and never an item slot: "
        f"at most {settings.RECALL_SOURCE_EXCERPTS_MAX_PER_ITEM} per item, "
        f"{settings.RECALL_SOURCE_EXCERPTS_MAX_PER_RECALL} and "
        f"{settings.RECALL_SOURCE_EXCERPTS_MAX_CHARS_PER_RECALL} characters per rendering."))


class RecallResultSerializer(serializers.Serializer):
    query = serializers.CharField()
    channel = serializers.ChoiceField(choices=CHANNELS, help_text="The channel that actually ran.")
    requested_channel = RequestedChannelField(help_text="The channel asked for: hybrid (when not given), dense or sparse.")
    fallback_reason = serializers.ChoiceField(
        choices=get_args(FallbackReason),
        help_text="Why channel differs from requested_channel; empty when it does not.",
    )
    selection_mode = serializers.ChoiceField(choices=("relevance", "recent"))
    items = RecallItemSerializer(many=True, help_text="The rendered items, in rank order.")
    rendered = serializers.CharField(
        allow_blank=True,
        help_text=("Context text for a model: a fixed data-not-instructions header, then one line per "
                   "item opening with its [m:<id>] citation. Empty when nothing fits."),
    )
    rendered_tokens = serializers.IntegerField(help_text="ceil(UTF-8 bytes of rendered / 4).")
    trace_id = serializers.UUIDField(help_text="The content-free trace of this recall.")


class MemorySearchView(OwnerApiView):
    required_scopes = {"POST": SCOPE_READ}

    @extend_schema(
        operation_id="memories_search", tags=["memories"],
        summary="Recall the memories relevant to a query, within an item and token budget.",
        description=(
            "Lexical, structured and (when enabled) semantic candidates, fused by reciprocal rank, "
            "then whole items within the budget, rendered as data with [m:<id>] citations."
        ),
        request=MemorySearch,
        responses={200: RecallResultSerializer, **schema.READ_ERRORS},
    )
    def post(self, request):
        parsing.query(request, {})
        body, _data = parsing.body(request, MemorySearch)
        return Response(search_requested(principal=self.principal, body=body, now=utcnow()))


def search_requested(*, principal: Principal, body: MemorySearch, now: datetime) -> dict:
    """Deliberate recall, rendered: what POST /v1/memories/search does after parsing, shared
    with the MCP ``search`` tool (recorded on the trace as the ``api`` surface: one owner API)."""
    _refuse_blank_or_future(body.query, "query", body.as_of, now)
    result = retriever.recall(principal=principal, surface="api", now=now, request=RecallRequest(**body.request_fields()))
    return RecallResultSerializer(result).data


def refuse_blank(text: str, field: str) -> None:
    if not parsing.NON_BLANK.search(text):
        raise ValidationFailed([problem(field, "blank")])


def _refuse_blank_or_future(text: str, field: str, as_of, now) -> None:
    refuse_blank(text, field)
    if as_of is not None and as_of > now:
        raise ValidationFailed([problem("as_of", "in_future")])


# --- automatic context assembly ----------------------------------------------------------

class ContextSearchSerializer(serializers.Serializer):
    round = serializers.IntegerField(min_value=1, max_value=2)
    purpose = serializers.ChoiceField(choices=get_args(Purpose), help_text=(
        "What the search was for: the turn's message (round one), an unresolved reference, the entities of "
        "round one's top results, or (keyword-only recall) the subject of one of them."))
    trace_id = serializers.UUIDField(help_text="That search's own content-free recall trace.")
    channel = serializers.ChoiceField(choices=CHANNELS)
    fallback_reason = serializers.ChoiceField(choices=get_args(FallbackReason))
    returned = serializers.IntegerField(help_text="Items the search returned.")
    new = serializers.IntegerField(help_text="Of those, items no earlier search had found.")
    elapsed_ms = serializers.FloatField()


class ContextTraceSerializer(serializers.Serializer):
    rounds = serializers.IntegerField(help_text="Rounds run (1 or 2).")
    planned = serializers.IntegerField(help_text="Searches the query former proposed.")
    searches = ContextSearchSerializer(many=True, help_text="The searches run, in order (at most 4).")
    stopped = serializers.ChoiceField(choices=("", "deadline", "allowance"), help_text=(
        "Why planned work stopped or found items were left out: the deadline, or the shared allowance."))
    deadline_ms = serializers.FloatField()
    elapsed_ms = serializers.FloatField()


class ContextResultSerializer(serializers.Serializer):
    context = serializers.CharField(allow_blank=True, help_text=(
        "Context text for a model: the fixed data-not-instructions header, one line per item opening with its "
        "[m:<id>] citation, then any [limitation] notice. Empty when nothing was found."))
    tokens = serializers.IntegerField(help_text="ceil(UTF-8 bytes of the rendered items / 4).")
    items = RecallItemSerializer(many=True, help_text="The rendered items, first-found first.")
    notices = serializers.ListField(child=serializers.CharField(), help_text=(
        "Limitation notices (fixed phrases), then correction notices: a found memory the owner corrected, "
        "outside the shared allowance (at most RECALL_CONTEXT_MAX_CORRECTION_NOTICES)."))
    trace = ContextTraceSerializer(help_text="What assembly did: counts, channels, trace IDs and times only.")


class MemoryContextView(OwnerApiView):
    required_scopes = {"POST": SCOPE_READ}

    @extend_schema(
        operation_id="memories_context", tags=["memories"],
        summary="Assemble the memory context for one assistant turn.",
        description=(
            "The server forms the queries from the turn (the current message; with RECALL_CONTEXT_TASK_QUERY on, "
            "also whole working-state fragments within 512 UTF-8 bytes, completed tasks left out; no model "
            "call), runs at most "
            f"{settings.RECALL_CONTEXT_MAX_SEARCHES} searches in at most {settings.RECALL_CONTEXT_MAX_ROUNDS} "
            f"rounds under one {settings.RECALL_CONTEXT_DEADLINE_SECONDS:g} s deadline and one shared item/token "
            "allowance — the second round targets what the first did not find (the turn's unresolved "
            "references, the caller's first and then the references its message makes, such as \"my sister\"; "
            "the entities of the first round's top results), its best new finds taking the places of the "
            "first round's lowest-ranked items — and renders one cited context. A stopped round or a full "
            "allowance ends the context with a [limitation] notice. Filters hold for every search."),
        request=MemoryContext,
        responses={200: ContextResultSerializer, **schema.READ_ERRORS},
    )
    def post(self, request):
        parsing.query(request, {})
        body, _data = parsing.body(request, MemoryContext)
        return Response(context_requested(principal=self.principal, body=body, now=utcnow()))


def context_requested(*, principal: Principal, body: MemoryContext, now: datetime) -> dict:
    """One turn's assembled context, rendered: what POST /v1/memories/context does after
    parsing, shared with the MCP ``context`` tool, so both surfaces assemble by one rule.
    (A conversation's snapshot and next-turn delta are the turns route's,
    ``recall.api.snapshots``.)"""
    _refuse_blank_or_future(body.current_message, "current_message", body.as_of, now)
    result = planner.assemble(
        principal, body.need(), filters=body.filters(), now=now,
        max_items=body.max_items or settings.RECALL_MAX_ITEMS,
        max_tokens=body.max_tokens or settings.RECALL_MAX_TOKENS)
    return ContextResultSerializer(render_context(result)).data


def context_trace(result: planner.ContextResult) -> dict:
    """What one assembly did (``ContextTraceSerializer``)."""
    return {"rounds": result.rounds, "planned": result.planned, "searches": result.searches,
            "stopped": result.stopped, "deadline_ms": result.deadline_ms, "elapsed_ms": result.elapsed_ms}


def render_context(result: planner.ContextResult) -> dict:
    """The response (and ``recall --context --json``) shape of one assembly."""
    return {
        "context": result.context, "tokens": result.tokens, "items": result.items, "notices": list(result.notices),
        "trace": context_trace(result),
    }

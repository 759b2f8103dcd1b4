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

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from memory import vocabulary
from memory.api import parsing, schema
from memory.api.serializers import SourceSerializer
from memory.api.views import OwnerApiView
from recall import retriever
from recall.api.inputs import QUERY_PATTERN, MemorySearch  # noqa: F401 - QUERY_PATTERN re-exported
from recall.domain import RecallRequest
from veetbot.api_errors import ValidationFailed, problem
from veetbot.clock import utcnow
from veetbot.identity import SCOPE_READ

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


class RecallResultSerializer(serializers.Serializer):
    query = serializers.CharField()
    channel = serializers.ChoiceField(choices=CHANNELS, help_text="The channel that actually ran.")
    requested_channel = RequestedChannelField(help_text="The channel asked for: hybrid (when not given), dense or sparse.")
    fallback_reason = serializers.ChoiceField(
        choices=("", "semantic_disabled", "encoder_unavailable", "recent_selection"),
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
        now = utcnow()
        if not parsing.NON_BLANK.search(body.query):
            raise ValidationFailed([problem("query", "blank")])
        if body.as_of is not None and body.as_of > now:
            raise ValidationFailed([problem("as_of", "in_future")])
        result = retriever.recall(
            principal=self.principal, surface="api", now=now,
            request=RecallRequest(**body.request_fields()),
        )
        return Response(RecallResultSerializer(result).data)

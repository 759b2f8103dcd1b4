"""Output shapes of the owner API: DRF serializers that render domain values.

Output serializers are the rendering: views pass domain values (``MemoryView``,
``SessionView``, ``EventView``) straight in, so the documented response is the response.
The field order of ``MemorySerializer`` is the wire order and is kept byte-stable; later
issues add fields elsewhere, never change these.

Request bodies are not here: the strict pydantic models in ``memory.api.inputs`` parse
them and are their documentation too (``memory.api.schema.StrictBodyScheme``; with
COMPONENT_SPLIT_REQUEST their components are named ``MemoryCreateRequest`` and so on).
"""
from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from memory import vocabulary as v
from veetbot.api_errors import ERROR_CODES


# --- responses -------------------------------------------------------------------------

class SourceSerializer(serializers.Serializer):
    event = serializers.UUIDField()
    part = serializers.UUIDField()


class MemorySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    subject = serializers.CharField()
    statement = serializers.CharField()
    belief_type = serializers.ChoiceField(choices=v.BELIEF_TYPES)
    claim_kind = serializers.ChoiceField(choices=v.CLAIM_KINDS)
    polarity = serializers.ChoiceField(choices=v.POLARITIES)
    derivation = serializers.ChoiceField(choices=v.DERIVATIONS)
    attribution = serializers.CharField(help_text="owner or person:<uuid>")
    authority = serializers.ChoiceField(choices=v.AUTHORITIES)
    sensitivity = serializers.ChoiceField(choices=v.SENSITIVITIES)
    scope = serializers.CharField(help_text="user, project:<name> or session:<uuid>")
    portable = serializers.BooleanField()
    confidence = serializers.FloatField(min_value=0.0, max_value=1.0)
    evidence_at = serializers.DateTimeField()
    valid_from = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    entity_ids = serializers.ListField(child=serializers.CharField())
    status = serializers.ChoiceField(choices=v.STATUSES)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    content_revision = serializers.IntegerField()
    creation_sequence = serializers.IntegerField()
    store_position = serializers.IntegerField()
    utility = serializers.FloatField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    reviewed_at = serializers.DateTimeField(allow_null=True)
    dismissed_at = serializers.DateTimeField(allow_null=True)
    sources = SourceSerializer(many=True)


class DerivedClauseSerializer(serializers.Serializer):
    text = serializers.CharField()
    source_ids = serializers.ListField(child=serializers.UUIDField())


class DerivedContentSerializer(serializers.Serializer):
    subject = serializers.CharField(allow_blank=True)
    belief_type = serializers.ChoiceField(choices=v.BELIEF_TYPES)
    clauses = DerivedClauseSerializer(many=True)
    scope = serializers.CharField()
    portable = serializers.BooleanField()
    sensitivity = serializers.ChoiceField(choices=v.SENSITIVITIES)
    authority = serializers.ChoiceField(choices=v.AUTHORITIES, help_text="The weakest authority of its support.")
    confidence = serializers.FloatField(min_value=0.0, max_value=1.0)
    evidence_at = serializers.DateTimeField()
    valid_from = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)


class DerivedSupportSerializer(serializers.Serializer):
    memory_id = serializers.UUIDField()
    content_revision = serializers.IntegerField(min_value=1)
    omitted = serializers.BooleanField(help_text="A summary input that no clause cites.")


class DerivedMemorySerializer(serializers.Serializer):
    """A summary or hypothesis (only with include_derived=true, or a derived ID on the
    detail/review/erase routes while the reconsolidation API is enabled). Never an original."""

    id = serializers.UUIDField()
    # Documented in prose: an enum here would collide with recall's record_kind enum name.
    record_kind = serializers.CharField(help_text="summary or hypothesis (never an original belief).")
    operation_id = serializers.UUIDField(help_text="See /v1/memory-reconsolidations/{id}.")
    revision = serializers.IntegerField(min_value=1)
    status = serializers.ChoiceField(choices=("active", "retired"))
    review_flag = serializers.BooleanField(help_text="True until the owner marks it reviewed or dismisses it.")
    reviewed_at = serializers.DateTimeField(allow_null=True)
    dismissed_at = serializers.DateTimeField(allow_null=True)
    restricted = serializers.BooleanField(help_text="The owner's not_here local-scope restriction.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    content = DerivedContentSerializer(allow_null=True, help_text=(
        "Null unless it is active and every supporting original is available under the ceiling."))
    sources = DerivedSupportSerializer(many=True, help_text="Complete support, or empty with null content.")


def render_memory_or_derived(value) -> dict:
    """Originals render exactly as before; derived values (they carry record_kind) as derived."""
    if hasattr(value, "record_kind"):
        return DerivedMemorySerializer(value).data
    return MemorySerializer(value).data


# What the routes that take a memory ID answer: an original, or (derived ID, reconsolidation
# API on) a summary or hypothesis. The two shapes share no required field set, so exactly
# one of them matches any answer.
MEMORY_OR_DERIVED = PolymorphicProxySerializer(
    component_name="MemoryOrDerived", serializers=[MemorySerializer, DerivedMemorySerializer],
    resource_type_field_name=None,
)


@extend_schema_field(MEMORY_OR_DERIVED)
class MemoryOrDerivedField(serializers.Field):
    def to_representation(self, value):
        return render_memory_or_derived(value)


class MemoryPageSerializer(serializers.Serializer):
    items = serializers.ListField(child=MemoryOrDerivedField(), help_text=(
        "Originals; with include_derived=true also active derived rows (record_kind, operation_id)."))
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Opaque; pass back as ?cursor= with the same filters and ceiling.",
    )


class SessionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    scope = serializers.CharField(help_text="user, project:<name> or session:<this session's id>")
    started_at = serializers.DateTimeField()


class EventPartSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    text = serializers.CharField()


class EventSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    session = serializers.UUIDField()
    kind = serializers.ChoiceField(choices=v.EVENT_KINDS)
    speaker = serializers.CharField()
    created_at = serializers.DateTimeField()
    excluded = serializers.BooleanField()
    parts = EventPartSerializer(many=True)


class ErasureReceiptSerializer(serializers.Serializer):
    erased = serializers.ChoiceField(choices=("session", "person", "account"), help_text="What was erased.")
    id = serializers.UUIDField(help_text="Its ID (for an account: the principal's).")
    erased_at = serializers.DateTimeField(help_text="When; a replay answers the same instant.")


class ErrorDetailSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="A body path (dotted), query parameter or header name.")
    problem = serializers.CharField(help_text="A problem code or fixed phrase; never a submitted value.")


class ErrorSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=ERROR_CODES)
    details = ErrorDetailSerializer(many=True)


class ErrorEnvelopeSerializer(serializers.Serializer):
    error = ErrorSerializer()

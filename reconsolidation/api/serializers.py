"""Output shapes of the operation routes: DRF serializers that render
``reconsolidation.selectors.operation_views`` values. The HTTP views and the ``memory_reconsolidations``
command both render through ``render_operation`` / ``render_page``, so the CLI's ``--json``
is the HTTP body. Field order is the wire order; nothing outside the allowlist is declared
here, so nothing else can be rendered.
"""
from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer

from reconsolidation.domain import OPERATION_KINDS, OPERATION_STATES
from reconsolidation.services.exact_copies import OUTCOMES as EXACT_OUTCOMES


def inline_enum(values, *, nullable: bool = False, help_text: str = ""):
    """A string field documented as an enum (nullable when asked), rendered as given."""
    schema = {"type": "string", "enum": list(values) + ([None] if nullable else [])}
    if nullable:
        schema["nullable"] = True

    @extend_schema_field(schema)
    class InlineEnum(serializers.CharField):
        pass

    return InlineEnum(allow_null=nullable, help_text=help_text or None)


ROLES = ("member", "clause", "omitted", "input")


class SourceLinkSerializer(serializers.Serializer):
    memory_id = serializers.UUIDField()
    content_revision = serializers.IntegerField(min_value=1)
    role = inline_enum(ROLES, help_text=(
        "member: a merge member; clause: cited by a summary clause; omitted: a summary input no clause cites; "
        "input: any other kind's input."))


class ClauseSerializer(serializers.Serializer):
    text = serializers.CharField()
    source_ids = serializers.ListField(child=serializers.UUIDField())


class OperationContentSerializer(serializers.Serializer):
    record_kind = serializers.CharField(allow_null=True, help_text="summary, hypothesis, or null (other kinds).")
    derived_id = serializers.UUIDField(allow_null=True, help_text="The active derived memory, if any.")
    canonical_id = serializers.UUIDField(allow_null=True, help_text="A committed merge's canonical original.")
    clauses = ClauseSerializer(many=True)


class OperationSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    # A plain string, not an enum: clients keep unknown future kinds inspectable (spec).
    kind = serializers.CharField(help_text="One of: " + ", ".join(OPERATION_KINDS) + " (more may be added).")
    state = inline_enum(OPERATION_STATES)
    revision = serializers.IntegerField(min_value=1)
    reason = serializers.CharField(allow_blank=True)
    policy = serializers.CharField()
    model_identity = serializers.CharField()
    created_at = serializers.DateTimeField()
    committed_at = serializers.DateTimeField(allow_null=True)
    invalidated_at = serializers.DateTimeField(allow_null=True)
    undone_at = serializers.DateTimeField(allow_null=True)
    content = OperationContentSerializer(allow_null=True, help_text=(
        "Null unless every required source is available under the ceiling."))
    sources = SourceLinkSerializer(many=True, help_text="Empty unless every required source is available.")


class OperationPageSerializer(serializers.Serializer):
    items = OperationSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class ExactApprovalSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="operation_id")
    outcome = inline_enum(EXACT_OUTCOMES, help_text=(
        "approved; replayed (approved earlier under this Idempotency-Key); stale_revision (another revision "
        "than the one sent); not_pending (no longer a proposal); sources_changed (a member changed since); "
        "conflict (another reason it cannot be approved now); not_exact_copy (not a pending exact-copy "
        "merge: left alone); not_found (unknown, foreign or above the ceiling)."))
    revision = serializers.IntegerField(min_value=1, allow_null=True, help_text=(
        "The operation's revision now; null when not_found."))


class ExactApprovalsSerializer(serializers.Serializer):
    approved = serializers.IntegerField(min_value=0, help_text="How many items are approved (or replayed).")
    items = ExactApprovalSerializer(many=True, help_text="One answer per operation sent, in the order sent.")


def render_exact_approvals(answers) -> dict:
    return ExactApprovalsSerializer({"approved": sum(1 for a in answers if a.approved), "items": answers}).data


def render_operation(value) -> dict:
    return OperationSerializer(value).data


def render_page(value) -> dict:
    return OperationPageSerializer(value).data


def to_json(data) -> str:
    """Bytes exactly as the HTTP API renders them (DRF's JSONRenderer)."""
    return JSONRenderer().render(data).decode("utf-8")

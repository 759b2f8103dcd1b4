"""Staff admin for reconsolidation's content-free tables: jobs and their leases and
coverage counters, queued groups, anchor receipts, operation metadata, dependencies and
equivalence members (opaque IDs and revisions), spend reservations with their closed call
audit (the day totals are memory's spend ledger), and the audit log (event, reason code, integer counts).

Not registered, on purpose: derived memories (summary and hypothesis clauses are owner
prose) and blocks (a claim signature of a short claim can be confirmed by guessing).
Neither carries the staff policy.
"""
from django.contrib import admin

from reconsolidation.models import (
    ReconsolidationAnchorReceipt, ReconsolidationAudit, ReconsolidationDependency, ReconsolidationGroup,
    ReconsolidationJob, ReconsolidationMember, ReconsolidationOperation, ReconsolidationSpend,
)
from veetbot.admin import ContentFreeAdmin

OWNER = ("tenant_id", "principal_id")


@admin.register(ReconsolidationJob)
class JobAdmin(ContentFreeAdmin):
    fields = (
        "id", *OWNER, "policy", "due_day", "state", "revision", "attempt_count", "lease_owner", "lease_token",
        "lease_expires_at", "slice_started_at", "full_generation", "full_high_watermark", "full_start_key",
        "full_cursor_sequence", "full_change_watermark", "generation_started_at", "changed_cursor_seq",
        "full_scanned", "changed_scanned", "excluded", "groups_queued", "not_selected", "created_at", "updated_at",
        "completed_at",
    )
    list_display = (
        "id", *OWNER, "due_day", "state", "attempt_count", "lease_expires_at", "full_generation", "full_scanned",
        "changed_scanned", "groups_queued", "not_selected", "updated_at",
    )
    list_filter = ("state", "policy", "due_day")
    ordering = ("-due_day", "id")


@admin.register(ReconsolidationGroup)
class GroupAdmin(ContentFreeAdmin):
    fields = (
        "id", *OWNER, "job", "policy", "anchor_id", "lane", "input_ids", "input_revisions", "input_digest",
        "fence_generation", "state", "attempt_count", "retry_count", "reason", "lease_token", "leased_at",
        "created_at", "updated_at", "finished_at",
    )
    list_display = ("id", *OWNER, "job_id", "lane", "state", "attempt_count", "retry_count", "reason", "created_at")
    list_filter = ("state", "lane", "reason")
    search_fields = (*ContentFreeAdmin.search_fields, "job_id__exact")
    ordering = ("-created_at", "id")


@admin.register(ReconsolidationAnchorReceipt)
class AnchorReceiptAdmin(ContentFreeAdmin):
    fields = (
        "id", *OWNER, "job", "policy", "memory_id", "content_revision", "lane", "generation", "full_generation",
        "outcome", "reason", "group_id", "recorded_at",
    )
    list_display = ("id", *OWNER, "memory_id", "lane", "generation", "outcome", "reason", "recorded_at")
    list_filter = ("outcome", "lane", "reason")
    search_fields = (*ContentFreeAdmin.search_fields, "memory_id__exact", "job_id__exact")
    ordering = ("-recorded_at", "id")


@admin.register(ReconsolidationOperation)
class OperationAdmin(ContentFreeAdmin):
    fields = (
        "id", *OWNER, "group", "kind", "state", "revision", "policy", "model_identity", "evidence_identity",
        "input_ids", "input_revisions", "input_digest", "slice_token", "reason", "created_at", "committed_at",
        "invalidated_at", "undone_at", "updated_at",
    )
    list_display = ("id", *OWNER, "kind", "state", "revision", "reason", "created_at", "updated_at")
    list_filter = ("kind", "state", "reason")
    search_fields = (*ContentFreeAdmin.search_fields, "group_id__exact", "slice_token__exact")
    ordering = ("-created_at", "-id")


@admin.register(ReconsolidationDependency)
class DependencyAdmin(ContentFreeAdmin):
    fields = ("id", *OWNER, "operation", "memory_id", "content_revision", "session_id", "event_id", "evidence_at")
    list_display = ("id", *OWNER, "operation_id", "memory_id", "content_revision", "event_id", "evidence_at")
    search_fields = (*ContentFreeAdmin.search_fields, "operation_id__exact", "memory_id__exact")
    ordering = ("-evidence_at", "id")


@admin.register(ReconsolidationMember)
class MemberAdmin(ContentFreeAdmin):
    fields = ("id", *OWNER, "operation", "canonical_id", "member_id", "active", "created_at", "deactivated_at")
    list_display = ("id", *OWNER, "operation_id", "canonical_id", "member_id", "active", "created_at", "deactivated_at")
    list_filter = ("active",)
    search_fields = (*ContentFreeAdmin.search_fields, "operation_id__exact", "member_id__exact")
    ordering = ("-created_at", "id")


@admin.register(ReconsolidationSpend)
class SpendAdmin(ContentFreeAdmin):
    fields = (
        "id", *OWNER, "job", "group_id", "slice_token", "day", "request_digest", "maximum_usd", "settled_usd",
        "charged_usd", "state", "call_audit", "reserved_at", "settled_at",
    )
    list_display = ("id", *OWNER, "job_id", "day", "state", "maximum_usd", "settled_usd", "charged_usd", "reserved_at")
    list_filter = ("state", "day")
    search_fields = (*ContentFreeAdmin.search_fields, "job_id__exact", "slice_token__exact")
    ordering = ("-reserved_at", "id")


@admin.register(ReconsolidationAudit)
class AuditAdmin(ContentFreeAdmin):
    fields = ("id", *OWNER, "job_id", "group_id", "operation_id", "event", "reason", "counts", "recorded_at")
    list_display = ("id", *OWNER, "event", "reason", "counts", "recorded_at")
    list_filter = ("event", "reason")
    search_fields = (*ContentFreeAdmin.search_fields, "job_id__exact", "group_id__exact", "operation_id__exact")
    ordering = ("-recorded_at", "id")

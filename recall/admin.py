"""Staff admin for recall traces: what a recall did (policy tags, mode, channel, budgets,
opaque IDs, a digest of the rendering, timing), never its query or what it read.

Vectors are not registered: they are derived from owner prose and carry no staff policy.
"""
from django.contrib import admin

from recall.models import RecallTrace
from veetbot.admin import ContentFreeAdmin


@admin.register(RecallTrace)
class RecallTraceAdmin(ContentFreeAdmin):
    fields = (
        "id", "tenant_id", "principal_id", "created_at", "surface", "policy_tags", "selection_mode", "channel",
        "requested_channel", "fallback_reason", "space", "ceiling", "max_items", "max_tokens", "as_of",
        "candidate_ids", "dense_ids", "ranked_ids", "rendered_ids", "rendered_sha256", "rendered_tokens", "elapsed_ms",
    )
    list_display = (
        "id", "tenant_id", "principal_id", "created_at", "surface", "policy_tags", "selection_mode", "channel",
        "fallback_reason", "ceiling", "rendered_tokens", "elapsed_ms",
    )
    list_filter = ("surface", "channel", "selection_mode", "ceiling")
    ordering = ("-created_at", "id")

    @admin.display(description="policy")
    def policy_tags(self, obj: RecallTrace) -> str:
        """The stages that ran, as registered tags (recall.policy): ``recall@1 + semantic@2``."""
        return " + ".join(obj.policy)

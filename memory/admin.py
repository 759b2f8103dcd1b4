"""Staff admin for the content-free memory tables: owner allocators, erasure fences and
the change journal (opaque memory IDs and kinds).

Not registered, on purpose: principals (the display name is the owner's own), tokens
(hash and label), people, sessions (scope names), events and their parts, memories,
sources, revisions (content snapshots), rejections and idempotency receipts. None of them
carries the staff policy, so the staff context could not read them anyway.
"""
from django.contrib import admin

from memory.models import ChangeJournal, ErasureFence, OwnerLock
from veetbot.admin import ContentFreeAdmin

OWNER = ("tenant_id", "principal_id")


@admin.register(OwnerLock)
class OwnerLockAdmin(ContentFreeAdmin):
    """One row per owner: the staff view of which owners exist and how much they hold."""

    fields = ("id", *OWNER, "next_creation_sequence", "next_journal_seq", "next_store_position")
    list_display = fields
    ordering = OWNER


@admin.register(ErasureFence)
class ErasureFenceAdmin(ContentFreeAdmin):
    fields = ("id", *OWNER, "generation", "updated_at")
    list_display = fields
    ordering = ("-updated_at", "id")


@admin.register(ChangeJournal)
class ChangeJournalAdmin(ContentFreeAdmin):
    fields = ("id", *OWNER, "seq", "memory_id", "kind", "content_revision", "recorded_at")
    list_display = fields
    list_filter = ("kind",)
    search_fields = (*ContentFreeAdmin.search_fields, "memory_id__exact")
    ordering = ("-recorded_at", "-seq")

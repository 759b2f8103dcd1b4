"""Staff admin for the content-free memory tables: owner allocators, erasure fences, the
change journal (opaque memory IDs and kinds) and the daily spend ledger (amounts only).

Owners and tokens appear through the content-free staff views of migration 0004 (no
display name, token hash or label). Not registered, on purpose: the principal and token
tables themselves, people, sessions (scope names), events and their parts, memories,
sources, revisions (content snapshots), rejections and idempotency receipts. None of them
carries the staff policy, so the staff context could not read them anyway.
"""
from django.contrib import admin

from memory.models import ChangeJournal, ErasureFence, OwnerLock, SpendDay, StaffOwnerDirectory, StaffTokenDirectory
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


@admin.register(SpendDay)
class SpendDayAdmin(ContentFreeAdmin):
    fields = ("id", *OWNER, "purpose", "day", "charged_usd", "reservations", "updated_at")
    list_display = fields
    list_filter = ("purpose", "day")
    ordering = ("-day", "purpose", "id")


@admin.register(StaffOwnerDirectory)
class OwnerDirectoryAdmin(ContentFreeAdmin):
    fields = ("id", *OWNER, "created_at")
    list_display = fields
    ordering = ("-created_at", "id")


@admin.register(StaffTokenDirectory)
class TokenDirectoryAdmin(ContentFreeAdmin):
    fields = ("id", *OWNER, "scopes", "created_at", "revoked_at", "last_used_at")
    list_display = fields
    ordering = ("-created_at", "id")

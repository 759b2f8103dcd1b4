"""The originals: principals, owner tokens, people, sessions, events with text parts, beliefs
with provenance to exact parts, content revisions, the change journal, erasure fences and
rejections.

Every write goes through ``memory.services`` inside an owner context and records its
journal entry in the same transaction. This app knows nothing of recall or
reconsolidation: they react to changes through ``memory.hooks``.
"""

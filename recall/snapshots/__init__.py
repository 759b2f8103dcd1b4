"""Conversation snapshots: a conversation's first turn freezes its context assembly as a prefix
that every later turn repeats byte for byte; each later turn adds a turn context — the new
items of this turn's own assembly (minus what the prefix holds) and corrections of what the
conversation was told and no longer holds — and the assistant reports what it cited.

``domain`` (values), ``corrections`` (what no longer holds, read), ``selectors`` (reads),
``services`` (turns and citation reports: the writes), ``erasure`` (the generated-copy
fence and the conversation's erasure, registered with ``memory.hooks``).

Never here: prose outside the snapshot's prefix column, a change to an original's evidence,
expiry or content, or a credit to anything the conversation was not given.
"""

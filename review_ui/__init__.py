"""The owner's private, server-rendered review dashboard under /review/: journal, detail,
approve/undo/review actions behind a persistent sign-in cookie. (Built by the owner
surfaces issue.)
"""

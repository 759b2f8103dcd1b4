"""Recall: finds the right originals for a task query within a fixed context budget.

Lexical, structured and semantic (pgvector) candidate arms, hybrid fusion, budgeted
rendering with citations and stage traces. Reads originals through ``memory``; never
writes them. (Built by the recall issue; empty in the foundation.)
"""

"""Recall: finds the right originals for a task query within a fixed context budget.

The retriever (``retriever``) runs candidate arms (``arms/``: lexical, structured, semantic
over pgvector, expansion), ranks them (``ranking/``: fusion, relevance floor), renders the
budgeted context with citations (``render``) and writes a content-free trace (``traces``);
``context/`` assembles a turn's context from several recalls. Reads originals through
``memory``; never writes them. Reconsolidation changes what a recall renders only through
the read-time view it registers in ``hooks``.
"""

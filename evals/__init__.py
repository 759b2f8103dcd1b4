"""Frozen corpora, scorers and benchmark drivers for Veetbot memory.

Everything under ``evals/`` measures the system from the outside: fixture banks in the
memory-bank@1 format enter through the same ``import_memory_bank`` door users and operators use,
scorers read only recorded outputs, and drivers are commands rather than timed unit tests. Nothing
here is imported by the application at runtime, and nothing here may reach into application
internals to seed state the importer would refuse.
"""

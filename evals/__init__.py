"""Frozen corpora, scorers and benchmark drivers for Veetbot memory.

Everything under ``evals/`` measures the system from the outside: fixture banks in the
memory-bank@1 format enter through the same ``import_memory_bank`` door users and operators use,
scorers read only recorded outputs, and drivers are commands rather than timed unit tests. Nothing
here is imported by the application at runtime (the direction check,
``tests/test_dependency_direction.py``, holds it), and nothing here may seed state the importer
would refuse (the bulk builders of ``fixtures.bulk`` write only what it would accept, faster).
"""

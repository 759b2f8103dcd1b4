"""Owner HTTP routes of reconsolidation: the operation journal, undo and review (/v1/memory-reconsolidations)."""

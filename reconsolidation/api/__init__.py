"""Owner HTTP routes of reconsolidation: the operation journal, undo and review
(/v1/memory-reconsolidations), and the derived-memory surface of /v1/memories, which
registers itself with ``memory.api.derived_hook`` when this package loads."""
from reconsolidation.api import derived_surface  # noqa: F401  (registers the surface)

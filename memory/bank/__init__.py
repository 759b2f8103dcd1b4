"""memory-bank@1: import and export of an owner's original memory bank (see
shared/design/memory-bank-format.md).

``parse`` reads JSON strictly, ``validate`` checks the document alone, ``importer`` checks
it against the stored rows and writes it all or nothing through the originals' own
creation and revision paths, ``exporter`` writes what import reads back to the same state.
"""
from memory.bank.exporter import ExportCounts, memory_bank_export
from memory.bank.importer import ImportCounts, memory_bank_import
from memory.bank.validate import FORMAT

__all__ = ["FORMAT", "ExportCounts", "ImportCounts", "memory_bank_export", "memory_bank_import"]

"""Frozen evaluation of memory reconsolidation (dreaming): corpus generator, label-free runtime
inputs, the pure scorer ``reconsolidation-scorer@1`` and its answer F1. See README.md."""

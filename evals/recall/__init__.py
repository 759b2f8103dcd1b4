"""Recall evaluations: the frozen diagnostic corpus and its generator, the stage scorer, and the
diagnostic / LoCoMo / load commands (``python -m evals.recall.<command>``). Commands, not timed tests."""

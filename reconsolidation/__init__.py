"""Reconsolidation ("dreaming"): bounded, leased, budget-reserved maintenance that merges
equivalent beliefs reversibly, writes extractive summaries, proposes tentative hypotheses and
flags conflicts. It never rewrites or deletes an original and is invalidated through
``memory.hooks`` whenever a source changes. (Built by the maintenance issue.)
"""

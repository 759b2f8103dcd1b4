"""The local rules of reconsolidation that are pure functions over ``SourceView`` values:
the merge equivalence key (``equivalence``), the paraphrase guards (``paraphrase``, with
the English they read in ``english``), the extractive summary plan and check (``summaries``)
and update proposals (``updates``). The rules provider (``providers.rules``) proposes with them and the
writers (``writers.apply``) check every proposal against them again at commit, so the
proposer and the commit-time check share one definition.

They sit below the providers and the writers because both use them. Nothing here touches
the database, a clock, a provider or a setting other than the named bounds. The rules of a
hypothesis need the database and the egress patterns, so they live with their writer
(``writers.hypotheses``); a conflict flag is proposed by ``providers.rules`` and needs only
two sources at commit (``writers.apply``).
"""

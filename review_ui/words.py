"""The dashboard's words: what each closed code of the memory system means, said for a
person instead of a counter or enum name.

Only fixed vocabulary lives here (kinds, states, reason codes, modes, channels): never a
statement, subject or query. An unknown code is shown as itself, marked as a code, so a
new reason is still visible rather than hidden.
"""
from __future__ import annotations

KIND = {
    "merge_equivalent": "Merge", "summarize_related": "Summary", "infer_connection": "Connection",
    "flag_conflict": "Conflict", "end_superseded": "Update",
}
# What the row is, in a phrase that says it is not itself an original memory.
KIND_PHRASE = {
    "merge_equivalent": "Duplicates merged into one",
    "summarize_related": "A summary derived from originals",
    "infer_connection": "An inferred, tentative connection",
    "flag_conflict": "Originals that disagree",
    "end_superseded": "A later statement ended an earlier one",
}
STATE = {
    "proposed": "Pending review", "committed": "Active", "rejected": "Rejected", "stale": "Stale",
    "invalidated": "Invalidated", "undone": "Undone",
}
STATE_PHRASE = {
    "proposed": "waiting for your review",
    "committed": "in use",
    "rejected": "you rejected it",
    "stale": "its sources changed before review",
    "invalidated": "no longer in use: a source changed",
    "undone": "you undid it",
}
REASON = {
    "equivalence_key": "the statements match word for word, with the same subject, type, scope and attribution",
    # Local paraphrase merges (reconsolidation.providers.rules.paraphrase): what matched; every guard was checked.
    "paraphrase_reordered": (
        "the same words in another order: same attribution, scope, polarity, type, sensitivity and authority;"
        " identical numbers, dates, times, days, frequencies and names; no difference in negation, modality,"
        " tense, status, comparison, direction, relation, role or reference words (here/there, he/she, or);"
        " the same order around \"than\", \"but\" and \"over\". Proposed only: it waits for you"),
    "paraphrase_restated": (
        "the same words said again in a later message (only the time it was said differs): same subject,"
        " attribution, scope, polarity, type, sensitivity, authority and expiry. Proposed only: it waits for you"),
    "paraphrase_word_forms": (
        "the same claim in other word forms (every differing word is another form of a word on the other side —"
        " an inflection, a spelling, an everyday form such as \"mum\" for \"mother\" or \"daily\" for \"every day\""
        " — or its topic): same attribution, scope, polarity, type, sensitivity and authority; identical numbers,"
        " dates, times, days, frequencies and names; no difference in negation, modality, tense, status,"
        " comparison, direction, relation, role or reference words (here/there, he/she, or);"
        " the same order around \"than\", \"but\" and \"over\". Proposed only: it waits for you"),
    "paraphrase_synonyms": (
        "the same claim with other words that WordNet lists as synonyms in their most frequent sense (each"
        " substitution is named); never antonyms, a kind of the other, a part of it or a sibling: same attribution,"
        " scope, polarity, type, sensitivity and authority; identical numbers, dates, times, days, frequencies and"
        " names; the same people in the same roles; no difference in negation, modality, tense, status,"
        " comparison, direction, relation, role or reference words (here/there, he/she, or);"
        " the same order around \"than\", \"but\" and \"over\". Proposed only: it waits for you"),
    "polarity_difference": "one affirms what another denies about the same subject",
    "value_difference": "they give different values for the same subject",
    "extractive_summary": "related memories about one subject, quoted word for word",
    "provider_merge": "the language model proposed it and local checks confirmed the match",
    "provider_summary": "the language model chose the clauses and local checks confirmed each quote",
    "provider_conflict": "the language model flagged a disagreement",
    "provider_connection": "the language model inferred it from at least two separate messages",
    "revised": "a source memory was corrected",
    "retracted": "a source memory was retracted",
    "expired": "a source memory expired",
    "erased": "a source memory was erased",
    "read_validation": "a source no longer passes the checks",
    "source_changed": "a source memory changed",
    "superseded_by_union": "replaced by a larger merge of the same duplicates",
    "summary_revision": "related memories about one subject, quoted word for word: it replaces a pending summary of"
                        " the same subject",
    "summary_update": "an update of a summary in use: approving it replaces that summary",
    "summary_revised": "replaced by a newer summary of the same subject",
    "superseded_by_update": "replaced by an approved update",
    # Updates (end_superseded): why the later statement ends the earlier one.
    "move": "a later statement says the holder moved away; approving it ends the earlier statement",
    "settled": "a later statement says where the holder settled after a move; approving it ends the earlier one",
    "residence_change": "a later statement places the holder somewhere else; approving it ends the earlier one",
    "polarity_change": "a later statement says the opposite; approving it ends the earlier one",
    "stated_change": "a later statement says this changed; approving it ends the earlier one",
    "owner_undo": "you undid it",
    "owner_rejection": "you rejected it",
    "owner_not_true": "you marked it not true",
    "owner_deleted": "you deleted it",
}
MODE = {
    "reviewed": "Reviewed: dreaming proposes, and nothing is used until you approve it.",
    "unattended": "Unattended: proposals that pass the evidence checks are applied without review.",
    "refused": "The mode setting is not valid, so dreaming records nothing.",
}
CHANNEL = {
    "hybrid": "keywords and meaning together",
    "sparse": "keywords only",
    "dense": "meaning only",
}
FALLBACK = {
    "": "",
    "semantic_disabled": "Search by meaning is switched off here, so this used keywords only.",
    "encoder_unavailable": "The meaning encoder could not be used, so this used keywords only.",
    "recent_selection": "This listed the newest memories instead of searching.",
    "egress_refused": "The question could not be sent to the remote meaning encoder, so this used keywords only.",
}
RECORD_KIND = {
    "belief": "Original memory",
    "summary": "Summary (derived from originals, not an original)",
    "hypothesis": "Connection (inferred and tentative, not an original)",
}
MEMORY_STATUS = {"active": "active", "retracted": "retracted", "expired": "expired", "deleted": "erased"}


def reason(code: str) -> str:
    """The reason in words; an unknown code stays visible as a code."""
    if not code:
        return ""
    return REASON.get(code, f"reason code {code}")


def plural(count: int, one: str, many: str = "") -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"

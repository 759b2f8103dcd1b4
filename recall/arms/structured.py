"""The structured arm: permitted originals about what the query names, in two tiers.

Tier 0: the original's entity IDs overlap the request's, or its normalised subject is a
whole phrase of the normalised query. Tier 1: its type is an anchor type. Ranked by tier,
then store position desc, then ID, and limited in SQL after every hard predicate. A request
without entity IDs or anchor types leaves that test out of the statement. The arm runs in
the same statement as the lexical arm (``recall.arms.sparse``).

The broad anchors come from ``anchor_types``: the request's explicit belief types, else a
small keyword table over the query's words (``ANCHOR_KEYWORDS``). It is deliberately small
and transparent — a baseline, not an intent classifier — and an anchor only orders
candidates; it never filters any out.
"""
from __future__ import annotations

import re
from typing import Optional, Sequence

from recall.arms.permitted import permitted_probe

# Words (lower case, whole words of the query; a trailing "*" matches any ending) that
# suggest which belief types a query is about. Tier-1 anchors enter fusion with the same
# rank weights as term matches, so words common in any question ("have", "when", "work")
# are deliberately absent: they would pull a whole type's newest beliefs into every context.
ANCHOR_KEYWORDS: dict[str, tuple[str, ...]] = {
    "preference": ("prefer*", "like", "likes", "liked", "favorite*", "favourite*", "love*", "hate*",
                   "dislike*", "enjoy*", "rather"),
    "constraint": ("allerg*", "cannot", "can't", "must", "never", "avoid*", "constraint*", "intoleran*",
                   "restriction*", "forbidden"),
    "relationship": ("wife", "husband", "partner", "friend*", "mother", "father", "mom", "mum", "dad",
                     "sister*", "brother*", "son", "daughter*", "colleague*", "boss", "family",
                     "relationship*"),
    "goal": ("goal*", "aim*", "want", "wants", "plan", "plans", "planning", "hope*", "target*"),
    "project": ("project*", "build*", "launch*"),
    "decision": ("decide*", "decision*", "chose", "choose", "chosen", "picked", "settled"),
    "routine": ("routine*", "usually", "every", "daily", "weekly", "morning*", "evening*", "habit*",
                "schedule*"),
    "resource": ("owns", "car", "laptop", "phone", "bike", "account*", "device*"),
    "attribute": ("age", "birthday", "born", "height", "name", "live", "lives", "address", "job"),
    "event": ("happened", "trip", "visit*", "meeting*", "appointment*"),
}
_WORD = re.compile(r"[a-z0-9']+")


def anchor_types(query: str, explicit: Sequence[str] = ()) -> list[str]:
    """The belief types the structured arm anchors on, in the table's order."""
    if explicit:
        return sorted(set(explicit))
    words = set(_WORD.findall(query.lower()))
    found = []
    for belief_type, keywords in ANCHOR_KEYWORDS.items():
        for keyword in keywords:
            if keyword.endswith("*"):
                hit = any(word.startswith(keyword[:-1]) for word in words)
            else:
                hit = keyword in words
            if hit:
                found.append(belief_type)
                break
    return found


# Longer than any normalised subject can be (subjects are at most 200 characters,
# memory.domain.MemoryContent; normalising never lengthens ASCII and rarely anything else).
SUBJECT_KEY_MAX_CHARS = 400


def subject_phrases(phrase_query: str) -> list[str]:
    """Every run of consecutive words of the normalised query, up to SUBJECT_KEY_MAX_CHARS.

    A subject is a whole phrase of the query exactly when its normalised key is one of
    these (both are lower-case words of letters and digits joined by single spaces), so
    ``subject_key = ANY(phrases)`` — an equality a btree index serves — replaces testing
    every subject against the query with ``strpos``. A query of n words has at most
    n(n+1)/2 phrases, far fewer for long queries (the length bound).
    """
    words = [w for w in phrase_query.split(" ") if w]
    phrases: dict[str, None] = {}
    for start, word in enumerate(words):
        phrase = word
        phrases[phrase] = None
        for following in words[start + 1:]:
            if len(phrase) + 1 + len(following) > SUBJECT_KEY_MAX_CHARS:
                break
            phrase = f"{phrase} {following}"
            phrases[phrase] = None
    return list(phrases)


def indexed(*, entities: bool, anchors: bool) -> tuple[str, str]:
    """A current recall's (``tier0`` CTE, arm rows).

    Tier 0: subjects equal to one of the query's word runs (``subject_phrases``; the btree
    ``memory_recon_subject`` serves the equality) and ``recall_entity_matches`` (GIN), each
    probed in ``permitted``. Tier 1: per anchor type, the newest permitted beliefs of that
    type in ``memory_recall_type_order`` order, stopping at ``limit``; tier-0 rows are not
    repeated.
    """
    exact = ["SELECT p.id, p.store_position FROM permitted p WHERE p.subject_key = ANY(%(subject_keys)s::text[])"]
    if entities:
        exact.append(f"""SELECT p.id, p.store_position
            FROM recall_entity_matches(%(entity_ids)s::varchar[]) e
            CROSS JOIN LATERAL ({permitted_probe("e", revision=False)}) p""")
    tier0 = f"""
    tier0 AS MATERIALIZED (
        {" UNION ".join(exact)}
    )"""
    structured = ["(SELECT id, store_position, 0 AS tier FROM tier0 ORDER BY store_position DESC, id LIMIT %(limit)s)"]
    if anchors:
        structured.append("""(SELECT a.id, a.store_position, 1 AS tier
         FROM unnest(%(anchor_types)s::text[]) AS t(belief_type)
         CROSS JOIN LATERAL (
             SELECT p.id, p.store_position FROM permitted p
             WHERE p.belief_type = t.belief_type AND NOT (p.id = ANY(ARRAY(SELECT id FROM tier0)))
             ORDER BY p.store_position DESC, p.id
             LIMIT %(limit)s
         ) a)""")
    rows = f"""(SELECT 'structured', id, store_position, tier FROM (
        {" UNION ALL ".join(structured)}
    ) s ORDER BY tier, store_position DESC, id LIMIT %(limit)s)"""
    return tier0, rows


def scan_tests(*, entities: bool, anchors: bool) -> tuple[str, Optional[str], str]:
    """A historical recall's (exact match, anchored, tier) expressions over each scanned
    row ``p`` and its normalised subject ``d.subject``, computed once."""
    exact = ["(d.subject <> '' AND strpos(%(phrase_query)s, ' ' || d.subject || ' ') > 0)"]
    if entities:
        exact.insert(0, "p.entity_ids && %(entity_ids)s::text[]")
    exact_match = " OR ".join(exact)
    anchored = "p.belief_type = ANY(%(anchor_types)s::text[])" if anchors else None
    tier = f"CASE WHEN {exact_match} THEN 0" + (f" WHEN {anchored} THEN 1" if anchored else "") + " END"
    return exact_match, anchored, tier


SCAN_ROWS = """(SELECT 'structured', id, store_position, tier FROM scored WHERE tier IS NOT NULL
     ORDER BY tier, store_position DESC, id LIMIT %(limit)s)"""

"""Paraphrase guards with word meaning (issue 31): two statements may differ in a content word
only when WordNet lists both words in one synset as each word's dominant sense; every other
guard still applies after the substitution; the proposal names each substitution; and a
synonym merge is proposed only — unattended mode never commits it."""
from __future__ import annotations

import pytest

from reconsolidation.providers.rules import paraphrase
from reconsolidation.providers.rules import provider as rules
from reconsolidation.work.process import process_group
from review_ui.triage import merge_reason_words
from tests.factories import make_owner
from tests.reconsolidation.evidence.test_unattended_mode import report
from tests.reconsolidation.helpers import original
from tests.reconsolidation.providers.rules.test_paraphrase_guards import view
from tests.reconsolidation.work_builders import active_members, approve, by_kind, claimed_group


@pytest.mark.parametrize("a, b, said", [
    ("The owner wants a quiet flat.", "The owner would like a quiet flat.", (("wants", "would like"),)),
    ("The owner wants a quiet flat.", "The owner desires a quiet flat.", (("wants", "desires"),)),
    ("The owner bought a sofa.", "The owner purchased a couch.", (("bought", "purchased"), ("sofa", "couch"))),
    ("The owner's doctor works in Ghent.", "The owner's physician works in Ghent.", (("doctor", "physician"),)),
    ("The owner hates loud films.", "The owner detests loud movies.", (("hates", "detests"), ("films", "movies"))),
    ("The owner wants to visit Rome.", "The owner hopes to visit Rome.", (("wants", "hopes"),)),
    ("The owner would love to visit Rome.", "The owner wishes to visit Rome.", (("would love", "wishes"),)),
    ("The owner rents a flat in Leeds.", "The owner rents an apartment in Leeds.", (("flat", "apartment"),)),
    ("The owner is on holiday in Spain.", "The owner is on vacation in Spain.", (("holiday", "vacation"),)),
])
def test_synonyms_in_their_dominant_sense_match_and_each_substitution_is_named(a, b, said):
    verdict = paraphrase.check(view(a, 1), view(b, 2))
    assert (verdict.match, verdict.substitutions) == (paraphrase.MATCH_SYNONYMS, said)
    assert paraphrase.check(view(b, 2), view(a, 1)).match == paraphrase.MATCH_SYNONYMS


@pytest.mark.parametrize("a, b, guard", [
    ("The owner wants a quiet flat.", "The owner desires two quiet flats.", "numbers"),
    ("The owner wants a quiet flat.", "The owner doesn't desire a quiet flat.", "negation"),
    ("The owner wants a quiet flat.", "The owner might desire a quiet flat.", "modality"),
    ("The owner wanted a quiet flat.", "The owner desires a quiet flat.", "tense"),
    ("The owner would like a quiet flat.", "The owner wanted a quiet flat.", "modality"),
    ("The owner wants a flat in Ghent.", "The owner desires a flat in Bruges.", "entities"),
    ("The owner bought a sofa on Monday.", "The owner purchased a couch on Friday.", "calendar"),
    ("The owner's doctor is Sam.", "Sam's physician is the owner.", "participants"),
    ("The owner's sister bought a sofa.", "The owner's brother purchased a couch.", "relation"),
    ("The owner wants tea.", "The owner desires coffee.", "content"),
    ("The owner hopes to visit Rome.", "The owner plans to visit Rome.", "content"),  # a plan is no wish
    ("The owner would love to visit Rome.", "The owner loves to visit Rome.", "modality"),  # a habit
    ("The owner hopes to visit Rome.", "The owner hoped to visit Rome.", "tense"),
    ("The owner hopes to visit Rome.", "Sam hopes to visit Rome.", "entities"),
    ("The owner rents a flat in Leeds.", "The owner rents two apartments in Leeds.", "numbers"),
    ("The owner's flat is in Leeds.", "The owner's sister's apartment is in Leeds.", "relation"),
])
def test_every_guard_still_applies_after_a_substitution(a, b, guard):
    assert paraphrase.check(view(a, 1), view(b, 2)).refused == guard


@pytest.mark.parametrize("a, b", [
    ("The owner calls the bank on Mondays.", "The owner names the bank on Mondays."),  # call: name in 30 % of uses
    ("The owner's sister is a nurse.", "The owner's sister is a nanny."),  # nanny is nurse's second sense
    ("The owner's bike is blue.", "The owner's bicycle is blue."),  # the noun bike is first a motorcycle
    ("The owner wants a new laptop.", "The owner needs a new laptop."),  # share only "require"
    ("The owner owns a poodle.", "The owner owns a dog."),
    ("The owner loves jazz.", "The owner hates jazz."),
])
def test_shared_rare_senses_kinds_and_antonyms_never_match(a, b):
    assert not paraphrase.check(view(a, 1), view(b, 2)).ok


def test_the_dashboard_names_each_substitution_of_a_synonym_merge():
    statements = ["The owner wants a quiet flat.", "The owner would like a quiet flat."]
    said = merge_reason_words(paraphrase.MATCH_SYNONYMS, statements)
    assert said.endswith("; wants \u2194 would like: synonyms") and "Proposed only" in said
    assert "synonyms" not in merge_reason_words(paraphrase.MATCH_WORD_FORMS, statements).split(";")[-1]


def test_unattended_mode_never_commits_a_synonym_merge(db, enabled, store, day_one, settings, tmp_path):
    settings.AGENT_MEMORY_RECONSOLIDATION_MODE = "unattended"
    settings.AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = report(tmp_path / "r.json")
    owner = make_owner()[0]
    a = original(owner, "The owner wants a quiet flat.", subject="housing")
    b = original(owner, "The owner would like a quiet flat.", subject="housing")
    lease, group = claimed_group(store, owner, [a, b], day_one)
    ops = process_group(store, owner, group, now=day_one)
    store.release(owner, lease.lease_token, now=day_one)
    (merge,) = by_kind(ops, "merge_equivalent")
    assert (merge.reason, merge.state) == (paraphrase.MATCH_SYNONYMS, "proposed")
    assert active_members(owner) == set()
    assert approve(store, owner, merge, day_one).state == "committed"  # the owner's approval re-checks and commits
    assert {m[2] for m in active_members(owner)} == {a.id, b.id}


def test_the_rules_provider_proposes_synonyms_only_where_the_guards_pass():
    views = [view("The owner wants a quiet flat.", 1), view("The owner desires a quiet flat.", 2),
             view("The owner needs a quiet flat.", 3)]
    (merge,) = by_kind(rules.propose(views), "merge_equivalent")
    assert merge.reason == paraphrase.MATCH_SYNONYMS
    assert {ref.memory_id for ref in merge.inputs} == {views[0].memory_id, views[1].memory_id}

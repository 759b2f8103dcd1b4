"""References by gloss (issue 31 item 3): a description by relative clause is followed by a
search for the role nouns whose WordNet gloss accounts for every word of it, within the same
bound on reference searches."""
from __future__ import annotations

import pytest

from recall.context import former, references
from recall.context.former import ContextNeed
from recall.lexicon import roles


@pytest.mark.parametrize("words, expected", [
    (("repairs", "car"), ("mechanic",)),  # "someone whose occupation is repairing and maintaining automobiles"
    (("bookkeeping",), ("bookkeeper",)),  # the noun the activity makes
    (("cuts", "hair"), ("barber", "hairdresser", "hairstylist")),
    (("repairs", "car", "violin"), ()),  # saying more than any gloss resolves to nothing
    ((), ()), (("a", "b", "c", "d", "e"), ()),
])
def test_a_description_resolves_to_the_roles_whose_gloss_accounts_for_every_word(words, expected):
    assert roles.roles(words) == expected


def test_only_a_relative_clause_is_a_description():
    assert references.description_words("the guy who repairs my car") == ("repairs", "car")
    assert references.description_words("the person that does my bookkeeping") == ("bookkeeping",)
    assert references.description_words("my male sibling") == ()
    assert references.described_roles("my male sibling") == ""
    assert references.described_roles("the guy who repairs my car") == "mechanic"


_CAR = "Where is the garage of the guy who repairs my car?"


@pytest.mark.parametrize("callers, expected", [
    ((), ["the guy who repairs my car", "mechanic"]),  # the description, then its roles
    (("the person who does my bookkeeping",), ["the person who does my bookkeeping", "bookkeeper"]),  # caller first
    (("my male sibling",), ["my male sibling", "the guy who repairs my car"]),  # no roles: room for the next
])
def test_round_two_searches_each_description_then_its_roles_within_the_reference_bound(callers, expected):
    need = ContextNeed(current_message=_CAR, unresolved_references=callers)
    plan = former.second_round(need, [], query=need.current_message, room=3, subjects=False)
    assert former.REFERENCE_SEARCHES == len(expected)
    assert [(s.purpose, s.query) for s in plan] == [("reference", text) for text in expected]


def test_context_assembly_finds_the_memory_that_names_the_role(db):
    from tests.recall.context.test_context_assembly import assemble
    from tests.recall.helpers import Bank

    bank = Bank.new("Gloss owner")
    mechanic = bank.add("Joost is the owner's mechanic; his garage is in Delft.", subject="Joost")
    bank.add("The owner bakes sourdough on Sundays.", subject="baking")
    # a fixed clock: this test is about what is searched, not about the deadline on a busy machine
    result = assemble(bank, ContextNeed(current_message="Which town is the guy who repairs my car based in?"),
                      monotonic=lambda: 0.0)
    assert mechanic in [item.id for item in result.items], (result.searches, result.stopped, result.notices)
    assert [(s.round, s.purpose) for s in result.searches][:2] == [(1, "message"), (2, "reference")]

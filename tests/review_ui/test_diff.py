"""The word-level difference a merge row marks: only the words one side has and the other
lacks, joined into runs; identical statements mark nothing."""
from __future__ import annotations

from review_ui.diff import Segment, word_diff


def test_the_differing_words_of_each_side_are_marked_in_runs():
    first, second = word_diff(["The owner is allergic to cats.", "The owner has a cat allergy."])
    assert first == (Segment("The owner", False), Segment("is allergic to cats.", True))
    assert second == (Segment("The owner", False), Segment("has a cat allergy.", True))


def test_identical_statements_mark_nothing_and_whitespace_is_not_a_difference():
    first, second = word_diff(["Paid  30 EUR", "Paid 30 EUR"])
    assert first == second == (Segment("Paid 30 EUR", False),)


def test_with_three_sides_the_first_marks_what_any_other_lacks():
    first, second, third = word_diff(["a b c", "a b c", "a c"])
    assert first == (Segment("a", False), Segment("b", True), Segment("c", False))
    assert second == (Segment("a b c", False),) and third == (Segment("a c", False),)


def test_case_and_punctuation_are_differences():
    first, second = word_diff(["paid 30 eur.", "Paid 30 EUR"])
    assert first == (Segment("paid", True), Segment("30", False), Segment("eur.", True))
    assert second == (Segment("Paid", True), Segment("30", False), Segment("EUR", True))

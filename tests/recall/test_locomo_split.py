"""The LoCoMo harness's tuning split: conversations 0-4 of the file tune, 5-9 are held out."""
from evals.recall.locomo import split_of


def test_the_first_five_conversations_are_development_and_the_rest_holdout():
    assert [split_of(i) for i in range(10)] == ["development"] * 5 + ["holdout"] * 5

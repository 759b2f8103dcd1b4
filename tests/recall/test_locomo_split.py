"""The LoCoMo harness's tuning split: conversations 0-4 of the file tune, 5-9 are held out."""
from evals.recall.locomo import split_of


def test_the_first_five_conversations_are_development_and_the_rest_holdout():
    assert [split_of(i) for i in range(10)] == ["development"] * 5 + ["holdout"] * 5


def test_a_missing_data_file_is_a_usage_error_naming_it(tmp_path, capsys):
    import pytest

    from evals.recall.locomo import parse_args

    missing = tmp_path / "locomo10.json"
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--data", str(missing)])
    assert exit_info.value.code == 2
    assert f"--data {missing}: no such file" in capsys.readouterr().err

"""The WordNet lexicon (recall.lexicon.wordnet): synonyms only in a dominant shared sense, every
closer-looking relation refused, and committed tables that are exactly what the build script
makes from the WordNet files they name."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from recall.lexicon import build_tables, roles, wordnet


def rel(a: str, b: str) -> str:
    return wordnet.relation(tuple(a.split()), tuple(b.split())).kind


@pytest.mark.parametrize("a, b", [("wants", "desires"), ("bought", "purchased"), ("sofa", "couch"),
                                  ("film", "movie"), ("doctor", "physician"), ("begins", "starts"),
                                  ("kid", "child"), ("big", "large"), ("hates", "detests")])
def test_words_sharing_a_dominant_sense_are_synonyms(a, b):
    assert rel(a, b) == wordnet.SYNONYMS
    assert rel(b, a) == wordnet.SYNONYMS


@pytest.mark.parametrize("a, b, kind", [
    ("hot", "cold", wordnet.ANTONYMS), ("likes", "dislikes", wordnet.ANTONYMS),
    ("employer", "employee", wordnet.ANTONYMS), ("buys", "sells", wordnet.ANTONYMS),
    ("dog", "hound", wordnet.HYPERNYM), ("animal", "dog", wordnet.HYPERNYM), ("apple", "fruit", wordnet.HYPONYM),
    ("tea", "coffee", wordnet.CO_HYPONYMS), ("cello", "violin", wordnet.CO_HYPONYMS),
    ("cats", "dogs", wordnet.UNRELATED), ("wants", "needs", wordnet.UNRELATED), ("likes", "loves", wordnet.UNRELATED),
    ("calls", "names", wordnet.UNRELATED), ("repairs", "fixes", wordnet.UNRELATED),
    ("wants", "hopes", wordnet.HYPERNYM), ("buys", "bought", wordnet.UNRELATED),
])
def test_antonyms_kinds_siblings_and_rare_shared_senses_are_not_synonyms(a, b, kind):
    assert rel(a, b) == kind


def test_phrases_are_looked_up_with_one_word_inflected():
    assert ("take_care", "v") in wordnet.lemmas(("takes", "care"))
    assert ("give_up", "v") in wordnet.lemmas(("gave", "up"))
    assert ("go", "v") in wordnet.lemmas(("went",))


@pytest.mark.parametrize("a, b", [("prefers", "preference"), ("decided", "decision"), ("curious", "curiosity"),
                                  ("intends", "intention"), ("attending", "attendance")])
def test_words_derived_one_from_the_other_are_linked_in_any_form(a, b):
    assert wordnet.derived(a, b) and wordnet.derived(b, a)


@pytest.mark.parametrize("a, b", [("employs", "employer"), ("employs", "employee"), ("trains", "trainer"),
                                  ("teaches", "teacher"), ("likes", "dislikes"), ("cat", "dog"), ("prefers", "prefers")])
def test_person_nouns_unrelated_words_and_the_same_word_are_not_derivations(a, b):
    assert not wordnet.derived(a, b)


def test_person_nouns_are_known_in_any_form_and_verbs_are_not():
    assert roles.is_person("trainers") and roles.is_person("coach") and roles.is_person("employee")
    assert not roles.is_person("trains") and not roles.is_person("coaching") and not roles.is_person("preference")


def test_tables_load_once_per_process():
    assert wordnet.tables() is wordnet.tables()


@pytest.mark.skipif(not (build_tables.SOURCE_DIR / "data.noun").exists(), reason="wordnet-base is not installed")
def test_committed_tables_are_what_the_build_makes_from_the_named_source(tmp_path):
    source = (wordnet.TABLES / "SOURCE").read_text().splitlines()
    for line in source[2:]:
        name, digest = line.split("\t")
        if hashlib.sha256((build_tables.SOURCE_DIR / name).read_bytes()).hexdigest() != digest:
            pytest.skip("the installed WordNet files differ from the ones the tables name")
    build_tables.build(build_tables.SOURCE_DIR, tmp_path)
    for path in sorted(Path(wordnet.TABLES).iterdir()):
        if path.name != "LICENSE":
            assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name

"""Role nouns a description means, found by WordNet gloss: "the guy who repairs my car" →
mechanic ("someone whose occupation is repairing and maintaining automobiles").

``roles(words)`` takes a description's content words (those of its relative clause) and
returns the one-word person nouns (WordNet's ``noun.person``) whose gloss accounts for every
one of them — the same word in another form, or a synonym in the gloss word's dominant
sense ("car" for "automobiles") — or that are derived from one of them ("bookkeeping" →
bookkeeper). Every word must be accounted for, so a description that says more than a
gloss never resolves to it: a role noun is a search key for recall to try, never a claim
about who the person is. The table (``tables/roles.tsv``) loads once per process, lazily;
pure functions otherwise.
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple, Sequence

from recall.lexicon import wordnet

ROLES_MAX = 3  # role nouns one description adds to its search
DESCRIPTION_WORDS_MAX = 4  # a longer description is too specific to be a gloss
# Agent and activity endings: "bookkeep-er" does "bookkeep-ing", "therap-ist" gives "therap-y".
_ENDINGS = ("ers", "er", "ors", "or", "ists", "ist", "ians", "ian", "ings", "ing", "ies", "y", "ics", "ic")
_ROOT_MIN = 4


class Role(NamedTuple):
    noun: str
    gloss: tuple[str, ...]
    derived: tuple[str, ...]
    keys: tuple[str, ...]  # what a description word may match (build_tables: forms and synonyms)


@lru_cache(maxsize=1)
def _table() -> tuple[Role, ...]:
    rows = []
    for line in (wordnet.TABLES / "roles.tsv").read_text(encoding="utf-8").splitlines():
        noun, gloss, derived, keys = line.split("\t")
        rows.append(Role(noun, tuple(gloss.split()), tuple(derived.split()), tuple(keys.split())))
    return tuple(rows)


def _root(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= _ROOT_MIN:
            return word[: len(word) - len(ending)]
    return word


def warm() -> None:
    """Read the role table and its index now (process start), not inside a turn's deadline."""
    _index()


@lru_cache(maxsize=1)
def _index() -> dict[tuple[str, str], frozenset]:
    """key -> the roles it accounts for: each role's precomputed keys (``Role.keys``) and its
    noun's root. Read from one table, no sense table: it builds in a fraction of a second."""
    index: dict[tuple[str, str], set[int]] = {}
    for number, role in enumerate(_table()):
        for key in {("root", _root(role.noun)), *(("form", form) for form in role.keys)}:
            index.setdefault(key, set()).add(number)
    return {key: frozenset(found) for key, found in index.items()}


def _accounted_by(word: str) -> frozenset:
    """The roles whose gloss has ``word`` (another form of it, or a synonym in the gloss word's
    dominant sense), or that are derived from it."""
    index = _index()
    found: set[int] = set(index.get(("root", _root(word)), ()))
    for form in wordnet.base_forms(word):
        found |= index.get(("form", form), frozenset())
    return frozenset(found)


@lru_cache(maxsize=1024)
def roles(words: tuple[str, ...]) -> tuple[str, ...]:
    """At most ``ROLES_MAX`` person nouns (alphabetical) whose gloss accounts for every one of
    the description's content ``words`` (lower case); none for no words or too many."""
    words = tuple(dict.fromkeys(w.lower() for w in words))
    if not words or len(words) > DESCRIPTION_WORDS_MAX:
        return ()
    matched = frozenset.intersection(*(_accounted_by(word) for word in words))
    table = _table()
    return tuple(sorted({table[number].noun for number in matched})[:ROLES_MAX])


@lru_cache(maxsize=1)
def _nouns() -> frozenset:
    return frozenset(role.noun for role in _table())


@lru_cache(maxsize=16384)
def is_person(word: str) -> bool:
    """Whether ``word`` (lower case, any inflection) is a noun for a person in one of its
    senses: "coach", "employers", "trainee" — but not "coaching" or "trains"."""
    nouns = _nouns()
    return any(base in nouns for base in wordnet.bases(word, "n"))


def description_roles(words: Sequence[str]) -> tuple[str, ...]:
    """``roles`` over any sequence of words."""
    return roles(tuple(words))

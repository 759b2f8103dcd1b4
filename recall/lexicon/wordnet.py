"""Word senses from WordNet 3.0: which two words (or phrases) are synonyms, and why not.

``relation(x, y)`` says how two words relate in their frequent senses: ``synonyms`` only when
both words' dominant sense is one synset (WordNet's own unit of "same sense") and nothing
vetoes it;
otherwise the closest refusal (``antonyms``, ``hypernym`` / ``hyponym``, ``co_hyponyms``) or
``unrelated``. Guards that may only equate words of one meaning use ``synonyms`` and nothing
else: similarity of any kind (a shared hypernym, a close vector) is never equivalence
("cat"/"dog" are co-hyponyms, not the same animal).

The tables are generated once by ``build_tables`` from Debian's ``wordnet-base`` and
committed in ``tables/`` with WordNet's licence notice (``tables/LICENSE``); they are read
from disk once per process, lazily, on first use — no network, no system package, no
download, and a fixed size (about 6 MB on disk, about 45 MB in memory once loaded). Pure
functions otherwise: no database, no clock.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import product
from pathlib import Path
from typing import NamedTuple, Optional

TABLES = Path(__file__).resolve().parent / "tables"
POS = ("n", "v", "a", "r")
SYNONYMS, ANTONYMS, HYPERNYM, HYPONYM, CO_HYPONYMS, UNRELATED = (
    "synonyms", "antonyms", "hypernym", "hyponym", "co_hyponyms", "unrelated")
# How far up the hypernym chain a sense may sit above the other and still veto a shared synset
# ("hound" is a "hunting dog" is a "dog": two steps).
HYPERNYM_DEPTH = 4
# A word stands for its first sense only when most of its tagged uses are that sense
# (percent, add-one smoothed): "want" (95) means desire; "call" (36) may mean name or phone.
DOMINANT_SHARE = 50
# WordNet's detachment rules (morphy): inflected ending -> base ending, per part of speech.
_DETACH = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
          ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}


class Tables(NamedTuple):
    senses: dict  # (lemma, pos) -> synset ids, most frequent first
    shares: dict  # (lemma, pos) -> percent of the lemma's tagged uses in its first sense
    hypernyms: dict  # synset id -> its direct hypernym ids
    antonyms: frozenset  # frozenset({lemma, lemma})
    exceptions: dict  # (form, pos) -> base forms


def _sid(text: str) -> int:
    """A synset id as one integer (part of speech in the top digits): compact in memory."""
    return POS.index(text[0]) * 100_000_000 + int(text[1:])


@lru_cache(maxsize=1)
def tables() -> Tables:
    """The committed tables, loaded on first use and kept for the life of the process."""
    senses, shares = {}, {}
    for line in (TABLES / "senses.tsv").read_text(encoding="utf-8").splitlines():
        lemma, pos, share, ids = line.split("\t")
        senses[(lemma, pos)] = tuple(_sid(s) for s in ids.split())
        shares[(lemma, pos)] = int(share)
    hypernyms = {}
    for line in (TABLES / "hypernyms.tsv").read_text(encoding="utf-8").splitlines():
        sid, ups = line.split("\t")
        hypernyms[_sid(sid)] = tuple(_sid(s) for s in ups.split())
    antonyms = frozenset(frozenset(line.split("\t"))
                         for line in (TABLES / "antonyms.tsv").read_text(encoding="utf-8").splitlines())
    return Tables(senses, shares, hypernyms, antonyms, exceptions())


@lru_cache(maxsize=1)
def exceptions(path: Path = TABLES / "exceptions.tsv") -> dict:
    """Irregular inflections, (form, part of speech) -> base forms: loaded on their own, so
    finding base forms (``base_forms``) needs nothing else."""
    found: dict = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        form, pos, base = line.split("\t")
        found.setdefault((form, pos), []).append(base)
    return {key: tuple(value) for key, value in found.items()}


def bases(word: str, pos: str, irregular: Optional[dict] = None) -> set[str]:
    """The base forms of one inflected word in one part of speech (WordNet's morphy), with
    these irregular forms (the committed ones by default)."""
    found = set((exceptions() if irregular is None else irregular).get((word, pos), ()))
    found.add(word)
    for ending, base in _DETACH[pos]:
        if word.endswith(ending) and len(word) > len(ending) + 1:
            found.add(word[: len(word) - len(ending)] + base)
    return found


def _forms(phrase: tuple[str, ...]) -> set[tuple[str, str]]:
    """Every (base form, part of speech) a word or phrase (lower-case tokens) could be: one
    word of the phrase inflected at a time ("looks after" is "look_after")."""
    return {("_".join((*phrase[:at], base, *phrase[at + 1:])), pos)
            for pos in POS for at, word in enumerate(phrase) for base in bases(word, pos)}


@lru_cache(maxsize=1)
def derivations(path: Path = TABLES / "derivations.tsv") -> frozenset:
    """WordNet's derivational links between two words in their frequent senses, each as a
    frozenset of two (lemma, part of speech) pairs; person nouns are left out (``build_tables``)."""
    found = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        a, pos_a, b, pos_b = line.split("\t")
        found.add(frozenset(((a, pos_a), (b, pos_b))))
    return frozenset(found)


@lru_cache(maxsize=16384)
def derived(a: str, b: str) -> bool:
    """Whether WordNet derives one of two words from the other in a frequent sense of each
    ("prefers" / "preference", "decided" / "decision", "curious" / "curiosity"), in any of
    their inflected forms. Not a synonym: the two say one thing as two parts of speech."""
    links = derivations()
    forms_b = _forms((b,))
    return any(frozenset((x, y)) in links for x in _forms((a,)) for y in forms_b if x[0] != y[0])


@lru_cache(maxsize=8192)
def lemmas(phrase: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The (lemma, part of speech) pairs of ``_forms`` that have senses in the tables."""
    senses = tables().senses
    return tuple(sorted(form for form in _forms(phrase) if form in senses))


@lru_cache(maxsize=65536)
def base_forms(word: str) -> frozenset:
    """Every base form one word could have, known to the tables or not ("repairing" → repair)."""
    return frozenset(form for form, _ in _forms((word,)))


@lru_cache(maxsize=4096)
def _ancestors(sid: int, depth: int) -> frozenset:
    hypernyms, seen, frontier = tables().hypernyms, set(), {sid}
    for _ in range(depth):
        frontier = {up for s in frontier for up in hypernyms.get(s, ())} - seen
        seen |= frontier
    return frozenset(seen)


class Relation(NamedTuple):
    kind: str
    lemma_a: str = ""
    lemma_b: str = ""


NOMINAL = frozenset(("n", "a"))  # after a determiner or possessive a word is a noun or an adjective


@lru_cache(maxsize=8192)
def relation(a: tuple[str, ...], b: tuple[str, ...], parts_a: frozenset = frozenset(POS),
             parts_b: frozenset = frozenset(POS)) -> Relation:
    """How the words ``a`` and ``b`` (token tuples) relate in their frequent senses, read only
    as the parts of speech given (``NOMINAL`` after "the"/"'s": "the owner's bike" is not the
    verb "to bike").

    ``synonyms`` needs, in one part of speech, both words' first senses to be one synset and
    to be each word's dominant sense (more than ``DOMINANT_SHARE`` percent of its tagged
    uses): "wants"/"desires" (want: 95 %); not "calls"/"names" (call means name in only a
    third of its uses), not "nurse"/"nanny" (nanny is nurse's second sense), and sharing
    only secondary senses is never enough ("wants"/"needs" share only "require"). No veto in
    any part of speech: the words are not antonyms in
    any sense; and when their first (most frequent) senses differ, neither first sense is a
    hypernym of the other within ``HYPERNYM_DEPTH`` steps (a shared rare sense does not make
    "hound" a "dog") and they are not co-hyponyms (siblings under one hypernym, "tea" and
    "coffee"). Vetoes win over a synonym found in another part of speech.
    """
    t = tables()
    la = tuple(form for form in lemmas(a) if form[1] in parts_a)
    lb = tuple(form for form in lemmas(b) if form[1] in parts_b)
    if {lemma for lemma, _ in la} & {lemma for lemma, _ in lb}:
        return Relation(UNRELATED)  # the same word in other forms: a word-form matter, not a synonym
    # Antonyms over every base form: "employer"/"employee" have no synonyms to keep senses for.
    for (x, _), (y, _) in product(_forms(a), _forms(b)):
        if x != y and frozenset((x, y)) in t.antonyms:
            return Relation(ANTONYMS, x, y)
    found: Optional[Relation] = None
    for (x, px), (y, py) in product(la, lb):
        if px != py:
            continue
        sx, sy = t.senses[(x, px)], t.senses[(y, py)]
        if sx[0] == sy[0]:
            if t.shares[(x, px)] > DOMINANT_SHARE and t.shares[(y, py)] > DOMINANT_SHARE:
                found = found or Relation(SYNONYMS, x, y)
            continue
        # The words' first (most frequent) senses differ: a shared rarer sense counts only if
        # the first senses are not a kind of each other or siblings under one hypernym.
        if sx[0] in _ancestors(sy[0], HYPERNYM_DEPTH):
            return Relation(HYPERNYM, x, y)
        if sy[0] in _ancestors(sx[0], HYPERNYM_DEPTH):
            return Relation(HYPONYM, x, y)
        if set(t.hypernyms.get(sx[0], ())) & set(t.hypernyms.get(sy[0], ())):
            return Relation(CO_HYPONYMS, x, y)
    return found or Relation(UNRELATED)

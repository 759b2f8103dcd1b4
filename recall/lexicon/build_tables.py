"""Build the lexicon's tables from Debian's ``wordnet-base`` (``python -m recall.lexicon.build_tables``).

A maintainer's tool, never run by the product: the product reads the committed tables in
``recall/lexicon/tables/`` (``recall.lexicon.wordnet``), so a fresh clone needs no system
package, no download and no network. The tables are a deterministic function of the
WordNet 3.0 database files (their SHA-256 digests are written to ``tables/SOURCE``): running
this again over the same files rewrites byte-identical tables.

What is kept, and why only that (bounded size and memory):

* ``senses.tsv`` — for each lemma and part of speech, the share (percent) of its first
  sense among its uses in WordNet's sense-tagged corpus (``cntlist.rev``, add-one smoothed
  over all its senses) and its first ``SENSES_PER_LEMMA`` senses in WordNet's frequency
  order; only lemmas whose kept senses include a synset with another lemma (a lemma alone in
  all its frequent senses can have no synonym). The share decides whether a word's first
  sense is what the word means in an owner's sentence ("want" 95 %: desire) or one of many
  ("call" < 50 %: name, phone, visit, shout ...);
* ``hypernyms.tsv`` — the direct hypernyms (and instance hypernyms) of every kept sense and
  of their ancestors: the guard refuses a hyponym/hypernym or co-hyponym pair even when the
  two words also share a synset;
* ``antonyms.tsv`` — WordNet's lexical antonym pairs (refused in every sense);
* ``exceptions.tsv`` — irregular inflections (``went`` → ``go``), WordNet's own ``*.exc``;
* ``roles.tsv`` — every sense of every one-word noun for a person (WordNet's ``noun.person``
  file: mechanic, bookkeeper, plumber ...), one row each, with the content words of that
  sense's gloss and the words WordNet derives it from: the context former finds the role a
  description means ("the guy who repairs my car" → mechanic, "someone whose occupation is
  repairing and maintaining automobiles"). Its last column is what a description's word may
  match: the base forms of the gloss words and of the derived-from words, and the lemmas
  whose dominant sense is a gloss word's dominant sense ("automobiles" → car): computed here,
  so the product's first use needs no sense table;
* ``derivations.tsv`` — WordNet's derivational links between two words ("prefer" /
  "preference", "decide" / "decision", "curious" / "curiosity"), each as a pair of
  (lemma, part of speech), kept only between one of each word's first ``SENSES_PER_LEMMA``
  senses and never to or from a noun one of whose first senses is a person: "employer"
  and "employee" both derive from "employ", and which of them one is, is what a
  statement says.
"""
from __future__ import annotations

import argparse
import hashlib
import re
from collections import defaultdict
from pathlib import Path

from recall.lexicon import wordnet

SOURCE_DIR = Path("/usr/share/wordnet")
OUT_DIR = Path(__file__).resolve().parent / "tables"
POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
SENSES_PER_LEMMA = 3
FILES = [f"{kind}.{pos}" for kind in ("index", "data") for pos in POS] + [f"{pos}.exc" for pos in POS] + [
    "cntlist.rev"]
_SS_TYPE = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}  # sense-key digit -> part of speech


def _tag_counts(source: Path) -> dict[tuple[str, str, int], int]:
    """(lemma, part of speech, sense number) -> times the sense was tagged in WordNet's corpus."""
    counts: dict[tuple[str, str, int], int] = defaultdict(int)
    for line in (source / "cntlist.rev").read_text(encoding="latin-1").splitlines():
        key, number, count = line.split()
        lemma, _, rest = key.partition("%")
        counts[(lemma.lower(), _SS_TYPE[rest[0]], int(number))] += int(count)
    return counts


PERSON_FILE = "18"  # lexicographer file noun.person
_GLOSS_WORDS_MAX = 16
_GLOSS_STOP = frozenset("""
a an the and or of to in on at by for with as from that which who whom whose is are be been being was were has
have had does do did it its his her their them they he she one someone somebody something person people
especially usually often who's not no any some such this these those than other etc e.g. i.e.
""".split())


def _gloss_words(gloss: str) -> list[str]:
    """The content words of a gloss's definition (before its examples), in order, once each."""
    definition = gloss.split(";")[0].split('"')[0]
    words = [w for w in re.findall(r"[a-z]+(?:-[a-z]+)*", definition.lower()) if w not in _GLOSS_STOP]
    return list(dict.fromkeys(words))[:_GLOSS_WORDS_MAX]


def _synsets(source: Path):
    """Every synset: id -> (lemmas, hypernym ids), lexical antonym pairs, and the person nouns'
    (lemma, first-sense id) -> (gloss words, derivationally related lemmas)."""
    lemmas: dict[str, tuple[str, ...]] = {}
    hypernyms: dict[str, tuple[str, ...]] = {}
    antonyms: set[tuple[str, str]] = set()
    derivations: set[tuple[str, int, str, int]] = set()
    person_senses: set[str] = set()
    persons: dict[str, list[str]] = {}
    for name, pos in POS.items():
        for line in (source / f"data.{name}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue  # the licence header
            head, _, gloss = line.partition(" | ")
            fields = head.split()
            offset, count = fields[0], int(fields[3], 16)
            words = [fields[4 + 2 * i].lower() for i in range(count)]
            # adjective markers such as "(p)" are not part of the lemma
            words = [w.split("(")[0] for w in words]
            sid = pos + offset
            lemmas[sid] = tuple(words)
            at = 4 + 2 * count
            pointers = int(fields[at])
            ups = []
            for i in range(pointers):
                symbol, target, target_pos, where = fields[at + 1 + 4 * i: at + 5 + 4 * i]
                target_pos = "a" if target_pos == "s" else target_pos
                if symbol in ("@", "@i"):
                    ups.append(target_pos + target)
                elif symbol == "!" and where != "0000":
                    antonyms.add((sid, int(where[:2], 16), target_pos + target, int(where[2:], 16)))
                elif symbol == "+":
                    derivations.add((sid, int(where[:2], 16), target_pos + target, int(where[2:], 16)))
            hypernyms[sid] = tuple(ups)
            if fields[1] == PERSON_FILE:  # a noun file: verb, adjective and adverb files number apart
                person_senses.add(sid)
            if fields[1] == PERSON_FILE and "@i" not in fields[at + 1::4][:pointers]:
                persons[sid] = _gloss_words(gloss)  # a kind of person, not one named person (an instance)
    pairs = set()
    for sid, src, tid, dst in antonyms:
        a, b = lemmas[sid][src - 1], lemmas[tid][dst - 1]
        pairs.add(tuple(sorted((a, b))))
    sources: dict[tuple[str, str], set[str]] = defaultdict(set)
    for sid, src, tid, dst in derivations:
        if sid in person_senses:
            sources[(sid, lemmas[sid][src - 1])].add(lemmas[tid][dst - 1])
    links = {(sid, lemmas[sid][src - 1], tid, lemmas[tid][dst - 1])
             for sid, src, tid, dst in derivations}
    return lemmas, hypernyms, pairs, persons, sources, links, person_senses


def build(source: Path = SOURCE_DIR, out: Path = OUT_DIR) -> dict[str, int]:
    lemmas, hypernyms, antonyms, persons, derived, links, person_senses = _synsets(source)
    counts = _tag_counts(source)
    senses: list[tuple[str, str, int, tuple[str, ...]]] = []
    roles: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = []
    lemmas_known: set[str] = set()
    frequent: set[tuple[str, str]] = set()  # (lemma, sense id) for each lemma's first senses
    for name, pos in POS.items():
        for line in (source / f"index.{name}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            fields = line.split()
            lemma, count = fields[0], int(fields[2])
            lemmas_known.add(lemma)
            kept = tuple(pos + offset for offset in fields[-count:][:SENSES_PER_LEMMA])
            frequent.update((lemma, sid) for sid in kept)
            if pos == "n" and re.fullmatch(r"[a-z]+", lemma):
                roles.extend((lemma, sid, tuple(persons[sid]), tuple(sorted(derived[(sid, lemma)])))
                             for sid in (pos + offset for offset in fields[-count:]) if sid in persons)
            tagged = [counts.get((lemma, pos, number), 0) + 1 for number in range(1, count + 1)]
            share = 100 * tagged[0] // sum(tagged)
            if any(len(lemmas[sid]) > 1 for sid in kept):
                senses.append((lemma, pos, share, kept))
    irregular: dict = defaultdict(list)
    for name, pos in POS.items():
        for line in (source / f"{name}.exc").read_text(encoding="latin-1").splitlines():
            form, *found = line.split()
            irregular[(form, pos)].extend(found)
    dominant = {(lemma, pos): kept[0] for lemma, pos, share, kept in senses if share > wordnet.DOMINANT_SHARE}
    members: dict[str, set[str]] = defaultdict(set)
    for (lemma, _), sid in dominant.items():
        members[sid].add(lemma)

    known = {lemma for lemma, *_ in senses} | set(lemmas_known)

    def keys(words: tuple[str, ...]) -> list[str]:
        found: set[str] = set(words)
        for word in words:
            for pos in wordnet.POS:
                for base in wordnet.bases(word, pos, irregular):
                    if base in known:
                        found.add(base)
                    found |= members.get(dominant.get((base, pos), ""), set())
        return sorted(found)

    role_rows = [f"{lemma}\t{' '.join(gloss)}\t{' '.join(sources)}\t{' '.join(keys(gloss + sources))}"
                 for lemma, _, gloss, sources in roles]
    needed: set[str] = set()
    stack = [sid for *_, kept in senses for sid in kept]
    while stack:
        sid = stack.pop()
        if sid not in needed:
            needed.add(sid)
            stack.extend(hypernyms[sid])
    exceptions = []
    for name, pos in POS.items():
        for line in (source / f"{name}.exc").read_text(encoding="latin-1").splitlines():
            form, *bases = line.split()
            exceptions.extend((form, pos, base) for base in bases)
    # A noun any of whose first senses is a person ("teacher" is also a personified
    # abstraction, "worker" also an insect): the link may be to the other sense.
    people = {lemma for lemma, sid in frequent if sid in person_senses}
    out.mkdir(parents=True, exist_ok=True)
    tables = {
        "senses.tsv": sorted(f"{lemma}\t{pos}\t{share}\t{' '.join(kept)}" for lemma, pos, share, kept in senses),
        "hypernyms.tsv": sorted(f"{sid}\t{' '.join(hypernyms[sid])}" for sid in needed if hypernyms[sid]),
        "antonyms.tsv": sorted(f"{a}\t{b}" for a, b in antonyms),
        "exceptions.tsv": sorted(f"{form}\t{pos}\t{base}" for form, pos, base in set(exceptions)),
        "roles.tsv": sorted(role_rows),
        "derivations.tsv": sorted({
            "\t".join(sorted((f"{a}\t{sid[0]}", f"{b}\t{tid[0]}"))) for sid, a, tid, b in links
            if (a, sid) in frequent and (b, tid) in frequent and a != b and not {a, b} & people
            and re.fullmatch(r"[a-z]+", a) and re.fullmatch(r"[a-z]+", b)}),
    }
    for name, rows in tables.items():
        (out / name).write_text("\n".join(rows) + "\n", encoding="utf-8")
    digests = [f"{name}\t{hashlib.sha256((source / name).read_bytes()).hexdigest()}" for name in sorted(FILES)]
    (out / "SOURCE").write_text(
        "WordNet 3.0 (Debian package wordnet-base), files and SHA-256 digests the tables were built from;\n"
        f"senses per lemma: {SENSES_PER_LEMMA}\n" + "\n".join(digests) + "\n", encoding="utf-8")
    return {name: len(rows) for name, rows in tables.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SOURCE_DIR)
    parser.add_argument("--output", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    print(build(args.source, args.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

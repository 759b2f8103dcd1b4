"""Local paraphrase guards: when two originals say the same thing in other words.

``check(a, b)`` decides one pair; ``match(views)`` a whole set (every pair must pass). A
paraphrase merge is a *proposal* only: the owner approves it and it never commits
unattended unless a model verifier also says entailed (``writers.apply``). The exact
equivalence key (``equivalence``) stays the only authority for an automatic merge, and
similarity never overrides what the key refuses.

Every guard (``GUARDS``, each a finite code; ``check`` lists them) must pass on every pair:
same fields and subject; identical numbers, calendar, frequency and entities; the same
closed-class words (negation, modality, tense, status, comparison, direction, relation,
role, reference); the same participants in the same roles; the same order around "than"
and "but"; the same light verb where both have one; every other content word accounted for on
the other side — by word form, or (``paraphrase_synonyms``) as a WordNet synonym in both
words' dominant sense (``recall.lexicon.wordnet``), all guards re-checked after the
substitution. Word-vector similarity is deliberately *not* an accounting: on MiniLM
"cats"/"dogs" (0.72) score above "cycles"/"bike" (0.44), so it would merge co-hyponyms —
exactly the false merge these guards exist to refuse.

The word classes and everyday forms are English (``english``: closed classes, not a corpus
list); this module reads a statement with them and holds the guards. Pure functions over
``SourceView`` values: no database, no clock, no model (WordNet is committed tables).
"""
from __future__ import annotations

import functools
import re
import unicodedata
from types import MappingProxyType
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Optional, Sequence

from recall.lexicon import roles, wordnet
from reconsolidation.providers.rules import english as en
from reconsolidation.sources import SourceView
from reconsolidation.providers.rules.equivalence import equivalence_key, normalize

VERSION = "paraphrase-guards@5"
GUARDS = ("fields", "numbers", "calendar", "frequency", "entities", "negation", "modality", "tense", "status",
          "comparison", "direction", "relation", "role", "reference", "participants", "order", "content")
# What matched, the finite reason code a proposal carries (each at most 40 characters).
MATCH_REORDERED = "paraphrase_reordered"  # same content words, other order or function words
MATCH_WORD_FORMS = "paraphrase_word_forms"  # differing words are other forms of the same words
MATCH_RESTATED = "paraphrase_restated"  # the same words said again later (only valid_from differs)
MATCH_SYNONYMS = "paraphrase_synonyms"  # differing words are WordNet synonyms in their dominant sense
MATCH_CODES = (MATCH_REORDERED, MATCH_RESTATED, MATCH_WORD_FORMS, MATCH_SYNONYMS)  # weakest last

FIELDS = ("attribution", "scope", "portable", "polarity", "belief_type", "claim_kind", "derivation", "sensitivity",
          "authority", "expires_at")

_WORD = re.compile(r"[0-9]+(?:[.,:][0-9]+)*(?:st|nd|rd|th|am|pm|h)?|[^\W\d_]+(?:[-'][^\W\d_]+)*|[€$£%]")

_ROLE_STEMS = frozenset(en.stem(word) for word in en.ROLE)
# Words of the constructions that say "is" (``_construction``).
_BE_PAST = frozenset(("was", "were"))
_FALLS = frozenset(("fall", "falls"))
_DATE_WINDOW = 3  # "falls on [the] 3rd [of] June": a date within this many words of "on"
_WORKS = frozenset(("work", "works"))
_COMES = frozenset(("come", "comes"))
_NAMING = frozenset(("called", "named"))
_GOES = frozenset(("go", "goes"))  # present forms only: "went by Sam" keeps its past
_EMPLOYED = frozenset(("employed",))  # after a present "is": "is employed by Meridian"
_OCCUPATION = frozenset(("profession", "trade", "occupation"))  # "a nurse by profession": not "by training"
_HOME_PLACES = frozenset(("in", "near", "outside"))  # "'s home is in Porto": where one lives
_NOON = frozenset(("noon", "midday"))  # a time of day, 12:00 (not "midnight": 0:00 or 24:00)
_REFLEXIVES = frozenset("myself yourself himself herself themselves ourselves themself".split())
_SPEAKS = frozenset(("speak", "speaks"))  # present forms only: "spoke fluent Spanish" keeps its past
_FLUENT = frozenset(("fluent", "fluently"))
_FLUENT_WINDOW = 3  # "speaks [Spanish and Dutch] fluently": "fluent" within this many words of the verb
_SUFFERS = frozenset(("suffer", "suffers", "suffering"))  # present forms only: "suffered" keeps its past
_DIET_WINDOW = 4  # "follows a [strict low carb] diet": the diet within this many words of the article


@dataclass(frozen=True)
class Verdict:
    """One pair's decision: ``refused`` is the first failing guard ('' when all pass), ``match``
    what matched (a ``MATCH_CODES`` member when it passes) and, for synonyms, which words."""

    refused: str
    match: str = ""
    # paraphrase_synonyms: each (words of one side, words of the other) the match substituted
    substitutions: tuple[tuple[str, str], ...] = ()

    @property
    def ok(self) -> bool:
        return not self.refused


@dataclass(frozen=True)
class _Parsed:
    words: tuple[str, ...]  # case-folded tokens in order
    numbers: frozenset
    units: frozenset
    calendar: frozenset
    frequency: frozenset
    entities: frozenset
    classes: MappingProxyType  # read-only: parses are cached and shared
    past: bool  # a past form: simple past, or perfect ("has lived", "has been living")
    content: frozenset  # content words left for alignment
    light: frozenset = frozenset()  # the light verbs' senses (``en.LIGHT_SENSE``)
    agent: str = ""  # who acts in a present passive ("is serviced by Joost": joost), ``_passive_agent``


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    return _DOTTED_CLOCK.sub(r"\1m", text)  # "6 a.m." is "6 am"


_DOTTED_CLOCK = re.compile(r"(?<=[0-9 ])([aApP])\.[mM]\.")


@dataclass(frozen=True)
class _Piece:
    """One token with where its word sits in the folded text: a substitution may replace only
    whole words (never "does" of "doesn't", which would drop the negation)."""

    token: str  # case folded
    capital: bool
    start: int
    end: int
    first: bool  # the first piece of its word
    last: bool  # the last piece of its word


_CONTRACTED = {"ca": "can", "wo": "will", "sha": "shall"}  # the modal of "can't", "won't", "shan't"


def _pieces(folded: str) -> list[_Piece]:
    """The tokens of already folded text; possessive 's and n't split off, hyphenated compounds
    split into their parts ("office-day" is "office day"): each is classified."""
    out: list[_Piece] = []
    for match in _WORD.finditer(folded):
        raw = match.group(0)
        pieces = [raw]
        low = raw.casefold()
        if low.endswith("n't") and len(low) > 3:
            pieces = [_CONTRACTED.get(low[:-3], raw[:-3]), "n't"]  # "can't" is "can" "not"
        elif low == "cannot":
            pieces = [raw[:3], "not"]
        elif low.endswith("'s") and len(low) > 2:
            pieces = [raw[:-2], "'s"]
        elif low.endswith("'") and len(low) > 1:
            pieces = [raw[:-1], "'s"]
        pieces = [part for piece in pieces for part in (piece.split("-") if "-" in piece else [piece]) if part]
        for index, piece in enumerate(pieces):
            out.append(_Piece(piece.casefold(), piece[:1].isupper(), match.start(), match.end(), index == 0,
                              index == len(pieces) - 1))
    return out


def _tokens(text: str) -> list[tuple[str, bool, int]]:
    """(token, capitalised, position) triples; possessive 's and n't split off, clock times
    and durations said in words read as figures (``_spoken``)."""
    return _spoken([(piece.token, piece.capital, index) for index, piece in enumerate(_pieces(_fold(text)))])


# Durations, clock times and intervals said in words, read as the figures they are: "half an
# hour" is 30 minutes, "an hour and a half" 90; "half past seven" is 7:30, "a quarter to nine"
# 8:45; "every other week" and "fortnightly" are "every 2 weeks" (and "at the moment" is
# "currently", "more than 5,000" "over 5,000", "seven hours or so" "about seven hours").
_SPOKEN_PHRASES = {
    ("half", "an", "hour"): ("30", "minutes"),
    ("an", "hour", "and", "a", "half"): ("90", "minutes"),
    ("a", "quarter", "of", "an", "hour"): ("15", "minutes"),
    ("quarter", "of", "an", "hour"): ("15", "minutes"),
    ("three", "quarters", "of", "an", "hour"): ("45", "minutes"),
    ("at", "the", "moment"): ("currently",),  # not a time: "lives in Porto at the moment"
}
_SPOKEN_CLOCK = {("half", "past"): 30, ("quarter", "past"): 15, ("quarter", "to"): -15}
# A bound said with "than" before a number is the one-word bound: "more than 5,000" is "over 5,000".
_BOUNDS = {"more": "over", "less": "under", "fewer": "under"}
# Every second period said in words: "every other week" and "fortnightly" are "every 2 weeks".
_ALTERNATE = frozenset(("other", "second"))
_ALTERNATE_PERIODS = frozenset(("day", "week", "month", "year", "weekend", "morning", "evening", "night"))


def _spoken(tokens: list[tuple[str, bool, int]]) -> list[tuple[str, bool, int]]:
    """``tokens`` with each duration, clock time, interval or bound said in words replaced by
    its figures, at the position of its first word (``_SPOKEN_PHRASES``; ``_SPOKEN_CLOCK``,
    the hour one to twelve said as a word or a figure; ``_ALTERNATE``; ``_BOUNDS``; "or so")."""
    out, index = [], 0
    while index < len(tokens):
        words = tuple(token for token, _, _ in tokens[index:index + 5])
        phrase = next((said for said in _SPOKEN_PHRASES if words[:len(said)] == said), None)
        hour = en.number(words[2]) if len(words) > 2 and words[:2] in _SPOKEN_CLOCK else None
        if phrase is not None:
            out.extend((figure, False, tokens[index][2]) for figure in _SPOKEN_PHRASES[phrase])
            index += len(phrase)
        elif words[:1] == ("every",) and len(words) > 2 and words[1] in _ALTERNATE and words[2] in _ALTERNATE_PERIODS:
            out.extend((word, False, tokens[index][2]) for word in ("every", "2", en.plural(words[2])))
            index += 3
        elif words[1:2] == ("than",) and words[0] in _BOUNDS and len(words) > 2 and en.number(words[2]) is not None:
            out.append((_BOUNDS[words[0]], False, tokens[index][2]))  # "more than 5,000" is "over 5,000"
            index += 2
        elif words[:2] == ("or", "so") and out and (en.number(out[-1][0]) is not None or out[-1][0] in en.UNITS):
            out.append(("about", False, tokens[index][2]))  # "seven hours or so" is "about seven hours"
            index += 2
        elif words[:1] == ("fortnightly",):
            out.extend((word, False, tokens[index][2]) for word in ("every", "2", "weeks"))
            index += 1
        elif hour is not None and hour.isdigit() and 1 <= int(hour) <= 12:
            minutes = _SPOKEN_CLOCK[words[:2]]
            out.append((f"{(int(hour) - (minutes < 0)) or 12}:{minutes % 60:02d}", False, tokens[index][2]))
            index += 3
        else:
            out.append(tokens[index])
            index += 1
    return out


# Cached: a group's pairwise checks parse each statement once per pair, and the parse of a text
# depends on nothing else (its result is immutable, ``classes`` a read-only mapping).
@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> _Parsed:
    tokens = _tokens(text)
    words = tuple(token for token, _, _ in tokens)
    numbers: list[str] = []
    units: set[str] = set()
    calendar: set[str] = set()
    frequency: set[str] = set()
    entities: set[str] = set()
    classes: dict[str, set[str]] = {name: set() for name in
                                    ("negation", "modality", "status", "comparison", "direction", "relation", "role",
                                     "reference")}
    content: set[str] = set()
    past = False
    light: set[str] = set()
    periodic = -1  # the period word of a rate ("every day"), said as "daily"
    aged = -1  # the "old" of "34 years old"
    clocked = -1  # the "pm" of "7 pm"
    agent = ""
    journey = _journey(words)
    for index, (token, capital, _) in enumerate(tokens):
        if index in journey:
            if journey[index]:
                content.add(journey[index])
            continue
        single = en.singular(token)
        number = en.number(token)
        following = words[index + 1] if index + 1 < len(words) else ""
        if token == "used" and following == "to":
            past = True
            classes["status"].add("used_to")
            continue
        if _expiry(words, index):
            content.add("valid")  # "expires in March 2028" is "is valid until March 2028"
            classes["comparison"].add("until")
            continue
        reading = _construction(tokens, words, index)
        if reading is not None:
            if reading:
                content.add(reading)
            continue
        if en.UNITS.get(token) == "year" and following == "old" and index and en.number(words[index - 1]) is not None:
            aged = index + 1
            continue  # "34 years old" is the age 34
        if index == aged:
            continue
        if following in en.PERIODIC and (token in en.HABIT or token == "per" or (token in en.ARTICLES and numbers)):
            frequency.add(en.PERIODIC[following])  # a rate: "every day", "per day", "two cups a day"
            periodic = index + 1
            continue
        if index == periodic:
            continue
        if token in en.REPEATS and (token != "once" or following in en.RATE_MARKERS):
            numbers.append(en.REPEATS[token])
            continue
        if token in ("time", "times") and index and en.number(words[index - 1]) is not None:
            continue  # "two times": the count is the number
        if number is not None and (time := en.clock(token, following)):
            numbers.append(time)  # "7 pm" is 19:00
            clocked = index + 1
            continue
        if index == clocked:
            continue
        if number is not None:
            numbers.append(number)
            continue
        if token in en.UNITS and (en.UNITS[token] not in en.TIME_UNITS or (index and en.number(words[index - 1]))):
            units.add(en.UNITS[token])  # a time word is a unit only after a number ("ten minutes")
            if en.UNITS[token] not in en.TIME_UNITS or token in ("min", "mins"):
                continue
        if token in _NOON:
            numbers.append("12:00")  # "at noon" is "at 12:00", as "12 pm" is
            continue
        if single in en.WEEKDAYS or token in en.WEEKDAYS:
            calendar.add(single)
            continue
        if token in en.MONTHS and (capital or token not in ("may", "march")):
            calendar.add(token)
            continue
        if single in en.DAYPARTS or token in en.DAYPARTS:
            calendar.add(single)
            continue
        if token in en.HABIT:
            continue  # a habit marker: "every Monday" is "on Mondays"
        if token in en.FREQUENCY:
            frequency.add(en.SAME_FREQUENCY.get(token, token))
            continue
        if token in _USUAL and index and words[index - 1] in _ATTRIBUTIVE:
            frequency.add("usually")  # "the owner's usual bedtime is 23:00": "usually goes to bed at 23:00"
            continue
        if token in en.APPROX:
            classes["comparison"].add("approx")
            continue
        if token in en.NEGATION or (token == "unable" and following == "to"):
            classes["negation"].add("not")
            if token == "unable":
                classes["modality"].add("can")  # "is unable to swim" is "cannot swim"
            continue
        if following == "to" and (modal := _MODAL_PHRASES.get(token)) and _verb_follows(words, index + 2):
            classes["modality"].add(modal)  # "is able to swim" is "can swim", "has to" "must", "ought to" "should"
            past = past or en.is_past(token)  # "had to leave"
            continue
        if token in en.MODAL:
            classes["modality"].add("will" if _going_to(tokens, index) else token.lstrip("'"))
            continue
        if token in en.STATUS:
            classes["status"].add(token)
            continue
        if passive_agent := _passive_agent(tokens, index):
            agent = agent or passive_agent
            continue  # "is serviced by Joost": who acts, not a deadline ("by Friday"); ``_same_roles``
        if token == "over" and _after_prefer(words, index):
            continue  # "prefers tea over coffee" is "prefers tea to coffee": an order (``_sides``)
        if token in en.COMPARISON:
            classes["comparison"].add(token)
            continue
        if token in en.DIRECTION:
            classes["direction"].add(token)
            continue
        if single in en.RELATION or token in en.RELATION:
            plural = token not in en.RELATION  # "sisters" are more people than "sister"
            classes["relation"].add(en.relation(token) + ("+" if plural else ""))
            continue
        if en.stem(token) in _ROLE_STEMS:
            classes["role"].add(en.stem(token))
            continue
        if (token == "been" and _perfect(words, index)) or (en.is_past(token) and not _participle(words, index)):
            past = True
        if capital and token not in en.FUNCTION:  # a sentence-initial capital is settled in _entities
            entities.add(token)
            continue
        if token in en.LIGHT:
            if not (en.LIGHT_SENSE[token] == "do" and following in ("not", "n't")):
                light.add(en.LIGHT_SENSE[token])  # not the "does" of "doesn't have": an auxiliary
            continue
        if token in _REFERENCE:
            classes["reference"].add(_REFERENCE[token])
            continue
        if token in en.FUNCTION:
            continue
        content.add(token)
    if not classes["modality"] and _arranged(words):
        classes["modality"].add("will")  # "is moving next year" is "will move next year"
    return _Parsed(words=words, numbers=frozenset(_count(numbers)), units=frozenset(units),
                   calendar=frozenset(calendar), frequency=frozenset(frequency), entities=frozenset(entities),
                   classes=MappingProxyType({k: frozenset(v) for k, v in classes.items()}), past=past,
                   content=frozenset(content), light=frozenset(light), agent=agent)


def _construction(tokens: Sequence[tuple[str, bool, int]], words: tuple[str, ...], index: int) -> Optional[str]:
    """The word of a construction that says "is" at ``index``: '' when the word says nothing
    beyond "is", the content word it says otherwise, None when it is no such construction.
    Each is English grammar, with look-alikes beside it in ``evals/reconsolidation/lookalike_bank.py``."""
    token = words[index]
    following = words[index + 1] if index + 1 < len(words) else ""
    if (token in _BE_PAST and following == "born") or (token in _FALLS and _dated(words, index)):
        return ""  # "was born" is a lasting fact, not a past state; "falls on 3 June" is "is on"
    if token == "born":
        return "birth"  # the word the nouns say: "birthday", "birthplace", "date of birth"
    works_at = token in _WORKS and _before_name(tokens, index, "at")
    if (works_at and not any(w.startswith("employ") for w in words)) or _by_name(tokens, index, _EMPLOYED):
        # "works at Meridian", "is employed by Meridian": Meridian is the employer (not "works
        # for Sam", a converse; not "was employed", a past; not "employed by the owner")
        return "employer"
    if (token == "by" and following in _OCCUPATION) or (token in _OCCUPATION and index and words[index - 1] == "by"):
        return ""  # "is a nurse by profession" is "is a nurse": what one is by training or birth may differ
    if token == "diet" and index and words[index - 1] in en.DIETS:
        return ""  # "a vegan diet" is what "vegan" says: "follows a vegan diet" is "is vegan"
    if token in en.KEEPS_DIET and following in _DETERMINERS and "diet" in words[index + 2:index + 2 + _DIET_WINDOW]:
        return ""  # "follows a low-carb diet" is "is on a low-carb diet"
    if (token in _SUFFERS and following == "from") or (token == "from" and index and words[index - 1] in _SUFFERS):
        return ""  # "suffers from migraines" is "has migraines"
    employed = token in _EMPLOYED and index and words[index - 1] in _BE_PRESENT  # not "was employed"
    if ((token in _WORKS or employed) and following == "as") or (token in _COMES and following == "from"):
        return ""  # "works as" / "is employed as a nurse": "is a nurse"; "comes from": "is from"
    if token in _NAMING and _naming(tokens, index):
        return ""  # "a cat called Miso", "is named Miso": a name, not a past act
    # "X's <noun> is ...": the word after the copula, '' when no copula follows
    after_copula = words[index + 2] if index + 2 < len(words) and following in ("is", "are") else ""
    possessed = index and words[index - 1] == "'s"
    if token == "name" and possessed and following in ("is", "are"):
        return ""  # "the cat's name is Miso" is "the cat is called Miso"
    if token == "name" and index and words[index - 1] == "the" and following == "of" \
            and _BE_PRESENT & set(words[index + 2:index + 2 + _NAME_OF_WINDOW]):
        return ""  # "the name of the owner's cat is Miso" is "the owner's cat is called Miso"
    if token == "age" and possessed and en.number(after_copula) is not None:
        return ""  # "the owner's age is 40" is "the owner is 40 (years old)"
    if token == "aged" and en.number(following) is not None:
        return ""  # "is aged 40" is "is 40"
    if _by_name(tokens, index, _GOES) or (token == "by" and _by_name(tokens, index - 1, _EMPLOYED | _GOES)):
        return ""  # "goes by Sam" is "is called Sam" (not "went by": a past; not "goes by bus")
    if token == "home" and index and words[index - 1] in ("'s", "my") and after_copula in _HOME_PLACES:
        return "live"  # "the owner's home is in Porto": "the owner lives in Porto" (not a holiday home)
    if _on_own(words, index) or (token == "by" and following in _REFLEXIVES):
        return ""  # "lives on their own", "lives by themselves": "lives alone"
    if (token == "own" and _on_own(words, index - 2)) or (token in _REFLEXIVES and index and words[index - 1] == "by"):
        return "alone"
    if token == "from" and following == "home" and index and words[index - 1] in _WORKS:
        return ""  # "works from home" is "works remotely" (not "worked from home": a past)
    if token == "home" and index >= 2 and words[index - 1] == "from" and words[index - 2] in _WORKS:
        return "remotely"
    if token == "got" and index and words[index - 1] in _HAVE_PRESENT and (
            following in _POSSESSED_START or en.number(following) is not None):
        return ""  # British "has got two children" is "has two children" (not "has got married")
    if token == "next" and following == "to":
        return "beside"  # "lives next to a park" is "lives beside a park" (not "next week")
    if token in _SPEAKS and any(word in _FLUENT for word in words[index + 1:index + 1 + _FLUENT_WINDOW]):
        return ""  # "speaks fluent Spanish", "speaks Spanish fluently": "is fluent in Spanish"
    return None


def _on_own(words: Sequence[str], index: int) -> bool:
    """Whether "on" at ``index`` begins "on <whose> own" with no noun after it ("lives on
    their own" is "lives alone"; "lives on their own boat" is not)."""
    if index < 0 or index + 2 >= len(words) or words[index] != "on" or words[index + 2] != "own":
        return False
    after = words[index + 3] if index + 3 < len(words) else ""
    return words[index + 1] in _POSSESSIVES and (not after or after in en.FUNCTION)


def _going_to(tokens: Sequence[tuple[str, bool, int]], index: int) -> bool:
    """Whether "going" at ``index`` is the future of a present "is going to" before a verb:
    "is going to move" says what "will move" says. Not "was going to move" (an intention
    that is past: its "was" is a past), not a movement ("is going to the gym", "is going to
    Lisbon": a determiner, a name or a number after "to"); a negation may stand between ("is
    not going to move" is "will not move")."""
    if tokens[index][0] != "going" or index + 2 >= len(tokens) or tokens[index + 1][0] != "to":
        return False
    verb, capital, _ = tokens[index + 2]
    if capital or verb in _DETERMINERS or en.number(verb) is not None:
        return False
    before = [token for token, _, _ in tokens[max(0, index - 2):index] if token not in en.NEGATION]
    return bool(before) and before[-1] in _BE_PRESENT


# What makes a present progressive a future: a time ahead ("next week", "this coming June",
# "tomorrow", "tonight", "soon").
_AHEAD = frozenset(("tomorrow", "tonight", "soon"))
_AHEAD_OF = frozenset(("next", "coming"))


def _arranged(words: Sequence[str]) -> bool:
    """Whether the statement is an arrangement: a present "is" before a verb in -ing (a
    negation may stand between) and a time ahead. "Is moving to Lisbon next year" says what
    "will move to Lisbon next year" says; "is moving to Lisbon" without the time may be
    happening now, and "was moving" is past by its "was"."""
    ahead = any(word in _AHEAD or (word in _AHEAD_OF and index + 1 < len(words) and _time_word(words[index + 1]))
                for index, word in enumerate(words))
    if not ahead:
        return False
    for index, word in enumerate(words[:-1]):
        if word in _BE_PRESENT:
            verb = words[index + 2] if words[index + 1] in en.NEGATION and index + 2 < len(words) else words[index + 1]
            if verb.endswith("ing") and len(verb) > 4 and verb not in en.FUNCTION and verb not in en.MODAL:
                return True
    return False


def _time_word(word: str) -> bool:
    return en.UNITS.get(word) in en.TIME_UNITS or _calendar_word(word) or en.singular(word) in en.DAYPARTS


def _calendar_word(word: str) -> bool:
    """A weekday ("Monday", "Mondays") or a month."""
    return en.singular(word) in en.WEEKDAYS or word in en.MONTHS


def _after_prefer(words: Sequence[str], index: int) -> bool:
    """Whether a form of "prefer" comes before ``index``: there "over" and "to" mark an order."""
    return any(word.startswith("prefer") for word in words[:index])


_TRAVELS = frozenset("commutes commute goes go travels travel gets get rides ride".split())
_BIKES = frozenset(("bike", "bicycle"))
# Public transport, which one rides as a passenger: "goes to work by bus" is "takes the bus to
# work" and, in British English, "gets the bus"; "catches the 8:10 train" takes it too.
_TRANSIT = frozenset("bus train tram metro subway underground tube ferry".split())
_TAKES = frozenset("takes take catches catch gets get".split())
_TRAVEL_WINDOW = 4  # "commutes to work by bike": "by" within this many words of the verb
_TRANSIT_WINDOW = 2  # "takes the 8:10 train": at most this many words between "the" and the vehicle


def _journey(words: Sequence[str]) -> dict[int, str]:
    """How a journey is made, said one way: the indices of the words that say it, each to the
    word it says ('' for none).

    A journey by bike says "cycles": "commutes to work by bike" is "cycles to work" (the
    travel verb and "by" say nothing more, the bike says "cycles"). A journey by public
    transport says its vehicle: "goes to work by bus", "takes the bus to work" and "gets the
    bus to work" say "bus" (the verb, "by" and "the" nothing more; a vehicle followed by
    another noun, "takes the bus pass", is no journey). Not by car: "goes to work by car"
    may be a passenger, and "drives" says who drives. Only present verbs: a past ("went by
    bike", "took the bus") keeps its own verb, so its tense.
    """
    for index, word in enumerate(words):
        if word in _TRAVELS:
            for by in range(index + 1, min(index + 1 + _TRAVEL_WINDOW, len(words) - 1)):
                if words[by] == "by" and words[by + 1] in _BIKES:
                    return {index: "", by: "", by + 1: "cycles"}
                if words[by] == "by" and words[by + 1] in _TRANSIT:
                    return {index: "", by: ""}
        if word in _TAKES and index + 1 < len(words) and words[index + 1] in ("the", "a"):
            for at in range(index + 2, min(index + 3 + _TRANSIT_WINDOW, len(words))):
                following = words[at + 1] if at + 1 < len(words) else ""
                if words[at] in _TRANSIT and (not following or following in en.FUNCTION):
                    return {index: "", index + 1: ""}
    return {}


def _expiry(words: Sequence[str], index: int) -> bool:
    """Whether "expires" at ``index`` gives the last date of something's validity: a present
    form, "in" or "on", then a month, a weekday or a year within ``_DATE_WINDOW`` words ("the
    passport expires in March 2028" is "is valid until March 2028"; "expired in 2020" keeps
    its past; "expires in two years" is a time left, no date)."""
    if words[index] not in ("expires", "expire") or index + 1 >= len(words) or words[index + 1] not in ("in", "on"):
        return False
    return any((word.isdigit() and len(word) == 4) or _calendar_word(word)
               for word in words[index + 2:index + 2 + _DATE_WINDOW])


def _dated(words: Sequence[str], index: int) -> bool:
    """Whether ``words[index]`` is followed by "on" and a date: a number or a calendar word within
    ``_DATE_WINDOW`` words ("falls on 3 June", "falls on a Monday")."""
    if index + 1 >= len(words) or words[index + 1] != "on":
        return False
    return any(en.number(word) is not None or _calendar_word(word)
               for word in words[index + 2:index + 2 + _DATE_WINDOW])


def _before_name(tokens: Sequence[tuple[str, bool, int]], index: int, preposition: str) -> bool:
    """Whether the verb at ``index`` is followed by ``preposition`` and a name that is not a
    possessive ("works at Meridian", not "works at home" or "works at Sam's")."""
    if index + 2 >= len(tokens) or tokens[index + 1][0] != preposition or not tokens[index + 2][1]:
        return False
    return not (index + 3 < len(tokens) and tokens[index + 3][0] == "'s")


def _by_name(tokens: Sequence[tuple[str, bool, int]], index: int, verbs: frozenset) -> bool:
    """Whether one of ``verbs`` at ``index`` is followed by "by" and a name ("goes by Sam"),
    "employed" only after a present "is" ("is employed by Meridian")."""
    if index < 0 or tokens[index][0] not in verbs or not _before_name(tokens, index, "by"):
        return False
    return tokens[index][0] not in _EMPLOYED or (index > 0 and tokens[index - 1][0] in _BE_PRESENT)


def _naming(tokens: Sequence[tuple[str, bool, int]], index: int) -> bool:
    """Whether "called"/"named" at ``index`` gives a name: a capitalised word follows, and a
    copula, a thing or a person just introduced comes before ("is called Miso", "a cat
    named Miso", "a daughter named Eva") — not a person already known, who would be the
    one calling ("the owner called Sam", "her friend called Ana")."""
    if index == 0 or index + 1 >= len(tokens) or not tokens[index + 1][1]:
        return False
    before, capital, _ = tokens[index - 1]
    if before in ("is", "are", "am"):
        return True
    if en.relation(before) in en.RELATION:
        return index >= 2 and tokens[index - 2][0] in en.ARTICLES
    return not (capital or before in en.FUNCTION or before in en.LIGHT or before == "owner")


def _count(values: list[str]) -> list[tuple[str, int]]:
    return [(value, values.count(value)) for value in set(values)]


def _names(mine: _Parsed, other: _Parsed) -> set[str]:
    """Named entities; a sentence-initial capital is a name only if the other side does not
    use the same word in lower case (it is then the start of a sentence, not a name)."""
    first = mine.words[0] if mine.words else ""
    found = set(mine.entities)
    if first in found and first in other.content:
        found.discard(first)
    return found


def _entities(a: _Parsed, b: _Parsed) -> bool:
    """Equal named entities (``_names``)."""
    return _names(a, b) == _names(b, a)


_COPULA = frozenset("is are am was were be been being".split())
_ABLE = frozenset(("able", "unable"))  # "is able to swim" says "can", no copula
# Modals said with "to" before a verb: "has to leave" is "must leave" ("had to" keeps its past).
_MODAL_PHRASES = {"able": "can", "ought": "should", "has": "must", "have": "must", "had": "must"}


def _verb_follows(words: Sequence[str], index: int) -> bool:
    """Whether a verb can stand at ``index``: a word that is no function word or number
    ("has to leave", not "has to Sam", "has to the gym" or "has to second")."""
    return index < len(words) and words[index] not in en.FUNCTION and en.number(words[index]) is None \
        and bool(_verbs(words[index]))


_DETERMINERS = frozenset("the a an my his her their our your its".split())
_POSSESSIVES = _DETERMINERS - {"the", "a", "an"}  # "on their own"


_PREPOSITIONS = frozenset("in on at for with to from of by about into onto near behind after before under over"
                          " between among through across around against without within like than via per".split())


def _participants(parsed: _Parsed, names: set[str]) -> tuple[frozenset, tuple[str, ...], frozenset, dict]:
    """Who takes part (names, the owner, relation words); the core ones — not after a
    preposition, in order of first mention; and what each possessor owns, as (possessor, the
    word it owns) pairs (``X's Y``, ``Y of [the] X``; not a birth noun or a name: "the
    mother's birthday" is when the mother was born, "the partner's name" what she is called);
    and the preposition before each participant that has one ("with Sam")."""
    found: set[str] = set()
    prepositions: dict[str, str] = {}
    core: list[str] = []
    possessions: set[tuple[str, str]] = set()
    words = parsed.words
    for index, word in enumerate(words):
        key = word if word in names else en.relation(word)
        if not (word in names or key == "owner" or key in en.RELATION or word in en.RELATION):
            continue
        found.add(key)
        at = index - 1 if index and words[index - 1] not in _DETERMINERS else index - 2
        before = words[at] if at >= 0 else ""
        if before == "by" and at and words[at - 1] == "employed":
            before = "at"  # whom one "is employed by" is where one "works at"
        if before not in _PREPOSITIONS and key not in core:
            core.append(key)
        elif before in _PREPOSITIONS:
            prepositions.setdefault(key, before)
        owned = words[index + 2] if index + 2 < len(words) and words[index + 1] == "'s" else ""
        if before == "of" and at >= 1:
            owned = words[at - 1]
        if owned and not owned.startswith(_OWN_NOUNS):
            possessions.add((key, en.stem(en.relation(owned))))
    return frozenset(found), tuple(core), frozenset(possessions), prepositions


# Function words that still change what is said: where ("here"/"there"), whom ("him"/"her"),
# which question a clause answers ("who"/"where") and an alternative ("or").
_REFERENCE = {"here": "here", "there": "there", "or": "or", **{w: "he" for w in ("he", "him", "his", "himself")},
              **{w: "she" for w in ("she", "her", "hers", "herself")},
              **{w: w for w in ("whose", "what", "where", "when", "why", "how")},
              **{w: "who" for w in ("who", "whom", "which")}}  # one relative pronoun: "a dog who" / "which"
_WH = frozenset(("who", "whose", "what", "where", "when", "why", "how"))


def _same_reference(a: frozenset, b: frozenset) -> bool:
    """The same "here"/"there" and "or"; no "he" against "she"; and where both have a question
    word, the same ones. (One side may say "who" where the other has no clause: "has a sister
    who lives in Ghent" is "the sister lives in Ghent".)"""
    plain_a, plain_b = a - _WH - {"he", "she"}, b - _WH - {"he", "she"}
    gender_a, gender_b = a & {"he", "she"}, b & {"he", "she"}
    wh_a, wh_b = a & _WH, b & _WH
    return plain_a == plain_b and not (gender_a and gender_b and gender_a != gender_b) and not (
        wh_a and wh_b and wh_a != wh_b)


# Words after which order says who is who: "taller than Ana", "fish but not meat", "tea
# rather than coffee", "prefers tea over coffee", "from 9:00 to 17:00".
_ORDER_MARKERS = frozenset(("than", "but", "instead", "rather", "versus", "vs"))


def _sides(parsed: _Parsed) -> Optional[tuple[frozenset, frozenset]]:
    """The words said before and after the first order marker (``_ORDER_MARKERS``; "over" or
    "to" after "prefer"; "to" after "from" or a number: "9:00 to 17:00"), or None when there
    is none."""
    words = parsed.words
    for index, word in enumerate(words):
        preferred = _after_prefer(words, index)
        marker = word in _ORDER_MARKERS or (word in ("over", "to") and preferred) or (word == "to" and (
            "from" in words[:index] or (index and en.number(words[index - 1]) is not None)))
        if marker:
            return _keys(words[:index]), _keys(words[index + 1:])
    return None


def _keys(words: Sequence[str]) -> frozenset:
    """The words that say something, each as one form: numbers as numbers, others stemmed."""
    return frozenset(en.number(w) or en.stem(en.american(en.relation(w))) for w in words
                     if w not in en.FUNCTION and w not in en.LIGHT and w not in _ORDER_MARKERS and w not in en.DIRECTION)


_OWN_NOUNS = ("birth", "name")  # what "X's ..." says of X itself, not of something X has
# After these an -ed word is an adjective before its noun, not a past tense.
_ATTRIBUTIVE = frozenset("the a an my his her their our your its 's".split())
_BE_PRESENT = frozenset(("is", "are", "am"))
_NAME_OF_WINDOW = 5  # "the name of [the owner's new] cat is": the copula within this many words of "of"
_USUAL = frozenset(("usual", "typical"))  # before a noun, after "the" or a possessive: "usually"
_HAVE_PRESENT = frozenset(("has", "have", "'ve"))
_POSSESSED_START = _DETERMINERS | {"some", "any", "no"}  # what "has got" a thing begins with: "has got a cat"
# Words that may stand between "has" and "been" ("has never been", "has always been").
_PERFECT_GAP = frozenset("already never just always ever recently lately".split())
_PERFECT_GAP_MAX = 2


def _perfect(words: Sequence[str], index: int) -> bool:
    """Whether "been" at ``index`` makes a perfect with a present "has"/"have" before it ("has
    been living", "has never been"): a past form, as the perfect of any other verb is ("has
    lived" reads its "lived"), so "has been living" is "has lived" and "has been moved" is
    "moved"."""
    at = index - 1
    while at >= 0 and index - 1 - at < _PERFECT_GAP_MAX and (words[at] in _PERFECT_GAP or words[at].endswith("ly")):
        at -= 1
    return at >= 0 and words[at] in _HAVE_PRESENT


def _participle(words: Sequence[str], index: int) -> bool:
    """Whether the past form at ``index`` is a participle of a present statement: an -ed
    adjective before its noun ("the owner's preferred airline"), or a participle after a
    present "is", perhaps with one word between that is no function word ("is based in Porto",
    "is happily married", "is self-employed", "is not married", "is made of oak": a state now,
    not a past act; "was based" is past by its "was"; "is where Sam lived" keeps its past, and
    "is being repaired" is kept apart from "is repaired", a job not yet done)."""
    before = words[index - 1] if index else ""
    if words[index].endswith("ed") and before in _ATTRIBUTIVE:
        return True
    if before in _BE_PRESENT:
        return True
    return index >= 2 and before not in en.FUNCTION and words[index - 2] in _BE_PRESENT


def _passive_agent(tokens: Sequence[tuple[str, bool, int]], index: int) -> str:
    """Who acts in a present passive whose "by" is at ``index``, keyed as ``_participants``
    keys them: the name, the owner or the relation right after "by" (and an article), where
    "by" follows a past participle after a present "is" ("the owner's car is serviced by
    Joost": joost). '' for any other "by": a deadline ("is finished by Friday"), someone the
    guards do not follow ("by a gardener"), or "is employed by", which ``_construction`` reads."""
    if tokens[index][0] != "by" or index < 2:
        return ""
    words = [token for token, _, _ in tokens]
    if not en.is_past(words[index - 1]) or words[index - 2] not in _BE_PRESENT or words[index - 1] in _EMPLOYED:
        return ""
    at = index + 1 + (index + 1 < len(words) and words[index + 1] in _DETERMINERS)
    if at >= len(words):
        return ""
    word, capital, _ = tokens[at]
    if capital and not _calendar_word(word) and word not in en.FUNCTION:
        return word
    key = en.relation(word)
    return key if key == "owner" or key in en.RELATION else ""


def _copular(parsed: _Parsed) -> bool:
    """A form of "be" that is not the auxiliary of a progressive ("is reporting") or of a
    modal said in words ("is able to", "is unable to", "is going to": the verb after "to" is
    the statement's own, and who does it comes first)."""
    words = parsed.words
    return any(word in _COPULA and not (index + 1 < len(words) and (words[index + 1].endswith("ing") or (
        words[index + 1] in _ABLE and words[index + 2:index + 3] == ("to",))))
               for index, word in enumerate(words))


def _same_roles(a: _Parsed, b: _Parsed) -> bool:
    """The same participants in the same roles. When neither side is copular, the first core
    participant (not after a preposition: "in Utrecht" may move) is who acts and must be
    the same ("Sam reports to the owner" is not "the owner reports to Sam"); a copula says
    roles by possession instead, so order is free ("Triodos is the owner's bank"). When both
    sides name possessors they must be the same ones ("Sam is the owner's manager" is not
    "the owner is Sam's manager"), and when they name several, each must own the same thing
    ("Sam's sister is the owner's friend" is not "the owner's sister is Sam's friend"). A
    participant both sides put after a preposition must be after the same one ("works with
    Sam" is not "works for Sam"), and where both have a copula, the same ones are after a
    preposition ("Sam is kind to the owner" is not "the owner is kind to Sam"); who acts in a
    present passive ("is serviced by Joost") is who acts first on a side without one ("Joost
    services the owner's car"); and without a copula, which may say a role either way ("works
    at Meridian", "Meridian is the owner's employer"), a participant only one side puts after
    "for" (a destination or a beneficiary) is not the other's object: "leaves for Oslo" is not
    "leaves Oslo". (Other prepositions come and go with an instrument or a place: "reads on a
    Kobo" is "uses a Kobo to read".)"""
    found_a, core_a, owns_a, before_a = _participants(a, _names(a, b))
    found_b, core_b, owns_b, before_b = _participants(b, _names(b, a))
    if found_a != found_b or len(found_a) < 2:
        return True
    if any(before_a[key] != before_b[key] for key in before_a.keys() & before_b.keys()):
        return False
    # who is after a preposition, not a possessor's "of" nor an order's "than" (``_sides``)
    after_a, after_b = ({key for key, preposition in before.items() if preposition not in ("of", "than")}
                        for before in (before_a, before_b))
    if after_a and after_b and after_a != after_b and _copular(a) and _copular(b):
        return False  # "Sam is kind to the owner" is not "the owner is kind to Sam"
    agent_a, agent_b = a.agent, b.agent
    if agent_a != agent_b:  # who acts in a passive acts first on the other side, which has no copula
        agent, other, other_core = (agent_a, b, core_b) if agent_a else (agent_b, a, core_a)
        if (agent_a and agent_b) or _copular(other) or other_core[:1] != (agent,):
            return False
    one_sided = before_a.keys() ^ before_b.keys()
    if any("for" in (before_a.get(k), before_b.get(k)) for k in one_sided) and not (_copular(a) or _copular(b)):
        return False  # "leaves for Oslo" is not "leaves Oslo"
    if core_a[:1] != core_b[:1] and not (_copular(a) or _copular(b)):
        return False
    possessors_a, possessors_b = {who for who, _ in owns_a}, {who for who, _ in owns_b}
    if possessors_a and possessors_b and possessors_a != possessors_b:
        return False
    return len(possessors_a) < 2 or owns_a == owns_b


def _topic(view: SourceView) -> frozenset:
    """The words a statement may leave implied: its subject's words and the kind of its local
    scope ("project" of ``project:thesis`` and the project's own words)."""
    words = {token for token, _, _ in _tokens(view.subject)}
    if ":" in view.scope:
        kind, _, name = view.scope.partition(":")
        words |= {kind, *re.split(r"[-_ ]+", name.casefold())}
    return frozenset(w for w in words if w and w not in en.FUNCTION)


_OWNERS_WORDS = frozenset(("my", "our"))  # the owner's own words for "the owner's"
_POSSESSED_WINDOW = 2  # "the owner's [personal] trainer": the noun within this many words


def _agents(parsed: _Parsed, other: _Parsed) -> frozenset:
    """Person nouns possessed on one side ("the owner's trainer", "my personal coach") whose
    possessor acts first on the other side: "the owner's trainer" is who trains the owner, so
    "the owner trains Sam" is the converse, never another form of it (nor "the owner coaches
    Sam", the same word as a verb); "Sam trains the owner" is the same claim."""
    _, core, _, _ = _participants(other, _names(other, parsed))
    if not core:
        return frozenset()
    names, words = _names(parsed, other), parsed.words
    found = set()
    for index, marker in enumerate(words):
        if marker == "'s" and index:
            possessor = words[index - 1]
            key = possessor if possessor in names else en.relation(possessor)
        elif marker in _OWNERS_WORDS:
            key = "owner"
        else:
            continue
        # the possessed noun: the first person noun, after an adjective or none ("the owner's
        # son studies": "studies" is a verb, though "a quick study" is a person)
        window = words[index + 1:index + 1 + _POSSESSED_WINDOW]
        head = next((w for w in window if roles.is_person(w)), None)
        if head and key == core[0]:
            found.add(head)
    return frozenset(found)


@functools.lru_cache(maxsize=16384)
def _verbs(word: str) -> frozenset:
    """The verbs ``word`` is a regular inflection of ("studies" and "studying": study). Not an
    irregular form ("fed", "went"): the tense guard knows the common pasts by list only."""
    senses = wordnet.tables().senses
    return frozenset(base for base in wordnet.bases(word, "v", {}) if (base, "v") in senses)


def _accounted(word: str, other: _Parsed, topic: frozenset = frozenset(),
               said: frozenset = frozenset(), agents: frozenset = frozenset()) -> bool:
    """A differing content word is another form of a word of ``other`` (an inflection or
    derivation, by its stem or WordNet's links, a spelling, a quality's adjective), a
    compound of words said on either side (``said``: "colorblind" for "color blind"), or a
    word of the other side's topic (``_topic``) — never its antonym (WordNet), however alike
    the two look, nor, for a possessed agent noun (``agents``), its verb. A word is not
    accounted for by a longer word that merely starts or ends with it: "car" is not
    "carpet", "account" not "accountant"."""
    root = en.stem(word)
    for candidate in other.content | other.entities | topic:
        if wordnet.relation((word,), (candidate,)).kind == wordnet.ANTONYMS:
            continue  # "dislikes" contains "likes", "employee" shares a stem with "employer"
        if {word, candidate} & agents and not {word, candidate} <= agents:
            continue  # a possessed agent noun is not its verb: "the owner's trainer" trains them
        if en.stem(candidate) == root or en.singular(candidate) == en.singular(word):
            return True
        if en.american(candidate) == en.american(word):
            return True
        if en.quality(word) == candidate or en.quality(candidate) == word:
            return True
        if wordnet.derived(word, candidate):
            return True  # "prefers" / "preference", "decided" / "decision": WordNet's derivations
        if _verbs(word) & _verbs(candidate):
            return True  # "studies" / "studying": one verb (the tense guard has read any past)
        if _compound_of(word, candidate, said) or _compound_of(candidate, word, said):
            return True
        if "birth" in (word, candidate) and word.startswith("birth") and candidate.startswith("birth"):
            return True  # "was born" (birth) is what "birthday", "birthplace", "birthdate" say
        other_root = en.stem(candidate)
        short_root, long_root = sorted((root, other_root), key=len)
        if len(short_root) >= 5 and long_root.startswith(short_root) and len(long_root) - len(short_root) <= 2:
            return True  # meditates / meditation: stems "meditat" and "medit"
    return False


# In a statement that gives a time or date, a compound of a word and one of these says when
# it happens: "bedtime is 23:00" is "goes to bed at 23:00"; "payday is the 25th".
_WHEN_HEADS = frozenset(("time", "day"))


def _compound_of(longer: str, part: str, said: frozenset) -> bool:
    """Whether ``longer`` is ``part`` joined to another word said ("colorblind" for "color
    blind"; ``_check`` counts ``_WHEN_HEADS`` as said when the statements give a time)."""
    longer, part = en.american(longer), en.american(part)
    if len(longer) <= len(part) or len(part) < 3:
        return False
    if longer.startswith(part):
        return longer[len(part):] in said
    return longer.endswith(part) and longer[: -len(part)] in said


def _subject(view: SourceView) -> str:
    return " ".join(_fold(view.subject).casefold().split())


def _check(a: SourceView, b: SourceView) -> Verdict:
    """Whether ``a`` and ``b`` say the same thing in other words (all ``GUARDS``).

    * ``fields`` — same attribution, scope, portability, polarity, belief type, claim kind,
      derivation, sensitivity, authority and expiry, and the same subject up to case and
      spacing (a subject can carry the referent of "she" or of an elided subject, so two
      subjects are two claims until a verifier says otherwise);
    * ``numbers`` — identical numbers, quantities, money, dates and times (digits and number
      words alike: "ten" is 10), units and currencies;
    * ``calendar`` — identical weekdays, months and day parts; ``frequency`` — identical
      frequency words (once, twice, usually, sometimes, ...), "every"/"each" and a plural
      weekday meaning the same habit, "every day" meaning "daily";
    * ``entities`` — identical named entities (capitalised words, case folded);
    * ``negation``, ``modality`` (might/will/can ...), ``tense`` (was/were/had, -ed and
      irregular past forms, used to), ``status`` (no longer, former, old/new, still ...),
      ``comparison`` (before/after, more/less, until/since, only ...), ``direction`` (to/from),
      ``relation`` (son/daughter, partner, colleague ...; one relation's other words are the
      same: mum/mother, kids/children) and ``role`` (work/personal/home ...) — the words of
      each class must be the same on both sides;
    * ``reference`` — the same "here"/"there" and "or", no "he" against "she", the same
      question word where both have one (``_same_reference``);
    * ``participants`` — the same people and names in the same roles (``_same_roles``);
    * ``order`` — where both have "than", "but", "rather", "over" or "to" after "prefer",
      or "to" after "from" or a number, the same words before and after it: "taller than
      Ana" is not "Ana is taller than" (``_sides``);
    * ``content`` — every other content word of one side is accounted for on the other
      (``_accounted``): the same word, another inflection or derivation of it (shared stem),
      its British or American spelling, the adjective of a quality noun, or a compound of
      words said; a semantically light verb (have, use, take, get, do, go, make, keep, put)
      needs no counterpart where the other side has none, and two must be of one sense.

    Two statements with the same words are the equivalence key's to judge first. When their
    keys differ only in ``valid_from`` — the same words said again in a later message — they
    are proposed like any paraphrase (``paraphrase_restated``: the owner approves; never
    unattended). Any other key difference (subject, type, attribution, expiry, ...) is
    refused here (``same_words``).
    """
    if normalize(a.statement) == normalize(b.statement):
        if equivalence_key(a) == equivalence_key(b):
            return Verdict("", MATCH_REORDERED)
        restated = a.subject == b.subject and all(getattr(a, name) == getattr(b, name) for name in FIELDS)
        return Verdict("", MATCH_RESTATED) if restated else Verdict("same_words")
    if any(getattr(a, name) != getattr(b, name) for name in FIELDS) or _subject(a) != _subject(b):
        return Verdict("fields")
    pa, pb = _parse(a.statement), _parse(b.statement)
    if pa.numbers != pb.numbers or pa.units != pb.units:
        return Verdict("numbers")
    if pa.calendar != pb.calendar:
        return Verdict("calendar")
    if pa.frequency != pb.frequency:
        return Verdict("frequency")
    if not _entities(pa, pb):
        return Verdict("entities")
    for name in ("negation", "modality"):
        if pa.classes[name] != pb.classes[name]:
            return Verdict(name)
    if pa.past != pb.past:
        return Verdict("tense")
    for name in ("status", "comparison", "direction", "relation", "role"):
        if pa.classes[name] != pb.classes[name]:
            return Verdict(name)
    if not _same_reference(pa.classes["reference"], pb.classes["reference"]):
        return Verdict("reference")
    if not _same_roles(pa, pb):
        return Verdict("participants")
    sides_a, sides_b = _sides(pa), _sides(pb)
    if sides_a and sides_b and sides_a != sides_b:
        return Verdict("order")
    if pa.light and pb.light and pa.light != pb.light:
        return Verdict("content")
    only_a, only_b = pa.content - pb.content, pb.content - pa.content
    if not only_a and not only_b:  # reordered only if the words said are the same ones, not "mum"/"mother"
        same_words = set(pa.words) - en.FUNCTION == set(pb.words) - en.FUNCTION
        return Verdict("", MATCH_REORDERED if same_words else MATCH_WORD_FORMS)
    said = frozenset(en.american(word) for word in pa.words + pb.words) | (
        _WHEN_HEADS if pa.numbers or pa.calendar else frozenset())
    topic_a, topic_b = _topic(a), _topic(b)  # once, not once per differing word
    agents = _agents(pa, pb) | _agents(pb, pa)
    if all(_accounted(word, pb, topic_b, said, agents) for word in only_a) and all(
            _accounted(word, pa, topic_a, said, agents) for word in only_b):
        return Verdict("", MATCH_WORD_FORMS)
    return Verdict("content")


# Guards a synonym substitution may settle: a differing content word, or a particle, modal or
# preposition that belongs to a phrase ("looks after", "would like", "a member of"). Numbers,
# names, dates, negation and the rest are never settled by a word's meaning (and every guard
# is checked again on the substituted statements).
_SYNONYM_RETRY = frozenset(("content", "comparison", "direction", "modality", "participants"))
_SPAN_MAX = 3  # words in one substituted phrase ("takes care of" is two plus a function word)
_SUBSTITUTIONS_MAX = 3  # more differing words than this is another sentence, not a paraphrase
# English periphrases one verb says, adjective phrases a plainer word says (``en.PLAINER``), and
# the volition verbs that say "want" (``en.VOLITION``).
_PERIPHRASES = {("member", "of"): ("belong",), ("members", "of"): ("belong",)} | en.PLAINER | {
    phrase: ("want",) for phrase in en.VOLITION} | {
    (form,): (thing,) for word, thing in en.SAME_THING.items() for form in (word, en.plural(word))}
_UNSUBSTITUTABLE = (en.NEGATION | en.MODAL | en.PAST_AUX | en.STATUS | en.FREQUENCY | en.HABIT | en.APPROX | en.RELATION
                    | frozenset(en.WEEKDAYS) | frozenset(en.MONTHS) | en.DAYPARTS | frozenset(en.UNITS))
_PLACEHOLDER = "qxsyn{}q"  # letters only, so it is one content token the same on both sides


_NOUN_MARKERS = _DETERMINERS | frozenset(("'s", "this", "that", "these", "those", "some", "any", "every", "each"))


def _spans(pieces: list[_Piece], other: set[str]) -> list[tuple[int, int, tuple[str, ...], frozenset, bool]]:
    """Whole-word phrases of up to ``_SPAN_MAX`` tokens that WordNet knows (or a periphrase),
    with a word the other side lacks, a content word (or a phrasal verb of light words: "goes
    to" is "attends"), and nothing guarded: no number, name,
    date, negation, modal, status, frequency or relation word (those are never substituted).
    Each with the parts of speech it may be read as (after a determiner, no verb) and whether
    it is a periphrase."""
    found = []
    other_stems = {en.stem(word) for word in other}
    for start in range(len(pieces)):
        for end in range(start + 1, min(start + _SPAN_MAX, len(pieces)) + 1):
            words = tuple(piece.token for piece in pieces[start:end])
            periphrase = words in _PERIPHRASES
            key = _PERIPHRASES.get(words, words)
            if not (pieces[start].first and pieces[end - 1].last) or any(
                    piece.capital and index for index, piece in enumerate(pieces[start:end], start)):
                continue
            if not periphrase and any(w in _UNSUBSTITUTABLE or en.number(w) is not None for w in words):
                continue
            if all(w in other or en.stem(w) in other_stems for w in words):
                continue
            if all(w in en.FUNCTION or w in en.LIGHT for w in words) and not (
                    len(words) > 1 and any(w in en.LIGHT for w in words)):
                continue  # function words alone say nothing; a phrasal verb does ("goes to": attends)
            if wordnet.lemmas(key):
                nominal = start and pieces[start - 1].token in _NOUN_MARKERS
                found.append((start, end, key, wordnet.NOMINAL if nominal else frozenset(wordnet.POS), periphrase))
    return found


def _equivalent(sa: tuple, sb: tuple) -> bool:
    """WordNet synonyms; or a periphrase and the word it says ("would like" / "wants")."""
    if (sa[4] or sb[4]) and set(wordnet.lemmas(sa[2])) & set(wordnet.lemmas(sb[2])):
        return True
    return wordnet.relation(sa[2], sb[2], sa[3], sb[3]).kind == wordnet.SYNONYMS


def _rewrite(folded: str, pieces: list[_Piece], spans: list[tuple[int, int]]) -> str:
    for index, (start, end) in sorted(enumerate(spans), key=lambda item: -item[1][0]):
        folded = folded[:pieces[start].start] + _PLACEHOLDER.format("abcdefgh"[index]) + folded[pieces[end - 1].end:]
    return folded


def _past_span(pieces: list[_Piece], span: tuple) -> bool:
    """Whether a substituted span says a past: a past form that is no participle of a present
    statement (``_participle``)."""
    words = tuple(piece.token for piece in pieces)
    return any(en.is_past(words[index]) and not _participle(words, index) for index in range(span[0], span[1]))


def _synonyms(text_a: str, text_b: str) -> Optional[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """Both statements with each pair of WordNet synonyms (``wordnet.relation``) replaced by one
    shared placeholder, longest phrases first, and the substitutions in the words said; None
    when there is none. A substitution keeps tense: a past form pairs only with a past form
    (a participle after a present "is" is a state now: "is scared of" pairs with "is afraid of")."""
    folded_a, folded_b = _fold(text_a), _fold(text_b)
    pieces_a, pieces_b = _pieces(folded_a), _pieces(folded_b)
    words_a, words_b = {p.token for p in pieces_a}, {p.token for p in pieces_b}
    # Each side's spans and their tense once, not once per span of the other side.
    spans_a = [(sa, _past_span(pieces_a, sa)) for sa in _spans(pieces_a, words_b)]
    spans_b = [(sb, _past_span(pieces_b, sb)) for sb in _spans(pieces_b, words_a)]
    candidates = []
    for sa, past_a in spans_a:
        for sb, past_b in spans_b:
            if past_a == past_b and _equivalent(sa, sb):
                candidates.append((-(sa[1] - sa[0] + sb[1] - sb[0]), sa[0], sb[0], sa, sb))
    used_a: set[int] = set()
    used_b: set[int] = set()
    chosen = []
    for *_, sa, sb in sorted(candidates):
        range_a, range_b = set(range(sa[0], sa[1])), set(range(sb[0], sb[1]))
        if not (range_a & used_a or range_b & used_b) and len(chosen) < _SUBSTITUTIONS_MAX:
            used_a |= range_a
            used_b |= range_b
            chosen.append((sa, sb))
    if not chosen:
        return None
    said = tuple((folded_a[pieces_a[sa[0]].start:pieces_a[sa[1] - 1].end],
                  folded_b[pieces_b[sb[0]].start:pieces_b[sb[1] - 1].end]) for sa, sb in chosen)
    return (_rewrite(folded_a, pieces_a, [(sa[0], sa[1]) for sa, _ in chosen]),
            _rewrite(folded_b, pieces_b, [(sb[0], sb[1]) for _, sb in chosen]), said)


def check(a: SourceView, b: SourceView) -> Verdict:
    """``_check``, and when it refuses only for content (or a particle or modal of a phrase),
    again with WordNet synonyms substituted (``_synonyms``): the pair passes as
    ``paraphrase_synonyms`` only if every guard passes on the substituted statements, so a
    synonym never hides a number, name, date, negation, modality, tense, status, comparison,
    direction, relation, role or participant difference. Similarity alone never establishes
    equivalence: a word pair counts only when WordNet lists the one's dominant sense as a
    sense of the other (or a periphrase or volition verb says the other, ``_PERIPHRASES``),
    and antonyms, kinds of each other and siblings are refused."""
    verdict = _check(a, b)
    if verdict.ok or verdict.refused not in _SYNONYM_RETRY:
        return verdict
    found = _synonyms(a.statement, b.statement)
    if found is None:
        return verdict
    text_a, text_b, said = found
    again = _check(replace(a, statement=text_a), replace(b, statement=text_b))
    return Verdict("", MATCH_SYNONYMS, said) if again.ok else verdict


def substitutions(statements: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """The synonym substitutions between every pair of ``statements`` (in the words said), for
    a reviewer to see what a ``paraphrase_synonyms`` merge equated."""
    found: list[tuple[str, str]] = []
    for text_a, text_b in combinations(statements, 2):
        result = _synonyms(text_a, text_b)
        for pair in result[2] if result else ():
            if pair not in found and pair[::-1] not in found:
                found.append(pair)
    return tuple(found)


def match(views: Sequence[SourceView]) -> Verdict:
    """One verdict for a set: every pair passes, and the weakest match names the set."""
    if len(views) < 2:
        return Verdict("too_few")
    found = MATCH_REORDERED
    said: list[tuple[str, str]] = []
    for a, b in combinations(views, 2):
        verdict = check(a, b)
        if not verdict.ok:
            return verdict
        found = max(found, verdict.match, key=MATCH_CODES.index)
        said.extend(pair for pair in verdict.substitutions if pair not in said)
    return Verdict("", found, tuple(said))


def classes(views: Sequence[SourceView]) -> list[tuple[SourceView, ...]]:
    """Greedy paraphrase sets in the given order: a view joins the first set all of whose
    members it paraphrases. Sets of one are omitted."""
    sets: list[list[SourceView]] = []
    for view in views:
        for members in sets:
            if all(check(view, member).ok for member in members):
                members.append(view)
                break
        else:
            sets.append([view])
    return [tuple(members) for members in sets if len(members) >= 2]

"""English for the paraphrase guards: the closed classes of words that a paraphrase may not
change (negation, modality, status, comparison, direction, frequency, relation, role ...),
the everyday forms read as one ("mum"/"mother", "every day"/"daily", "colour"/"color"), and
the functions that read one word (its number, stem, singular, relation, American spelling,
the adjective of a quality noun, whether it is a past form).

The word classes are English grammar (closed classes), not a corpus list. Pure functions and
constants, no database or model; ``quality`` reads the committed WordNet tables.
"""
from __future__ import annotations

import functools
import re
from typing import Optional

from recall.lexicon import wordnet

# Closed classes of English.
FUNCTION = frozenset("""
a an the this that these those some any its it it's their theirs his her hers our ours my mine your yours
they them he she we you i me us one is are am be been being 's and or of in on at for with as to
there here who which whose whom what whenever when where how also just
""".split())
# A light verb needs no counterpart where the other statement has none ("has a peanut
# allergy" / "is allergic to peanuts", "goes swimming" / "swims"), but two different ones
# say different things ("makes bread" is not "has bread", "goes to Paris" not "has Paris");
# have, take, get and use are one ("takes piano lessons" / "has piano lessons", "uses oat
# milk" / "takes oat milk").
LIGHT_SENSE = {form: sense for sense, forms in {  # past forms too: the tense guard reads the tense apart
    "have": "have has having had take takes taking took taken get gets getting got gotten use uses used using",
    "do": "do does doing did done", "make": "make makes making made", "keep": "keep keeps keeping kept",
    "go": "go goes going went gone", "put": "put puts putting",
}.items() for form in forms.split()}
LIGHT = frozenset(LIGHT_SENSE)
NEGATION = frozenset("not no never n't none nobody nothing neither nor cannot without don't doesn't didn't isn't"
                     " aren't wasn't weren't won't can't hasn't haven't".split())
MODAL = frozenset("might may could would will shall should must can ought 'll 'd going maybe perhaps probably"
                  " possibly likely unlikely certainly definitely".split())
PAST_AUX = frozenset("was were had did".split())
IRREGULAR_PAST = frozenset("""
went came saw knew thought told became left felt brought began kept held wrote stood heard ran met paid sat spoke
lay led grew lost fell sent built understood drew broke spent rose drove bought wore chose sold taught caught fought
threw slept flew forgot ate drank swam sang rode won gave found took made got said hid bit shook woke froze
dreamt learnt spelt burnt leapt knelt smelt spoilt dwelt spilt fed wed
""".split())
STATUS = frozenset("former formerly ex old new previous previously current currently now still anymore longer"
                   " again recently lately".split())
COMPARISON = frozenset("before after earlier later than more less fewer most least under over above below until till"
                       " since by within up only exactly almost nearly beyond past prior".split())
# Approximators: one class, so "around 23:00" is "about 23:00".
APPROX = frozenset("about around approximately roughly circa".split())
# "to" is also the infinitive and a complement ("allergic to"): a direction differs only when one
# side says where from (or out, away, back).
DIRECTION = frozenset("from out away off back".split())
FREQUENCY = frozenset("once twice thrice always usually often sometimes rarely seldom occasionally never daily weekly"
                      " monthly yearly annually nightly hourly fortnightly biweekly regularly frequently most other"
                      " normally generally typically ordinarily"
                      " alternate next last coming".split())
HABIT = frozenset(("every", "each"))  # one habit marker: "every Monday" is "on Mondays"
# A rate says its period's frequency word: "every day", "each day", "per day" and, after a
# quantity, "a day" ("two cups of coffee a day") are "daily". ("a day" with no quantity
# before it is one day: "took a day off".)
PERIODIC = {"day": "daily", "week": "weekly", "month": "monthly", "year": "yearly", "night": "nightly",
            "hour": "hourly"}
SAME_FREQUENCY = {"annually": "yearly", "normally": "usually", "generally": "usually", "typically": "usually",
                  "ordinarily": "usually", "frequently": "often", "seldom": "rarely", "occasionally": "sometimes"}
ARTICLES = frozenset(("a", "an"))
# "twice a week" is "two times a week"; "once" is a count only before a rate ("once a
# month"), otherwise it may mean "formerly" ("once lived in Paris").
REPEATS = {"once": "1", "twice": "2", "thrice": "3"}
RATE_MARKERS = HABIT | ARTICLES | {"per"}
# One relation, other words: informal, child's and American forms say the same person.
SAME_RELATION = {
    "mum": "mother", "mom": "mother", "mummy": "mother", "mommy": "mother", "dad": "father", "daddy": "father",
    "grandma": "grandmother", "granny": "grandmother", "grandpa": "grandfather", "kid": "child",
    "neighbor": "neighbour", "coworker": "colleague",
}
RELATION = frozenset("""
son daughter child kid mother father mum mom dad parent brother sister sibling wife husband partner spouse
girlfriend boyfriend fiance fiancee grandmother grandfather grandparent grandson granddaughter grandchild aunt
uncle niece nephew cousin friend colleague coworker boss manager neighbour neighbor landlord tenant
stepson stepdaughter stepmother stepfather baby twin family in-law
""".split()) | frozenset(SAME_RELATION)
ROLE = frozenset("work personal private business home office professional job school".split())
# Volition: "hopes to visit", "wishes to visit", "would love to visit", "'d like to visit" and
# "dreams of visiting" say what "wants to visit" says (the modal of "would like" is politeness,
# not uncertainty; "dream of" is the idiom of aspiration, "dream about" the night's dream). Not
# "plans", "expects" or "intends": those say what will happen, not what is wished for; nor
# "loves to", which says a habit.
VOLITION = frozenset({("would", "like"), ("'d", "like"), ("would", "love"), ("'d", "love")} | {
    (form,) for form in "hope hopes hoping hoped wish wishes wishing wished".split()} | {
    (form, "of") for form in "dream dreams dreaming".split()})
# Words that say a plainer word: "is fond of jazz" is "likes jazz"; "afraid" and
# "frightened" say "scared" ("is afraid of spiders" is "is scared of spiders"; the compact
# WordNet tables know "scared", not "afraid"). Not "is keen on" (eager: also "wants"), "is
# terrified of" (more than afraid) or "loves" (more than likes). Formal verbs and nouns whose
# every-day sense WordNet files apart from the plain word's, each in all its forms (the tense
# guard still tells "resided" from "lives"): "enjoys cooking" is "likes cooking", "resides in"
# is "lives in", "requires glasses" is "needs glasses", "relocated to" is "moved to", an
# "aim" or "objective" is a "goal" (WordNet makes an aim a kind of goal), a flight that
# "departs" at 9:40 "leaves" then, and "has a fear of heights" is "is scared of heights";
# "is a fan of jazz" is "likes jazz" (not "a big fan": "big" stays to be accounted for);
# "would rather take the train" is "prefers to take the train" (a preference, not a modal);
# "intends to retire at 60" is "plans to retire at 60".
_PLAIN_FORMS = {"like": "enjoy enjoys enjoying enjoyed", "live": "reside resides residing resided",
                "need": "require requires requiring required",
                "move": "relocate relocates relocating relocated",
                "goal": "aim aims objective objectives", "plan": "intend intends intending intended",
                "leave": "depart departs departing departed"}
PLAINER = {("fond", "of"): ("like",), ("fan", "of"): ("like",), ("would", "rather"): ("prefer",),
           ("'d", "rather"): ("prefer",), ("afraid",): ("scared",),
           ("frightened",): ("scared",), ("fear", "of"): ("scared",)} | {
    (form,): (plain,) for plain, forms in _PLAIN_FORMS.items() for form in forms.split()}
# Diets that also name the person who keeps them: "follows a vegan diet" is "is vegan"; and
# the verbs that say one is on a diet ("follows a low-carb diet" is "is on a low-carb diet").
DIETS = frozenset("vegetarian vegan pescatarian pescetarian flexitarian fruitarian".split())
KEEPS_DIET = frozenset("follow follows following keep keeps keeping eat eats eating".split())
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
DAYPARTS = frozenset("morning afternoon evening night noon midnight weekend weekday weeknight summer winter spring"
                     " autumn today tomorrow yesterday tonight".split())
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"
    " eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
                     "ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000", "half": "0.5",
                     "dozen": "12", "first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5",
                     "a couple": "2", "quarter": "0.25", "single": "1", "double": "2"})
UNITS = {"eur": "eur", "euro": "eur", "euros": "eur", "€": "eur", "usd": "usd", "dollar": "usd", "dollars": "usd",
         "$": "usd", "gbp": "gbp", "pound": "gbp", "pounds": "gbp", "£": "gbp", "%": "percent", "percent": "percent",
         "km": "km", "kilometre": "km", "kilometres": "km", "kilometer": "km", "kilometers": "km", "kg": "kg",
         "kilo": "kg", "kilos": "kg", "kilogram": "kg", "kilograms": "kg", "minute": "min", "minutes": "min",
         "min": "min", "mins": "min", "hour": "hour", "hours": "hour", "day": "day", "days": "day", "week": "week",
         "weeks": "week", "month": "month", "months": "month", "year": "year", "years": "year", "cup": "cup",
         "cups": "cup", "litre": "l", "litres": "l", "liter": "l", "liters": "l", "metre": "m", "metres": "m",
         "meter": "m", "meters": "m", "mile": "mile", "miles": "mile"}
TIME_UNITS = frozenset(("min", "hour", "day", "week", "month", "year"))


def number(token: str) -> Optional[str]:
    """A number word or figure as one form ("ten" and "10" are "10", "7pm" and "19:00" are
    "19:00", "1,200" is "1200"), or None for a word that is no number."""
    if token[:1].isdigit():
        value = re.sub(r"(st|nd|rd|th|h)$", "", token)
        value = value.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", value) else value
        if re.fullmatch(r"\d{1,2}[.:]\d{2}", value):
            hours, minutes = re.split(r"[.:]", value)
            return f"{int(hours)}:{minutes}"
        if value.endswith("am") or value.endswith("pm"):
            hours = int(re.match(r"\d+", value).group(0)) % 12 + (12 if value.endswith("pm") else 0)
            return f"{hours}:00"
        return value.lstrip("0") or "0"
    return NUMBER_WORDS.get(token)


_DOUBLING = frozenset(("ing", "ings", "ed", "er", "ers"))
_NOT_DOUBLED = frozenset("aeioulsfz")  # "falling", "kissed", "buzzing" keep both letters


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude English stem: the shared part of a word's inflections and derivations."""
    for suffix in ("ically", "ors", "or", "ations", "ation", "ingly", "ities", "ness", "ment", "ings", "ally", "ical", "ies",
                   "ing", "ity", "ied", "ers", "ous", "ive", "ic", "ed", "er", "es", "ly", "al", "y", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            root = word[: len(word) - len(suffix)]
            if suffix in _DOUBLING and len(root) >= 4 and root[-1] == root[-2] and root[-1] not in _NOT_DOUBLED:
                root = root[:-1]  # "jogging", "stopped": the consonant doubled before the ending
            return root
    return word


def singular(word: str) -> str:
    """A crude singular ("cities" city, "children" child, "cats" cat; "glass" stays)."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ren") and word[:-3] in ("child",):
        return word[:-3]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def relation(word: str) -> str:
    """A word's relation, one word for each ("mum", "mom" and "mothers" are "mother")."""
    single = word if word in RELATION else singular(word)
    return SAME_RELATION.get(single, single)


# British and American spellings of one word: "colour"/"color", "centre"/"center",
# "organise"/"organize", "catalogue"/"catalog". Only words long enough that the other
# spelling is no other word ("four" is not "for", "acre" not "acer").
_SPELLINGS = ((re.compile(r"(?<=\w{2})our(s|ed|ing|ite|ites|able)?$"), r"or\1", 6),
              (re.compile(r"(?<=\w{3})tre(s)?$"), r"ter\1", 6),
              (re.compile(r"(?<=\w{3})is(e|ed|es|ing|ation|ations)$"), r"iz\1", 7),
              (re.compile(r"(?<=\w{4})ogue(s)?$"), r"og\1", 7))
_SAME_SPELLING = {"grey": "gray", "programme": "program", "programmes": "programs"}
# British and American words for one thing (nouns none of whose other senses a statement would
# put in the same place): "rents a flat" is "rents an apartment". Read as synonyms, so the
# owner sees the substitution named.
SAME_THING = {"flat": "apartment", "holiday": "vacation", "lorry": "truck", "nappy": "diaper", "pram": "stroller",
              "postcode": "zipcode", "motorway": "highway", "rubbish": "trash", "timetable": "schedule",
              "cinema": "movies", "petrol": "gasoline", "aubergine": "eggplant",
              "courgette": "zucchini", "coriander": "cilantro"}


@functools.lru_cache(maxsize=65536)
def american(word: str) -> str:
    """``word`` in American spelling (``_SPELLINGS``), otherwise unchanged."""
    if word in _SAME_SPELLING:
        return _SAME_SPELLING[word]
    for pattern, replacement, shortest in _SPELLINGS:
        if len(word) >= shortest:
            word = pattern.sub(replacement, word)
    return word


CLOCK_SUFFIXES = frozenset(("am", "pm", "o'clock"))


def clock(value: str, suffix: str) -> Optional[str]:
    """A time told with "am", "pm" or "o'clock" after its number, as ``number`` writes times
    ("7 pm" and "7:30 pm" are "19:00" and "19:30", "9 o'clock" is "9:00"); None otherwise."""
    match = re.fullmatch(r"(\d{1,2})(?:[.:](\d{2}))?", value)
    if match is None or suffix not in CLOCK_SUFFIXES or int(match.group(1)) > (23 if suffix == "o'clock" else 12):
        return None
    hours = int(match.group(1))
    if suffix != "o'clock":
        hours = hours % 12 + (12 if suffix == "pm" else 0)
    return f"{hours}:{match.group(2) or '00'}"


def plural(noun: str) -> str:
    """A regular English plural ("flat" flats, "lorry" lorries, "box" boxes)."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


_NOT_PAST_ED = frozenset(("coed", "shed", "sled"))  # four letters in "-ed", no past (nor is "-eed": "need")


def is_past(word: str) -> bool:
    """A past form: an irregular past, a past auxiliary, or a word in "-ed" ("died", "sued";
    not "need", "feed" or "shed")."""
    if word in IRREGULAR_PAST or word in PAST_AUX:
        return True
    return word.endswith("ed") and (len(word) > 4 or (
        len(word) == 4 and not word.endswith("eed") and word not in _NOT_PAST_ED))


_QUALITY_NOUNS = (("ance", "ant"), ("ancy", "ant"), ("ence", "ent"), ("ency", "ent"))


@functools.lru_cache(maxsize=16384)
def quality(noun: str) -> str:
    """The adjective a quality noun names ("intolerance" -> "intolerant", "fluency" ->
    "fluent"), when WordNet knows that word only as an adjective; '' otherwise. Only then:
    "assistance" is not an "assistant", nor "attendance" an "attendant" (nouns too)."""
    for ending, adjective in _QUALITY_NOUNS:
        if noun.endswith(ending):
            word = noun[: -len(ending)] + adjective
            senses = wordnet.tables().senses
            return word if (word, "a") in senses and (word, "n") not in senses else ""
    return ""

"""The references a turn's message makes: the people and things it names by role or by
description ("my male sibling", "the person who does my bookkeeping"), which context
assembly's second round searches on their own (``former.second_round``).

A question about someone named by role asks two things at once — who that is, and a fact
about them — and a sentence encoder's vector of the whole question leans on the fact asked.
The reference alone finds who is meant. Word lists, no parser and no model: English only,
deterministic, and a message without such phrases makes none. A description also names the
roles whose WordNet gloss it matches (``described_roles``: "the guy who repairs my car" →
mechanic), searched on their own, so a memory that says "my mechanic" is found although it
shares no word with the description.
"""
from __future__ import annotations

import re
from typing import Sequence

from recall.lexicon import roles

# Words that end a reference phrase: function words (articles, auxiliaries, prepositions,
# conjunctions, pronouns, question words) and a few adverbs of time and degree. A phrase
# runs from its opening word over the words that are none of these.
_FUNCTION_WORDS = frozenset("""
a an the this that these those and or but nor so if then than as
is are was were be been being am do does did done doing have has had having
can could will would shall should may might must
in on at for with from to of about by under over into onto through during before after since
until without within between among against toward towards around near across behind beyond
above below beside up down off out
who whom whose which what where when why how whether
i me you he him she her it we us they them my your his its our their mine yours
not no never still already now usually often always ever just also too very really
here there today tomorrow yesterday
""".split())
_RELATIVE = frozenset({"who", "whom", "that"})
_DETERMINERS = frozenset({"the", "a", "an"})
_HEAD_WORDS_MAX = 3  # "the <at most three words> who ...": the description's head
# In a question with its verb inverted ("Where does my sister live?", "Which city is my
# sibling based in?") a phrase runs on into the main verb; it ends before that verb when the
# phrase follows one of these and the verb is not itself a function word.
_AUXILIARIES = frozenset("do does did can could will would shall should may might must".split())
_COPULAS = frozenset("is are was were".split())
_VERBS = _AUXILIARIES | _COPULAS | frozenset("am be been being done doing have has had having".split())
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*|[^\w\s]")


def _is_word(token: str) -> bool:
    return token[0].isalnum()


def _function(token: str) -> bool:
    """A function word, or a contraction of one ("what's", "I'm", "don't")."""
    word = token.lower().replace("’", "'")
    return word in _FUNCTION_WORDS or word.split("'")[0] in _FUNCTION_WORDS or word.endswith("n't")


def _content(tokens: Sequence[str]) -> set[str]:
    return {t.lower() for t in tokens if _is_word(t) and not _function(t)}


def message_references(message: str) -> list[str]:
    """The references a message makes that a search can resolve, in message order:
    "my" and the words after it up to the next function word ("my male sibling", "my dad's
    sister"), and a definite or indefinite description by relative clause, up to the end
    of its clause less trailing function words ("Which neighbourhood is the lady who tidies
    my house from?" → "the lady who tidies my house"). A reference holding every content word of the
    message is left out: searching it would repeat round one. In an inverted question the
    main verb after the phrase is not part of it (``_without_inverted_verb``). Deterministic,
    English only; a message without such phrases has none."""
    tokens = _TOKEN.findall(message)
    found: list[str] = []
    i = 0
    while i < len(tokens):
        word = tokens[i].lower()
        end, core = i + 1, i + 1
        if word == "my":
            while end < len(tokens) and _is_word(tokens[end]) and not _function(tokens[end]):
                end += 1
        elif word in _DETERMINERS:
            head = end
            while head < len(tokens) and head <= i + _HEAD_WORDS_MAX and _is_word(tokens[head]) \
                    and not _function(tokens[head]):
                head += 1
            if head > i + 1 and head < len(tokens) and tokens[head].lower() in _RELATIVE:
                end = core = head + 1
                while end < len(tokens) and _is_word(tokens[end]):
                    end += 1
                while end > head + 1 and _function(tokens[end - 1]):
                    end -= 1
                if end == head + 1:
                    end = i + 1
        if end > i + 1:
            end = _without_inverted_verb(tokens, i, end, core=core)
            phrase = tokens[i:end]
            if _content(tokens) - _content(phrase):
                found.append(" ".join(phrase))
            i = end
        else:
            i += 1
    return found


def _without_inverted_verb(tokens: Sequence[str], start: int, end: int, *, core: int) -> int:
    """The end of the phrase ``tokens[start:end]`` without the main verb of an inverted
    question: its last word goes when the phrase follows an auxiliary ("does my sister
    live") — or a copula and that word ends in "-ed" ("is my sibling based") — unless a
    verb follows the phrase ("does my brother do") or nothing of its core (the words from
    ``core`` on: after "my", after the relative pronoun) would be left."""
    before = tokens[start - 1].lower() if start > 0 else ""
    after = tokens[end].lower() if end < len(tokens) else ""
    last = tokens[end - 1].lower()
    if after in _VERBS or not _content(tokens[core:end - 1]):
        return end
    if before in _AUXILIARIES or (before in _COPULAS and last.endswith("ed")):
        return end - 1
    return end


def description_words(reference: str) -> tuple[str, ...]:
    """The content words of a description's relative clause ("the guy who repairs my car" →
    repairs, car); none for a reference without one ("my male sibling")."""
    tokens = _TOKEN.findall(reference)
    for index, token in enumerate(tokens):
        if index and token.lower() in _RELATIVE:
            return tuple(t.lower() for t in tokens[index + 1:] if _is_word(t) and not _function(t))
    return ()


def described_roles(reference: str) -> str:
    """The role nouns a description's gloss matches (``recall.lexicon.roles``), as one search
    text: "the guy who repairs my car" → "mechanic"; empty for a reference that is not a
    description or that no gloss accounts for."""
    return " ".join(roles.roles(description_words(reference)))

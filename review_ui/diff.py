"""Which words differ between originals shown side by side (a merge row of the journal).

Word-level, with ``difflib``: each side is split on whitespace and compared with the first
(the canonical); the words of a side that are not in the common sequence are marked, so the
owner sees at a glance what a merge would treat as the same. Pure and small: no database,
no logging, nothing persisted; text appears only in the returned segments.
"""
from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher


@dataclass(frozen=True)
class Segment:
    text: str
    changed: bool


def _segments(words: list[str], changed: set[int]) -> tuple[Segment, ...]:
    """Consecutive words with the same mark joined into one segment."""
    found: list[Segment] = []
    for index, word in enumerate(words):
        mark = index in changed
        if found and found[-1].changed == mark:
            found[-1] = Segment(text=f"{found[-1].text} {word}", changed=mark)
        else:
            found.append(Segment(text=word, changed=mark))
    return tuple(found)


def _unmatched(a: list[str], b: list[str]) -> tuple[set[int], set[int]]:
    matcher = SequenceMatcher(a=a, b=b, autojunk=False)
    kept_a, kept_b = set(), set()
    for block in matcher.get_matching_blocks():
        kept_a.update(range(block.a, block.a + block.size))
        kept_b.update(range(block.b, block.b + block.size))
    return set(range(len(a))) - kept_a, set(range(len(b))) - kept_b


def word_diff(texts: list[str]) -> list[tuple[Segment, ...]]:
    """Each text as segments; a word is marked when it differs from the first text (and a
    word of the first is marked when some other text lacks it)."""
    split = [text.split() for text in texts]
    if not split:
        return []
    marked = [set() for _ in split]
    for index in range(1, len(split)):
        only_first, only_this = _unmatched(split[0], split[index])
        marked[0] |= only_first
        marked[index] |= only_this
    return [_segments(words, changed) for words, changed in zip(split, marked)]

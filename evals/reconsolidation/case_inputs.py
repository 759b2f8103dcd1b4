"""The label boundary of the reconsolidation corpus: what runtime code may see of a case, and the
label strings that must never reach it.

Runtime code (the dreaming arms, recall, the answer model) and every provider request receive
``runtime_case_input(case)`` only: the memory-bank@1 document to seed and the probe questions
with their opaque IDs. Answers, duplicate classes, required survivors, hypotheses, probe kinds,
the category, the split and the case ID stay with the harness and the scorer.

``label_values`` lists every label string, and ``leaked_label_values`` finds the ones present in
a prepared request (e.g. the JSON of a provider call). Some label strings are unavoidably in the
bank itself — a direct probe's answer is in the owner's own words, and member IDs are the bank's
IDs — so a value verbatim in the case's bank is not a leak; everything else is (hypothesis
statements are written never to occur in any bank string, and ID lists are serialised as JSON
arrays that no bank holds).

Pure: no Django, no database, no I/O.
"""
from __future__ import annotations

import copy
import json
from typing import Any, Iterable, Mapping


def runtime_case_input(case: Mapping[str, Any]) -> dict:
    """The bank to seed and the probe questions (IDs and text); nothing else of the case."""
    return {
        "bank": copy.deepcopy(case["bank"]),
        "probes": [{"id": probe["id"], "question": probe["question"]} for probe in case["probes"]],
    }


def id_list(ids: Iterable[str]) -> str:
    """A label's ID set as one string: the sorted JSON array (``["a", "b"]``)."""
    return json.dumps(sorted(ids))


def label_values(case: Mapping[str, Any]) -> set[str]:
    """Every label string of ``case``: answer aliases, hypothesis statements and support sets,
    duplicate classes and the required-survivor set (ID sets as ``id_list`` strings)."""
    values: set[str] = set()
    for probe in case["probes"]:
        values.update(probe["answers"])
    for hypothesis in case["hypotheses"]:
        values.add(hypothesis["statement"])
        values.add(id_list(hypothesis["support"]))
    for members in case["duplicate_classes"]:
        values.add(id_list(members))
    if case["required_survivors"]:
        values.add(id_list(case["required_survivors"]))
    return values


def strings_of(value: Any) -> list[str]:
    """Every string value anywhere in ``value`` (object keys excluded)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for item in value.values() for s in strings_of(item)]
    if isinstance(value, (list, tuple)):
        return [s for item in value for s in strings_of(item)]
    return []


def leaked_label_values(case: Mapping[str, Any], payload: str) -> set[str]:
    """Label values of ``case`` found in ``payload`` (case-insensitively) that are not verbatim in
    any string of the case's own bank. ``payload`` is the request as the provider would read it
    (serialise JSON with ``ensure_ascii=False`` so non-ASCII labels stay comparable)."""
    text = payload.casefold()
    bank = [s.casefold() for s in strings_of(case["bank"])]
    return {
        value for value in label_values(case)
        if value.casefold() in text and not any(value.casefold() in s for s in bank)
    }

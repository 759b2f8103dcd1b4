"""Bulk review: approve or reject several pending proposals, after a preview.

The preview re-reads every selected operation as it is now (``selectors.operation_detail``)
and lists every original each one affects before anything is written; the ones that are
no longer pending, or whose sources are unavailable, are listed apart and not offered.
Each offered item carries its own expected revision and a fresh idempotency key, so the
confirmation is one ordinary, revision-checked, idempotent ``operation_act`` (approve / reject)
per operation — a resubmitted confirmation replays instead of acting twice, and an item
that changed since the preview is a conflict that changes nothing, while its siblings
still go through.

Exact copies need no preview: the journal offers them as one button ("Approve N exact
copies") posting the IDs and revisions it showed and one key, answered by
``services.exact_copies.operations_approve_exact`` (which approves only what is still an
exact copy, each at the revision shown); a resubmission replays.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Optional
from uuid import UUID

from memory.errors import Conflict, MemoryError_, NotFound
from reconsolidation.selectors.operations import operation_get
from reconsolidation.services.exact_copies import ExactApproval, operations_approve_exact
from reconsolidation.services.operations import operation_act
from review_ui import selectors, words
from review_ui.forms import new_key
from veetbot.identity import Principal

log = logging.getLogger(__name__)  # IDs and outcome codes only
ACTIONS = {"approve": "approved", "reject": "rejected"}  # action -> outcome
# One bulk review at most covers a full journal page of the reader's maximum.
BULK_MAX_OPERATIONS = 100
_ITEM = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\|([1-9][0-9]{0,8})\|(review-[0-9a-f-]{36})$")
OUTCOME_WORDS = {
    "approved": "Approved: it is now in use.",
    "rejected": "Rejected: it will not be proposed again.",
    "conflict": "Not applied: it changed after the preview. Nothing was written; open it to see it now.",
    "not_found": "Not applied: it is no longer available.",
    "failed": "Not applied: something went wrong and nothing was written. You can retry.",
}


_EXACT_ITEM = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\|([1-9][0-9]{0,8})$")
_KEY = re.compile(r"^review-[0-9a-f-]{36}$")


class Refused(ValueError):
    """The posted selection or confirmation is malformed (nothing is read or written)."""


@dataclass(frozen=True)
class PreviewItem:
    detail: selectors.Detail
    key: str

    @property
    def token(self) -> str:
        return f"{self.detail.operation.id}|{self.detail.operation.revision}|{self.key}"


@dataclass(frozen=True)
class Preview:
    action: str
    offered: tuple[PreviewItem, ...]
    skipped: tuple[selectors.Detail, ...]


@dataclass(frozen=True)
class Result:
    operation_id: UUID
    outcome: str
    token: str  # the same request again, for an explicit retry
    kind_label: str = "Operation"
    state_label: str = ""

    @property
    def words(self) -> str:
        return OUTCOME_WORDS[self.outcome]

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"


def selection(action: str, raw_ids: list[str]) -> list[UUID]:
    if action not in ACTIONS:
        raise Refused("action")
    ids: list[UUID] = []
    for raw in raw_ids:
        try:
            value = UUID(raw)
        except ValueError:
            raise Refused("operation")
        if value not in ids:
            ids.append(value)
    if not 1 <= len(ids) <= BULK_MAX_OPERATIONS:
        raise Refused("operation")
    return ids


def preview(principal: Principal, action: str, operation_ids: list[UUID]) -> Preview:
    offered, skipped = [], []
    for operation_id in operation_ids:
        try:
            detail = selectors.operation_detail(principal, operation_id)
        except NotFound:
            continue  # foreign or gone: says nothing about it
        if action in detail.actions and not detail.withheld:
            offered.append(PreviewItem(detail=detail, key=new_key()))
        else:
            skipped.append(detail)
    return Preview(action=action, offered=tuple(offered), skipped=tuple(skipped))


def confirmation(action: str, tokens: list[str]) -> list[tuple[UUID, int, str]]:
    if action not in ACTIONS or not 1 <= len(tokens) <= BULK_MAX_OPERATIONS:
        raise Refused("confirmation")
    items = []
    for token in tokens:
        match = _ITEM.fullmatch(token)
        if match is None:
            raise Refused("item")
        items.append((UUID(match.group(1)), int(match.group(2)), match.group(3)))
    if len({i for i, _, _ in items}) != len(items):
        raise Refused("item")
    return items


def apply(principal: Principal, action: str, items: list[tuple[UUID, int, str]]) -> tuple[Result, ...]:
    """One revision-checked, idempotent review call per item; siblings are independent."""
    done = ACTIONS[action]
    results = []
    for operation_id, revision, key in items:
        outcome: Optional[str] = done
        try:
            operation_act(principal=principal, action=action, operation_id=operation_id, expected_revision=revision,
                          idempotency_key=key)
        except NotFound:
            outcome = "not_found"
        except Conflict:
            outcome = "conflict"
        except MemoryError_:
            outcome = "failed"
        log.info("review bulk %s operation=%s outcome=%s", action, operation_id, outcome)
        labels = {}
        try:
            now = operation_get(principal=principal, operation_id=operation_id, ceiling=selectors.CEILING)
            labels = {"kind_label": words.KIND.get(now.kind, now.kind), "state_label": words.STATE.get(now.state, now.state)}
        except NotFound:
            pass
        results.append(Result(operation_id=operation_id, outcome=outcome, token=f"{operation_id}|{revision}|{key}",
                              **labels))
    return tuple(results)


def exact_request(tokens: list[str], key: str) -> dict[UUID, int]:
    """The posted exact copies (``id|revision`` each, once) and their key, or ``Refused``."""
    if _KEY.fullmatch(key) is None or not 1 <= len(tokens) <= BULK_MAX_OPERATIONS:
        raise Refused("exact")
    expected: dict[UUID, int] = {}
    for token in tokens:
        match = _EXACT_ITEM.fullmatch(token)
        if match is None or UUID(match.group(1)) in expected:
            raise Refused("item")
        expected[UUID(match.group(1))] = int(match.group(2))
    return expected


def approve_exact(principal: Principal, expected: dict[UUID, int], key: str) -> tuple[ExactApproval, ...]:
    answers = operations_approve_exact(principal=principal, expected=expected, idempotency_key=key,
                                       ceiling=selectors.CEILING)
    log.info("review exact copies approved=%d of=%d", sum(1 for a in answers if a.approved), len(answers))
    return answers

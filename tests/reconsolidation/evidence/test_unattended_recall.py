"""Recall hides what was committed without owner review while the unattended evidence does
not verify: a merge or summary whose operation carries the operation_committed audit mark
renders only while ``admission.unattended_admitted()``; an owner-approved one always does."""
from __future__ import annotations

from reconsolidation.evidence import admission
from reconsolidation.rows import audit
from tests.reconsolidation.recall_builders import merge, summary
from tests.reconsolidation.test_recall_integration import (  # noqa: F401 (fixtures: on, related)
    BUILT, QUERY, _dupes, _ids, on, related,
)
from tests.recall.helpers import bank  # noqa: F401 (the bank fixture)
from veetbot.rls import owner_context


def auto_committed(bank, op):
    with owner_context(bank.principal):
        audit(bank.principal, "operation_committed", BUILT, reason=op.kind, operation_id=op.id)


def test_an_auto_committed_merge_suppresses_only_while_the_evidence_verifies(bank, on, monkeypatch):
    a, b, c = _dupes(bank)
    auto_committed(bank, merge(bank.principal, a, b, c, now=BUILT))
    monkeypatch.setattr(admission, "unattended_admitted", lambda: False)
    assert set(_ids(bank.recall(QUERY))) == {a, b, c}  # evidence missing or changed: hidden
    monkeypatch.setattr(admission, "unattended_admitted", lambda: True)
    assert _ids(bank.recall(QUERY)) == [a]


def test_an_auto_committed_summary_is_withheld_without_evidence(bank, on, related, monkeypatch):
    anchor, p, q = related
    op = summary(bank.principal, [[p], [q]], omitted=[anchor], now=BUILT)
    auto_committed(bank, op)
    monkeypatch.setattr(admission, "unattended_admitted", lambda: False)
    assert op.id not in _ids(bank.recall(QUERY))
    monkeypatch.setattr(admission, "unattended_admitted", lambda: True)
    assert op.id in _ids(bank.recall(QUERY))


def test_an_owner_approved_merge_needs_no_evidence(bank, on, monkeypatch):
    a, b, c = _dupes(bank)
    merge(bank.principal, a, b, c, now=BUILT)  # no operation_committed mark: reviewed
    monkeypatch.setattr(admission, "unattended_admitted", lambda: False)
    assert _ids(bank.recall(QUERY)) == [a]

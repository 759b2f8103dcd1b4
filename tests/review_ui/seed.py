"""A small reviewed-mode bank for the dashboard tests, built through the real services:
one proposal of each kind the rules provider makes (merge, summary, conflict), optionally
approved, for one fresh owner."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.test import override_settings

from reconsolidation.domain import OperationView
from reconsolidation.store import ReconsolidationStore
from tests.factories import T0, make_owner
from tests.reconsolidation.helpers import original
from tests.reconsolidation.work_builders import approve, by_kind, process
from veetbot.identity import Principal

DAY_ONE = T0 + timedelta(days=1)
SECRET = "zebra-sapphire"  # planted in every statement: must never reach a URL or a log


@dataclass
class Bank:
    owner: Principal
    token: str
    merge: OperationView
    summary: OperationView
    conflict: OperationView
    originals: dict


def build_bank(*, approve_kinds: tuple[str, ...] = ()) -> Bank:
    owner, token = make_owner()
    store = ReconsolidationStore()
    made = {}
    with override_settings(AGENT_MEMORY_RECONSOLIDATION_ENABLED=True):
        a = original(owner, f"The owner prefers Celsius {SECRET}.", subject="units")
        b = original(owner, f"The owner prefers Celsius {SECRET}.", subject="units")
        (merge,) = by_kind(process(store, owner, [a, b], DAY_ONE), "merge_equivalent")
        c = original(owner, f"The owner runs on Tuesdays {SECRET}.", subject="running")
        d = original(owner, f"The owner runs along the river {SECRET}.", subject="running")
        (summary,) = by_kind(process(store, owner, [c, d], DAY_ONE), "summarize_related")
        e = original(owner, f"The owner's flat is on floor 3 {SECRET}.", subject="home")
        f = original(owner, f"The owner's flat is on floor 4 {SECRET}.", subject="home")
        (conflict,) = by_kind(process(store, owner, [e, f], DAY_ONE), "flag_conflict")
        for name, op in (("merge", merge), ("summary", summary), ("conflict", conflict)):
            made[name] = approve(store, owner, op, DAY_ONE) if name in approve_kinds else op
    return Bank(owner=owner, token=token, merge=made["merge"], summary=made["summary"], conflict=made["conflict"],
                originals={"merge": (a, b), "summary": (c, d), "conflict": (e, f)})

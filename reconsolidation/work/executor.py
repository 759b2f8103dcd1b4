"""ReconsolidationBatchExecutor: one admitted batch request sent once, outside every transaction.

The request is the whole slice's batch (one proposal, then one verification) on the lease
its groups share, so a slice makes at most two calls. The provider runs in a worker thread
that never touches the database; this thread watches it and owns every database step: one
attempt, the adapter's limits plus the slice ceiling, lease renewal while the call runs,
cancellation (lost lease, kill switch, shutdown, ceiling) that the adapter honours by
closing its connection, then settlement (``execute`` spells each out).

Money fails safe: only a consistent terminal response lowers the reservation; anything
else — a settlement that cannot finish in time or a lost lease included — leaves it
charged in full. Nothing here logs or stores a prompt, response, source text or error
prose; the call audit gets finite outcomes and verified token counts only.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable, Optional

from celery.signals import worker_shutting_down
from django.conf import settings
from django.db import DatabaseError, connections, transaction

from reconsolidation import bounds
from reconsolidation.work.admission import Admission, request_shutdown, shutdown_requested
from reconsolidation.domain import GroupLease, SpendReceipt
from reconsolidation.errors import LeaseLost, ReconsolidationError
from reconsolidation.leases import processing_enabled
from reconsolidation.providers.contract import Provider, ProviderFailure, ProviderResult, limit
from reconsolidation.providers.settlement import settlement_for
from reconsolidation.store import ReconsolidationStore
from veetbot.identity import Principal
from veetbot.rls import RUNTIME_ALIAS

RECON_SETTLEMENT_SECONDS = 5.0
_TIMEOUTS = "SELECT set_config('lock_timeout', %s, true), set_config('statement_timeout', %s, true)"



@worker_shutting_down.connect(weak=False)
def _worker_shutting_down(**_kwargs) -> None:
    request_shutdown()


@dataclass(frozen=True)
class Execution:
    result: ProviderResult
    receipt: Optional[SpendReceipt]  # None: settlement refused (lease lost) — the full charge stays
    # Why the batch stops here: lease_lost | kill_switch | shutdown | slice_deadline | call_limit
    # | settlement_failed, or "" (it may go on).
    cancelled: str = ""
    finished_at: Optional[datetime] = None


class ReconsolidationBatchExecutor:
    def __init__(self, store: ReconsolidationStore, principal: Principal, provider: Provider, *,
                 renew_seconds: Optional[float] = None, poll_seconds: float = 0.02,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.store, self.principal, self.provider = store, principal, provider
        if renew_seconds is None:  # read at construction so a deployment (or test) may tighten it
            renew_seconds = float(getattr(settings, "RECON_RENEW_SECONDS", bounds.RECON_RENEW_SECONDS))
        self.renew_seconds, self.poll_seconds, self.monotonic = renew_seconds, poll_seconds, monotonic

    def _watch(self, worker: threading.Thread, cancel: threading.Event, slice_lease: GroupLease,
               now: datetime, began: float) -> str:
        """Wait for the worker; return why it was cancelled ("" when it finished on its own)."""
        backstop = float(limit("RECON_PROVIDER_CALL_SECONDS")) + 1.0
        renewed = began
        while worker.is_alive():
            worker.join(self.poll_seconds)
            if not worker.is_alive():
                break
            elapsed = self.monotonic() - began
            instant = now + timedelta(seconds=elapsed)
            reason = ""
            if shutdown_requested():
                reason = "shutdown"
            elif not processing_enabled():
                reason = "kill_switch"
            elif instant >= slice_lease.slice_deadline_at:
                reason = "slice_deadline"
            elif elapsed >= backstop:
                reason = "call_limit"
            elif self.monotonic() - renewed >= self.renew_seconds:
                try:
                    self.store.renew(self.principal, slice_lease.job_id, slice_lease.lease_token, now=instant)
                    renewed = self.monotonic()
                except (LeaseLost, ReconsolidationError):
                    reason = "lease_lost"
            if reason:
                cancel.set()
                worker.join(RECON_SETTLEMENT_SECONDS)
                return reason
        return ""

    def _settle(self, admission: Admission, slice_lease: GroupLease, plan, finished: datetime) -> SpendReceipt:
        """``store.settle`` inside a transaction whose lock waits and statements are bounded
        by ``RECON_SETTLEMENT_SECONDS`` (the store's unit of work nests in it)."""
        bound_ms = str(max(1, int(RECON_SETTLEMENT_SECONDS * 1000)))
        with transaction.atomic(using=RUNTIME_ALIAS), connections[RUNTIME_ALIAS].cursor() as cursor:
            cursor.execute("SELECT current_setting('lock_timeout'), current_setting('statement_timeout')")
            before = cursor.fetchone()
            cursor.execute(_TIMEOUTS, [bound_ms, bound_ms])
            receipt = self.store.settle(self.principal, admission.reservation.id, outcome=plan.outcome,
                                        actual_usd=plan.actual_usd, lease_token=slice_lease.lease_token,
                                        completion=plan.completion, now=finished)
            cursor.execute(_TIMEOUTS, list(before))  # an enclosing transaction keeps its own bounds
            return receipt

    def execute(self, admission: Admission, *, now: datetime) -> Execution:
        """Send the admitted batch request once and settle its one reservation.

        * one attempt (``maximum_provider_attempts`` = 1 is bound into the prepared request);
        * the per-call limit (``RECON_PROVIDER_CALL_SECONDS``) and idle limit
          (``RECON_PROVIDER_IDLE_SECONDS``) are the adapter's; the executor adds the slice's
          ceiling (``slice_deadline_at`` of the batch's lease) and a backstop at the call limit;
        * the slice lease is renewed every ``RECON_RENEW_SECONDS`` while the call runs; a lost
          lease, the kill switch, shutdown or the ceiling sets the cancel event, which the adapter
          honours by shutting its connection down and joining its transfer thread (bounded);
        * shutdown is ``request_shutdown()`` (a Celery worker's ``worker_shutting_down`` signal
          calls it) or a ``KeyboardInterrupt``/``SystemExit`` arriving while the call runs (Ctrl-C
          on ``manage.py dream``): the call is cancelled and settled, then the interrupt
          propagates; admission then refuses every further request (``shutdown``), so the slice
          defers its remaining groups without spending;
        * settlement follows within ``RECON_SETTLEMENT_SECONDS`` through ``providers.settlement``,
          in a transaction with lock and statement timeouts of that bound; when it cannot settle
          in time (``settlement_failed``) or the lease is already lost (``lease_lost``), the
          reservation stays fully charged (recovery marks it unknown) and the batch stops:
          ``Execution.cancelled`` names why. Settlement adds the completion to the call audit
          written at admission (times, finite transport outcome, verified token counts).
        """
        slice_lease = admission.leases[0]  # every lease of a batch names the same job, token and deadline
        prepared = admission.request
        now = max(now, admission.reservation.reserved_at)  # admission sampled its instant after lock waits
        cancel = threading.Event()
        box: dict = {}

        def call() -> None:
            try:
                box["result"] = self.provider.complete(prepared, cancel=cancel)
            except Exception:  # noqa: BLE001 - a provider must not raise; if one does, it is a failure
                box["result"] = None

        began = self.monotonic()
        worker = threading.Thread(target=call, name="reconsolidation-provider", daemon=True)
        worker.start()
        interrupted: Optional[BaseException] = None
        try:
            cancelled = self._watch(worker, cancel, slice_lease, now, began)
        except (KeyboardInterrupt, SystemExit) as stop:  # shutdown: cancel, settle, then propagate
            cancel.set()
            worker.join(RECON_SETTLEMENT_SECONDS)
            cancelled, interrupted = "shutdown", stop
        elapsed_ms = int((self.monotonic() - began) * 1000)
        result = box.get("result")
        if cancelled or result is None or result.request_digest != prepared.digest:
            # A cancelled call counts as unknown spend even if a reply raced the cancel.
            result = ProviderFailure(request_digest=prepared.digest, reason="cancelled" if cancelled else
                                     "transport_failed", transport_outcome="cancelled" if cancelled else "failed",
                                     elapsed_ms=elapsed_ms)
        finished = now + timedelta(milliseconds=elapsed_ms)
        plan = settlement_for(result, prepared=prepared, config=self.provider.config, completed_at=finished,
                              elapsed_ms=elapsed_ms)
        receipt = None
        try:
            receipt = self._settle(admission, slice_lease, plan, finished)
        except LeaseLost:
            cancelled = cancelled or "lease_lost"
        except DatabaseError:  # a lock or statement past the settlement bound: the full charge stays
            cancelled = cancelled or "settlement_failed"
        if interrupted is not None:
            raise interrupted
        return Execution(result=result, receipt=receipt, cancelled=cancelled, finished_at=finished)

"""``dream --owner T/P (--once | --until-idle | --dry-run) [--json]``: run reconsolidation
slices in-process (what Celery beat does when a broker is configured).

A thin wrapper over ``reconsolidation.driver``. Other tools rely on these names, options
and JSON keys (``slice_json`` lists them); keep them exactly. ``--once`` runs one leased
slice; ``--until-idle`` repeats slices until the scan generation is complete and no group
awaits the model (a progress bar on a terminal); ``--dry-run`` reports the anchors the
next slice would select, the groups it would form and the exclusion reasons, and writes
nothing.

The processing switch (AGENT_MEMORY_RECONSOLIDATION_ENABLED) must be on: when it is off
the command says so and exits non-zero. An unknown or malformed --owner is refused
before anything is written. Output carries IDs, counts and states only, never content.
"""
from __future__ import annotations

import json
import socket
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.management.commands._owner_option import parse_owner
from django.core.exceptions import ImproperlyConfigured

from reconsolidation.dry_run import DryRun, dry_run_slice
from reconsolidation import mode
from reconsolidation import driver
from reconsolidation.errors import ReconsolidationDisabled
from reconsolidation.leases import processing_enabled
from veetbot.identity import Principal
from veetbot.progress import ProgressBar

DISABLED = ("reconsolidation processing is disabled: set AGENT_MEMORY_RECONSOLIDATION_ENABLED=true "
            "to run dreaming slices (invalidation, undo and history work without it)")


def operation_json(operation) -> dict[str, Any]:
    ids = [str(ref.memory_id) for ref in operation.inputs]
    key = "members" if operation.kind == "merge_equivalent" else "support"
    return {"id": str(operation.id), "kind": operation.kind, "state": operation.state, key: ids}


def slice_json(number: int, run: driver.SliceRun) -> dict[str, Any]:
    """The ``--json`` object of one slice; other tools rely on these keys, keep them exactly.

    ``{"slice", "anchors_scanned", "groups_selected", "groups_deferred", "operations": [{"id",
    "kind", "state", "members" (merge_equivalent) or "support" (other kinds): [memory IDs]}],
    "spend_usd", "calls", "input_tokens", "output_tokens", "generation_complete", "seconds",
    "coverage"}``. ``slice`` numbers the slices of this run from 1; ``groups_selected`` counts
    the groups the slice handed to the model; ``groups_deferred`` the groups still waiting for
    the model when it ended (queued, or returned on budget); ``spend_usd`` is the Decimal
    charged under the slice's lease, as a string; ``calls`` the provider requests reserved
    under it (at most two: proposal and verification) and the tokens their settlements
    reported; ``coverage`` scan and model coverage apart.
    """
    return {
        "slice": number,
        "anchors_scanned": run.report.full_anchors + run.report.changed_anchors,
        "groups_selected": run.groups_processed,
        "groups_deferred": run.groups_pending,
        "operations": [operation_json(operation) for operation in run.operations],
        "spend_usd": str(run.spend_usd),
        **run.usage.model_dump(),  # calls, input_tokens, output_tokens
        "generation_complete": run.generation_complete,
        "seconds": run.seconds,
        "coverage": driver.coverage_json(driver.coverage_after(run)),  # scan and model coverage apart
    }


def dry_run_json(preview: DryRun) -> dict[str, Any]:
    return {
        "dry_run": True, "due": preview.due, "leased_elsewhere": preview.leased_elsewhere,
        "generation": preview.generation, "new_generation": preview.new_generation,
        "generation_size": preview.generation_size, "full_cursor": preview.full_cursor,
        "paused": preview.paused, "pending_groups": preview.pending_groups,
        "anchors": [{"id": str(a.memory_id), "lane": a.lane, "outcome": a.outcome, "reason": a.reason}
                    for a in preview.anchors],
        "groups": [{"anchor": str(g.anchor_id), "members": [str(m) for m in g.members]} for g in preview.groups],
        "model_queue": [str(group_id) for group_id in preview.model_queue],
    }


def lease_owner() -> str:
    return f"dream@{socket.gethostname()}"


class Command(BaseCommand):
    help = ("Run reconsolidation (dreaming) slices for one owner in-process: --once, --until-idle or --dry-run. "
            "--json prints one object per slice.")

    def add_arguments(self, parser):
        parser.add_argument("--owner", required=True, metavar="TENANT_UUID/PRINCIPAL_UUID")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--once", action="store_true", help="run one slice")
        mode.add_argument("--until-idle", action="store_true",
                          help="repeat slices until the scan generation is complete and no group is pending")
        parser.add_argument("--dry-run", action="store_true",
                            help="report what the next slice would select and why; write nothing")
        parser.add_argument("--json", action="store_true", help="one JSON object per slice")

    def handle(self, *args, **options):
        principal = parse_owner(options["owner"])
        if options["dry_run"] and options["until_idle"]:
            raise CommandError("--dry-run previews one slice: it cannot be combined with --until-idle")
        if not (options["once"] or options["until_idle"] or options["dry_run"]):
            raise CommandError("give --once, --until-idle or --dry-run")
        if not processing_enabled():
            raise CommandError(DISABLED)
        try:
            mode.check_startup()  # unattended needs matching release evidence before any slice
        except ImproperlyConfigured as refused:
            raise CommandError(str(refused))
        if not driver.owner_exists(principal):
            raise CommandError("--owner: no such owner")
        try:
            if options["dry_run"]:
                self._dry_run(principal, options["json"])
            else:
                self._slices(principal, until_idle=options["until_idle"], as_json=options["json"])
        except ReconsolidationDisabled:
            raise CommandError(DISABLED)

    def _dry_run(self, principal: Principal, as_json: bool) -> None:
        preview = dry_run_slice(principal)
        if as_json:
            self.stdout.write(json.dumps(dry_run_json(preview)))
            return
        if not preview.due:
            self.stdout.write(f"dry run: nothing due ({preview.pending_groups} groups pending); nothing written")
            return
        outcomes: dict[str, int] = {}
        for anchor in preview.anchors:
            label = f"excluded:{anchor.reason}" if anchor.outcome == "excluded" else anchor.outcome
            outcomes[label] = outcomes.get(label, 0) + 1
        self.stdout.write(
            f"dry run (generation {preview.generation}{', new' if preview.new_generation else ''}, "
            f"cursor {preview.full_cursor}/{preview.generation_size}{', paused: pending cap' if preview.paused else ''}"
            f"{', lease held elsewhere' if preview.leased_elsewhere else ''}): "
            f"{len(preview.anchors)} anchors, {len(preview.groups)} groups would form, "
            f"{len(preview.model_queue)} queued groups would go to the model; nothing written"
        )
        for label, count in sorted(outcomes.items()):
            self.stdout.write(f"  {label}: {count}")
        for anchor in preview.anchors:
            reason = f" ({anchor.reason})" if anchor.reason else ""
            self.stdout.write(f"  anchor {anchor.memory_id} [{anchor.lane}] {anchor.outcome}{reason}")
        for group in preview.groups:
            self.stdout.write(f"  group for {group.anchor_id}: {len(group.members)} members")

    def _slices(self, principal: Principal, *, until_idle: bool, as_json: bool) -> None:
        bar = ProgressBar(self.stderr._out)  # the raw stream: drawn in place, only on a terminal

        def show(number: int, run: driver.SliceRun) -> None:
            if as_json:
                self.stdout.write(json.dumps(slice_json(number, run)))
            else:
                bar.close()
                self.stdout.write(self._line(number, run))
            cover = run.coverage
            bar("dreaming", min(cover.full_cursor, cover.generation_size), cover.generation_size)

        try:
            runs, stopped = driver.run_until_idle(principal, lease_owner=lease_owner(),
                                                  max_slices=None if until_idle else 1, on_slice=show)
        finally:
            bar.close()
        if not runs:
            self.stderr.write("nothing due: the generation is complete and no group is pending, "
                              "or another worker holds this owner's lease")
        elif until_idle and stopped != "idle":
            self.stderr.write(f"stopped before idle: {stopped.replace('_', ' ')}")

    @staticmethod
    def _line(number: int, run: driver.SliceRun) -> str:
        kinds: dict[str, int] = {}
        for operation in run.operations:
            kinds[f"{operation.kind}/{operation.state}"] = kinds.get(f"{operation.kind}/{operation.state}", 0) + 1
        ops = ", ".join(f"{count} {label}" for label, count in sorted(kinds.items())) or "no operations"
        cover = run.coverage
        return (
            f"slice {number}: {run.report.full_anchors + run.report.changed_anchors} anchors scanned, "
            f"{run.groups_processed} groups to the model, {run.groups_pending} waiting; {ops}; "
            f"spend USD {run.spend_usd}; scan {cover.full_cursor}/{cover.generation_size}"
            f"{' complete' if run.generation_complete else ''}"
        )

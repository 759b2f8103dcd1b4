"""Every proposal of one group, recorded inside the caller's owner transaction: the rules
path (``process``) and the model path (``apply_review``) both finish a group this way.

The group is locked and checked once (``operations.check_group``: lease, claim, inputs,
fence, source revisions and eligibility); each proposal is then recorded in its own
savepoint (``operations.record``), so a refused one rolls back alone. Checking once is
what the commits cost: a group's proposals share every source lock, and sources change
only under the owner lock, which the transaction holds throughout.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Sequence

from reconsolidation.domain import GroupLease, OperationView, Proposal
from reconsolidation.errors import BudgetExhausted, Conflict, Invalid, LeaseLost, ReviewQueueFull, StaleInputs
from reconsolidation.store import ReconsolidationStore
from reconsolidation.work.replan import replan_union
from reconsolidation.writers.apply import ProposalRefused
from veetbot.identity import Principal


@dataclass
class GroupCommits:
    """What became of a group's proposals."""

    recorded: list[OperationView] = field(default_factory=list)
    refused: dict[int, str] = field(default_factory=dict)  # proposal index -> reason code
    stale: int = 0  # proposals whose sources changed
    budget: str = ""  # the slice's operation budget or the review queue ran out: the rest waits


def commit_proposals(store: ReconsolidationStore, principal: Principal, group_lease: GroupLease,
                     proposals: Sequence[Proposal], now: datetime) -> GroupCommits:
    """Record ``proposals`` in order (caller holds the owner context). ``LeaseLost`` ends the
    group; a refused overlapping merge is replanned as the union of the sets it overlaps
    (``replan_union``); a full budget or review queue leaves the rest for a later slice."""
    done = GroupCommits()
    if not proposals:
        return done
    try:
        checked = store.check_group(principal, group_lease, now=now)
    except LeaseLost:
        raise
    except StaleInputs:  # every proposal's sources changed with the group's
        done.stale = len(proposals)
        return done
    except Conflict as error:  # a lost fence refuses every proposal of the group
        done.refused = {index: getattr(error, "reason", "") or "refused" for index in range(len(proposals))}
        return done
    for index, proposal in enumerate(proposals):
        try:
            done.recorded.append(store.record(principal, checked, proposal, now=now))
        except LeaseLost:
            raise
        except (BudgetExhausted, ReviewQueueFull) as error:
            done.budget = error.reason
            break
        except ProposalRefused as error:
            done.refused[index] = error.reason
            if error.reason == "overlapping_membership":
                replan_union(store, principal, group_lease, proposal, now)
        except StaleInputs:
            done.stale += 1
        except (Conflict, Invalid) as error:  # a malformed proposal rejects only itself as well
            done.refused[index] = getattr(error, "reason", "") or "refused"
    return done

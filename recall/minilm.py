"""all-MiniLM-L6-v2 in plain torch: the BERT encoder, mean pooling and L2 normalisation
that sentence-transformers composes for this model, read straight from its verified files.

Why not sentence-transformers: importing it (with transformers behind it) took ≈ 10 s on
this machine kind, against ≈ 2.7 s for torch alone, and every serving process, worker and
quick start paid it. The arithmetic here is the model's own — a 6-layer, 12-head,
384-wide post-LayerNorm BERT with exact GELU — so vectors agree with sentence-transformers'
to float rounding (the pinned reference values in tests/recall/test_encoders.py, and
``test_plain_torch_minilm_matches_sentence_transformers``).

Configuration is read from the model's own ``modules.json``, ``config.json``,
``sentence_bert_config.json`` and ``1_Pooling/config.json``; anything other than what this module implements (another
architecture, activation, pooling) is refused, never approximated.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence


class UnsupportedModel(ValueError):
    """The model's configuration asks for something this module does not implement."""


def _config(directory: Path) -> tuple[dict, int]:
    config = json.loads((directory / "config.json").read_text())
    pooling = json.loads((directory / "1_Pooling" / "config.json").read_text())
    sentence = json.loads((directory / "sentence_bert_config.json").read_text())
    if (config.get("model_type") != "bert" or config.get("hidden_act") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"):
        raise UnsupportedModel("only absolute-position BERT with exact GELU")
    modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((directory / "modules.json").read_text())]
    if modules != ["Transformer", "Pooling", "Normalize"]:
        raise UnsupportedModel("only transformer -> pooling -> normalize")
    modes = {k: v for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
    if set(modes) != {"pooling_mode_mean_tokens"}:
        raise UnsupportedModel("only mean pooling")
    return config, int(sentence["max_seq_length"])


class MiniLM:
    """Loaded once; ``encode(texts, batch)`` -> unit vectors (lists of floats)."""

    def __init__(self, directory: Path):
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        self.torch = torch
        config, max_tokens = _config(directory)
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.weights = {name.removeprefix("bert."): tensor.float() for name, tensor in
                        load_file(str(directory / "model.safetensors")).items()}
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding(pad_id=int(config.get("pad_token_id", 0)), pad_token="[PAD]")

    def _linear(self, x, name: str):
        return self.torch.nn.functional.linear(x, self.weights[f"{name}.weight"], self.weights[f"{name}.bias"])

    def _norm(self, x, name: str):
        return self.torch.nn.functional.layer_norm(
            x, x.shape[-1:], self.weights[f"{name}.weight"], self.weights[f"{name}.bias"], self.eps)

    def _layer(self, hidden, mask, index: int):
        functional = self.torch.nn.functional
        prefix = f"encoder.layer.{index}"
        batch, length, width = hidden.shape
        head = width // self.heads

        def split(x):
            return x.view(batch, length, self.heads, head).transpose(1, 2)

        query = split(self._linear(hidden, f"{prefix}.attention.self.query"))
        key = split(self._linear(hidden, f"{prefix}.attention.self.key"))
        value = split(self._linear(hidden, f"{prefix}.attention.self.value"))
        context = functional.scaled_dot_product_attention(query, key, value, attn_mask=mask)
        context = context.transpose(1, 2).reshape(batch, length, width)
        attended = self._norm(self._linear(context, f"{prefix}.attention.output.dense") + hidden,
                              f"{prefix}.attention.output.LayerNorm")
        inner = functional.gelu(self._linear(attended, f"{prefix}.intermediate.dense"))
        return self._norm(self._linear(inner, f"{prefix}.output.dense") + attended, f"{prefix}.output.LayerNorm")

    def _batch(self, texts: Sequence[str]) -> list[list[float]]:
        torch = self.torch
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = torch.tensor([e.ids for e in encoded])
        types = torch.tensor([e.type_ids for e in encoded])
        attention = torch.tensor([e.attention_mask for e in encoded], dtype=torch.float32)
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        w = self.weights
        hidden = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][positions]
                  + w["embeddings.token_type_embeddings.weight"][types])
        hidden = self._norm(hidden, "embeddings.LayerNorm")
        mask = (1.0 - attention)[:, None, None, :] * torch.finfo(torch.float32).min
        for index in range(self.layers):
            hidden = self._layer(hidden, mask, index)
        summed = (hidden * attention.unsqueeze(-1)).sum(dim=1)
        pooled = summed / attention.sum(dim=1, keepdim=True).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).tolist()

    def encode(self, texts: Sequence[str], batch_items: int) -> list[list[float]]:
        """Unit vectors in input order. Texts are batched longest first (as
        sentence-transformers does), so short texts are not padded to a long one's length."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors: list = [None] * len(texts)
        with self.torch.inference_mode():
            for start in range(0, len(order), batch_items):
                chunk = order[start:start + batch_items]
                for index, vector in zip(chunk, self._batch([texts[i] for i in chunk])):
                    vectors[index] = vector
        return vectors

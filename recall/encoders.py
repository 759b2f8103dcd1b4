"""Encoders behind one interface (the embedding port).

INTERFACE (stable; the retriever and backfill depend on it):

    class Encoder(Protocol):
        tuple: EmbeddingTuple            # identity of the embedding space
        def encode(self, texts: Sequence[str]) -> list[list[float]]: ...
            # one finite vector of tuple.dimensions per text, in input order;
            # raises EncoderUnavailable on any failure (no silent retries)

    def get_encoder() -> Encoder | None
        # the configured encoder (settings.RECALL_ENCODER), loaded lazily once per
        # process; None when AGENT_MEMORY_SEMANTIC_ENABLED is off.

    class EncoderUnavailable(Exception)
"""

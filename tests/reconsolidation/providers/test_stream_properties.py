"""Property: whatever bytes an OpenAI-compatible server streams, in whatever chunking, the
adapter's event reader ends in a verified usage or a finite failure reason — no other
exception escapes. (The transport is exercised against a real server in
test_openai_adapter.py; this drives the same reader with arbitrary byte streams.)"""
from __future__ import annotations

from hypothesis import given, settings as hsettings, strategies as st

from reconsolidation.providers.contract import FailureReason, Usage
from reconsolidation.providers.openai import OpenAIProvider, _Fail, _Stream
from tests.reconsolidation.providers.builders import prepared
from tests.reconsolidation.providers.sse_server import DONE, chunk, valid_events

REQUEST = prepared().request
FAILURES = set(FailureReason.__args__)


class _Response:
    def __init__(self, chunks):
        self.chunks = chunks

    def iter_bytes(self):
        yield from self.chunks


def outcome(chunks):
    stream = _Stream(REQUEST)
    try:
        OpenAIProvider._read_events(_Response(chunks), stream, {"abort": False})
        return stream.result()
    except _Fail as failed:
        assert failed.reason in FAILURES
        return failed.reason


def rechunk(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(points, points[1:])]


PIECES = st.sampled_from([
    chunk(content="{"), chunk(content="}"), chunk(finish="stop"), chunk(finish="length"),
    chunk(usage={"prompt_tokens": 5, "completion_tokens": 2}, choices=False), DONE, b"\n", b": ping\n\n",
    chunk("other", content="x"), b"data: {\n\n", b"event: x\n", b"\r\n",
])


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=12))
def test_arbitrary_bytes_end_in_usage_or_a_finite_reason(chunks):
    result = outcome(chunks)
    assert isinstance(result, Usage) or result in FAILURES


@hsettings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=12), st.lists(st.integers(0, 10_000), max_size=6))
def test_shuffled_and_rechunked_events_end_in_usage_or_a_finite_reason(pieces, cuts):
    result = outcome(rechunk(b"".join(pieces), cuts))
    assert isinstance(result, Usage) or result in FAILURES


@hsettings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 10_000), max_size=8))
def test_a_valid_stream_verifies_whatever_its_chunking(cuts):
    data = b"".join(valid_events('{"a": "é"}', usage={"prompt_tokens": 5, "completion_tokens": 2}))
    assert outcome(rechunk(data, cuts)) == Usage(input_tokens=5, output_tokens=2)


@hsettings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 10_000), max_size=8))
def test_crlf_line_endings_split_anywhere_still_verify(cuts):
    data = b"".join(valid_events('{"a": 1}', usage={"prompt_tokens": 5, "completion_tokens": 2}))
    data = data.replace(b"\n", b"\r\n")
    assert outcome(rechunk(data, cuts)) == Usage(input_tokens=5, output_tokens=2)


def test_a_long_line_without_newline_is_read_in_linear_time():
    import time

    started = time.monotonic()
    assert outcome([b"data: " + b"a" * 4096] + [b"a" * 4096] * 900) == "interrupted"
    assert time.monotonic() - started < 2.0

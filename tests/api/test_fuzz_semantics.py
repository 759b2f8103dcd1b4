"""The fuzzer's case mapping (tests/api/schemathesis_semantics.py) never aims an erasure at
the shared fixture rows: erasing the fixture session would take the message every generated
memory cites, and later schema-valid requests would be refused for a reason of the run's own
making."""
from __future__ import annotations

from types import SimpleNamespace

from schemathesis.core.parameters import ParameterLocation

from tests.api.schemathesis_semantics import Fixtures, make_meaningful

FIXTURE_SESSION = "11111111-1111-4111-8111-111111111111"


def positive_path_case(method: str, path: str, **parameters):
    mode = SimpleNamespace(is_positive=True)
    meta = SimpleNamespace(components={ParameterLocation.PATH: SimpleNamespace(mode=mode)})
    return SimpleNamespace(method=method, operation=SimpleNamespace(path=path), path_parameters=dict(parameters),
                           body=None, query=None, meta=meta)


def test_a_session_erasure_never_names_the_fixture_session_whatever_was_generated():
    fixtures = Fixtures(source={"event": "e", "part": "p"}, session_id=FIXTURE_SESSION, person_id=None,
                        session_ids=[FIXTURE_SESSION], disposable=lambda kind: None)
    for n in range(60):  # generated IDs; _pick would map about two in three to the fixture
        generated = f"00000000-0000-4000-8000-{n:012d}"
        case = make_meaningful(positive_path_case("DELETE", "/v1/sessions/{session_id}", session_id=generated),
                               fixtures)
        assert case.path_parameters["session_id"] == generated
    # other routes still get the real fixture session
    reads = [make_meaningful(positive_path_case("GET", "/v1/sessions/{session_id}",
                                                session_id=f"00000000-0000-4000-8000-{n:012d}"), fixtures)
             for n in range(60)]
    assert any(case.path_parameters["session_id"] == FIXTURE_SESSION for case in reads)


def test_a_session_erasure_takes_a_fresh_disposable_session_when_one_can_be_made():
    fixtures = Fixtures(source={"event": "e", "part": "p"}, session_id=FIXTURE_SESSION, person_id=None,
                        session_ids=[FIXTURE_SESSION], disposable=lambda kind: f"fresh-{kind}")
    erased = {make_meaningful(positive_path_case("DELETE", "/v1/sessions/{session_id}",
                                                 session_id=f"00000000-0000-4000-8000-{n:012d}"),
                              fixtures).path_parameters["session_id"] for n in range(30)}
    assert "fresh-session" in erased and FIXTURE_SESSION not in erased

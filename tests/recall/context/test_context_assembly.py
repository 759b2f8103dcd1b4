"""Automatic context assembly: the task-context former (the message alone by default; with
the task-context query on, whole fragments within 512 UTF-8 bytes, completed tasks left
out, the baseline for an oversized message; second-round searches only from the turn's
references — the caller's and the message's own — and the owner's own entities), the
planner (at most 4 searches in 2 rounds, one deadline, one shared allowance in which round
two's best finds take round one's lowest places, explicit limitation notices, filters in
every search), POST /v1/memories/context and ``recall --context``."""
from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from recall.arms import semantic
from recall.context import former, planner, references
from recall.context.former import ContextNeed, WorkingFragment
from recall.domain import RecallRequest
from recall.models import RecallTrace
from recall.retriever import recall
from tests.api.conftest import api, assert_error, owner  # noqa: F401 (the api and owner fixtures)
from tests.recall.helpers import NOW, Bank, MappedEncoder, basis, blend, semantic_on  # noqa: F401
from veetbot.rls import owner_context

URL = "/v1/memories/context"


# --- the former ------------------------------------------------------------------------

@pytest.fixture
def task_query(settings):
    settings.RECALL_CONTEXT_TASK_QUERY = True


def test_by_default_the_first_query_is_the_message_alone():
    need = ContextNeed(current_message="Book a table for Friday.", task="plan the anniversary dinner",
                       open_questions=("which restaurant does Dana like",))
    assert former.first_query(need) == "Book a table for Friday."


def test_the_first_query_keeps_whole_fragments_and_leaves_completed_tasks_out(task_query):
    need = ContextNeed(current_message="Book a table for Friday.", task="plan the anniversary dinner",
                       open_questions=("which restaurant does Dana like",),
                       working_state=(WorkingFragment(text="renew the passport", completed=True),
                                      WorkingFragment(text="Dana is vegetarian")))
    query = former.first_query(need)
    assert query == ("Book a table for Friday. plan the anniversary dinner which restaurant does Dana like "
                     "Dana is vegetarian")
    assert "passport" not in query


def test_the_byte_bound_holds_at_and_just_past_it(settings, task_query):
    settings.RECALL_CONTEXT_QUERY_MAX_BYTES = 20
    assert former.first_query(ContextNeed(current_message="abcdefghi", task="0123456789")) == "abcdefghi 0123456789"
    # one byte more and the fragment is left out whole, never cut
    assert former.first_query(ContextNeed(current_message="abcdefghij", task="0123456789")) == "abcdefghij"
    # a fragment that does not fit is skipped and the next one tried
    need = ContextNeed(current_message="abc", task="x" * 30, open_questions=("short",))
    assert former.first_query(need) == "abc short"
    # multi-byte text counts its UTF-8 bytes: "çççç" is 8 bytes
    assert former.first_query(ContextNeed(current_message="abcdefghijk", task="çççç")) == "abcdefghijk çççç"
    assert former.first_query(ContextNeed(current_message="abcdefghijkl", task="çççç")) == "abcdefghijkl"


def test_an_oversized_message_keeps_the_baseline_single_query(task_query):
    message = "word " * 200  # 1,000 bytes
    query = former.first_query(ContextNeed(current_message=message, task="anything"))
    assert query == message.strip()


@pytest.mark.parametrize("message, expected", [
    ("What does my male sibling do for a living?", ["my male sibling"]),
    ("Where does my dad's sister live now?", ["my dad's sister"]),  # not the inverted verb "live"
    ("Which city is my sibling based in?", ["my sibling"]),  # nor "based" after a copula
    ("What does my brother's daughter do for work?", ["my brother's daughter"]),  # "do" is no part of it
    ("Where does the person who does my bookkeeping reside?", ["the person who does my bookkeeping"]),
    ("Which neighbourhood is the lady who tidies my house from?", ["the lady who tidies my house"]),
    ("Who has my portable burner and my tent?", ["my portable burner", "my tent"]),
    ("My brother’s wife—what does she like?", ["My brother’s wife"]),
    # a reference holding everything the message asks about would repeat round one
    ("What's my job now?", []), ("Where is my passport?", []), ("Who is the one that fixed it?", []),
    ("How much can I spend on a new mattress?", []), ("my", []), ("?", []),
])
def test_the_message_makes_its_own_references(message, expected):
    assert references.message_references(message) == expected


def test_round_two_searches_the_turns_references_then_the_entities_and_invents_nothing():
    need = ContextNeed(current_message="What does my male sibling do for a living?",
                       unresolved_references=("that parcel", "What does my male sibling do for a living?"))
    top = [item("Joris", entities=("person:joris",)), item("parcel tracking")]
    plan = former.second_round(need, top, query=need.current_message, room=3, subjects=False)
    # the caller's reference first; the one repeating round one's query is not searched;
    # then the message's own; then the entities of round one's top results
    assert [(s.purpose, s.query) for s in plan] == [
        ("reference", "that parcel"), ("reference", "my male sibling"),
        ("entities", "What does my male sibling do for a living?")]
    assert plan[2].entity_ids == ("person:joris",)
    assert [s.purpose for s in former.second_round(need, top, query=need.current_message, room=1,
                                                                subjects=False)] == ["reference"]
    many = ContextNeed(current_message="hi", unresolved_references=("a", "b", "c", "d"))
    assert [s.query for s in former.second_round(many, [], query="hi", room=3, subjects=False)] == ["a", "b"]
    # without an expansion arm in round one, the subjects of its top results follow, each once
    plain = ContextNeed(current_message="Where do I keep it?")
    top = [item("Maria's flat"), item("Maria's flat"), item("parcel tracking"), item("fourth")]
    assert [(s.purpose, s.query) for s in former.second_round(plain, top, query="Where do I keep it?", room=3,
                                                              subjects=True)] == [
        ("subject", "Maria's flat"), ("subject", "parcel tracking")]


def test_the_entity_search_adds_the_top_results_entities_after_the_turns():
    need = ContextNeed(current_message="What does she do?", active_entities=("person:ana",))
    top = [item("a", entities=("person:ana", "person:rui")), item("b", entities=("place:porto",)),
           *[item(f"x{n}") for n in range(8)], item("eleventh", entities=("person:late",))]
    search = former.entity_feedback(need, top, query="What does she do?")
    assert search.query == "What does she do?"  # the same query: the same query vector
    assert search.entity_ids == ("person:ana", "person:rui", "place:porto")  # top 10 only, the turn's first


def test_the_entity_search_is_bounded_and_skipped_when_it_adds_nothing(monkeypatch):
    need = ContextNeed(current_message="q", active_entities=("person:ana",))
    assert former.entity_feedback(need, [item("a", entities=("person:ana",))], query="q") is None
    assert former.entity_feedback(ContextNeed(current_message="q"), [item("a")], query="q") is None
    many = [item("a", entities=tuple(f"e{n}" for n in range(10)))]
    assert len(former.entity_feedback(need, many, query="q").entity_ids) == former.ENTITY_MAX


def item(subject: str, entities: tuple[str, ...] = ()):
    from recall.domain import RecallItem
    import uuid
    return RecallItem(id=uuid.uuid4(), score=1.0, subject=subject, statement="x", belief_type="fact",
                      polarity="affirmed", derivation="explicit", authority="OWNER_EXPLICIT", attribution="owner",
                      confidence=1.0, sensitivity="internal", evidence_at=NOW, valid_from=NOW, expires_at=None,
                      content_revision=1, sources=(), entity_ids=entities)


# --- the planner -----------------------------------------------------------------------

@pytest.fixture
def bank(db) -> Bank:
    return Bank.new("Context owner")


FILTERS = {"ceiling": "internal"}


def assemble(bank, need, *, max_items=20, max_tokens=2000, monotonic=None, **filters):
    kwargs = {"monotonic": monotonic} if monotonic else {}
    return planner.assemble(bank.principal, need, filters={**FILTERS, **filters}, max_items=max_items,
                            max_tokens=max_tokens, now=NOW, **kwargs)


@pytest.fixture
def sister(bank):
    """Round one finds where the sister lives."""
    return {
        "lives": bank.add("Maria, the owner's sister, lives in Porto.", subject="Maria's flat"),
        "door": bank.add("The blue door on Rua Alegre is the one to knock on.", subject="Maria's flat"),
        "noise": bank.add("The owner bakes sourdough on Sundays.", subject="baking"),
    }


def test_keyword_only_the_second_round_finds_what_the_first_missed_by_subject(bank, sister):
    result = assemble(bank, ContextNeed(current_message="Where does my sister live?"))
    ids = [i.id for i in result.items]
    # the door shares no word with the turn; keyword recall has no expansion arm, so round
    # two searches the subject of round one's best result ("Maria's flat")
    assert ids[0] == sister["lives"] and sister["door"] in ids and sister["noise"] not in ids
    assert [(s.round, s.purpose) for s in result.searches] == [(1, "message"), (2, "reference"), (2, "subject")]
    assert result.rounds == 2 and result.stopped == "" and result.notices == ()
    assert result.context.count("[m:") == len(ids) and "[limitation]" not in result.context


def test_each_search_writes_its_own_content_free_trace(bank, sister):
    result = assemble(bank, ContextNeed(current_message="Where does my sister live?"))
    with owner_context(bank.principal):
        traces = list(RecallTrace.objects.order_by("created_at").values_list("id", "surface"))
    assert [t[1] for t in traces] == ["context"] * len(result.searches)
    assert {s.trace_id for s in result.searches} == {t[0] for t in traces}


@pytest.fixture
def maria(bank):
    """Round one finds where Maria lives; her job shares no word and no subject with the turn."""
    return {
        "lives": bank.add("Maria, the owner's sister, lives in Porto.", subject="family",
                          entity_ids=["person:maria"]),
        "job": bank.add("She works night shifts as a nurse.", subject="work", entity_ids=["person:maria"]),
        "noise": bank.add("The owner bakes sourdough on Sundays.", subject="baking", entity_ids=["person:rui"]),
    }


def test_the_second_round_finds_facts_about_the_entities_round_one_found(bank, maria):
    result = assemble(bank, ContextNeed(current_message="Where does my sister live?"))
    ids = [i.id for i in result.items]
    assert ids[0] == maria["lives"] and maria["job"] in ids and maria["noise"] not in ids
    entities = next(s for s in result.searches if s.purpose == "entities")
    assert entities.round == 2 and entities.new == 1


def test_with_no_room_for_round_two_it_is_not_run_and_the_context_says_so(bank, maria):
    # an allowance of one item leaves round two no place (it may take at most half)
    result = assemble(bank, ContextNeed(current_message="Where does my sister live?"), max_items=1)
    assert [i.id for i in result.items] == [maria["lives"]] and len(result.searches) == 1
    assert result.planned == 4 and result.rounds == 1  # "my sister", Maria, the subject "family"
    assert result.stopped == "allowance" and result.context.endswith(planner.LIMITATION["allowance"])


def test_at_most_four_searches_in_two_rounds(bank, maria):
    need = ContextNeed(current_message="Where does my sister live?",
                       unresolved_references=("the blue door", "Rua Alegre", "Porto", "Maria", "her street"))
    result = assemble(bank, need)
    assert [s.purpose for s in result.searches] == ["message", "reference", "reference", "entities"]
    assert {s.round for s in result.searches} == {1, 2} and result.planned == 4


def test_the_deadline_stops_planned_searches_with_a_notice(bank, sister):
    clock = iter([0.0, 0.0, 0.5, 5.0, 5.0, 5.0, 5.0])
    result = assemble(bank, ContextNeed(current_message="Where does my sister live?",
                                        unresolved_references=("Maria",)), monotonic=lambda: next(clock))
    assert len(result.searches) == 1 and result.planned >= 2
    assert result.stopped == "deadline" and result.notices == (planner.LIMITATION["deadline"],)


def test_filters_hold_in_every_search(bank, sister):
    result = assemble(bank, ContextNeed(current_message="Where does my sister live?"), exclude_ids=(sister["door"],))
    assert sister["door"] not in [i.id for i in result.items]
    assert f"[m:{sister['door']}]" not in result.context


def test_nothing_found_is_an_empty_context_without_a_notice(bank):
    result = assemble(bank, ContextNeed(current_message="What is the capital of Mongolia?"))
    assert (result.items, result.context, result.notices) == ((), "", ())


# --- POST /v1/memories/context -----------------------------------------------------------

def post(api, owner, body):
    return api.post(URL, owner.token, body, key=None)


def test_the_route_answers_the_context_items_and_a_content_free_trace(api, owner):
    bank = Bank(owner.principal)
    memory = bank.add("Maria, the owner's sister, lives in Porto.", subject="sister's home",
                      at=NOW - timedelta(days=40))
    response = post(api, owner, {"current_message": "Where does my sister live?", "ceiling": "internal",
                                 "working_state": [{"text": "buy flowers", "completed": True}]})
    assert response.status_code == 200, response.content
    assert response["Cache-Control"] == "private, no-store"
    body = response.json()
    assert list(body) == ["context", "tokens", "items", "notices", "trace"]
    assert [i["id"] for i in body["items"]] == [str(memory)] and f"[m:{memory}]" in body["context"]
    trace = body["trace"]
    assert set(trace) == {"rounds", "planned", "searches", "stopped", "deadline_ms", "elapsed_ms"}
    assert "sister" not in json.dumps(trace) and "flowers" not in response.content.decode()


@pytest.mark.parametrize("body, field", [
    ({"ceiling": "internal"}, "current_message"),
    ({"current_message": "   ", "ceiling": "internal"}, "current_message"),
    ({"current_message": "hi", "ceiling": "internal", "max_items": 21}, "max_items"),
    ({"current_message": "hi", "ceiling": "internal", "max_tokens": 2001}, "max_tokens"),
    ({"current_message": "hi", "ceiling": "internal", "query": "hi"}, "query"),
    ({"current_message": "hi", "ceiling": "internal", "working_state": [{"text": "x", "done": True}]},
     "working_state.0.done"),
    ({"current_message": "hi", "ceiling": "internal", "unresolved_references": ["x"] * 17}, "unresolved_references"),
])
def test_a_malformed_turn_is_refused_naming_the_field(api, owner, body, field):
    response = post(api, owner, body)
    assert_error(response, 400, "validation_error")
    assert field in [d["field"] for d in response.json()["error"]["details"]], response.json()
    with owner_context(owner.principal):
        assert not RecallTrace.objects.exists()


# --- recall --context ------------------------------------------------------------------

def test_the_command_assembles_the_same_context(bank, sister, tmp_path):
    turn = tmp_path / "turn.json"
    turn.write_text(json.dumps({"current_message": "Where does my sister live?"}))
    out = StringIO()
    call_command("recall", "--context", str(turn), "--owner", f"{bank.principal.tenant_id}/{bank.principal.principal_id}",
                 "--ceiling", "internal", "--json", stdout=out)
    printed = json.loads(out.getvalue())
    assert set(printed) == {"context", "tokens", "items", "notices", "trace"}
    assert printed["items"][0]["id"] == str(sister["lives"]) and printed["trace"]["rounds"] == 2
    assert [t["purpose"] for t in printed["trace"]["searches"]] == ["message", "reference", "subject"]
    out = StringIO()
    call_command("recall", "--context", str(turn), "--owner", f"{bank.principal.tenant_id}/{bank.principal.principal_id}",
                 "--ceiling", "internal", stdout=out)
    assert out.getvalue().rstrip().endswith("3 of 3 planned searches (message, reference, subject) in 2 round(s)")


def test_the_command_refuses_a_bad_turn_or_allowance(bank, tmp_path):
    owner = f"{bank.principal.tenant_id}/{bank.principal.principal_id}"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"message": "hi"}))
    with pytest.raises(CommandError, match="invalid turn"):
        call_command("recall", "--context", str(bad), "--owner", owner, "--ceiling", "internal")
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"current_message": "hi"}))
    with pytest.raises(CommandError, match="--max-items must be between 1 and 20"):
        call_command("recall", "--context", str(good), "--owner", owner, "--ceiling", "internal", "--max-items", "21")
    with pytest.raises(CommandError, match="exactly one"):
        call_command("recall", "hi", "--context", str(good), "--owner", owner, "--ceiling", "internal")


# --- round two reuses round one's semantic list ------------------------------------------

SISTER = "Where does my sister live?"
SEMANTIC_ARM = "nearest AS MATERIALIZED"  # recall.arms.semantic.semantic_arm's statement, in either mode
assert SEMANTIC_ARM in semantic.semantic_arm(False, exact=True) and SEMANTIC_ARM in semantic.semantic_arm(False, exact=False)


@pytest.fixture
def maria_vectors(bank, maria, semantic_on):
    """Semantic recall on; each of Maria's facts a little further from the turn than the last."""
    encoder = MappedEncoder({SISTER: basis(0)}, default=basis(1))
    for n, memory_id in enumerate(maria.values()):
        bank.vector(memory_id, blend(0, n + 2, 0.9 - 0.2 * n), encoder)
    return encoder


def semantic_searches(captured) -> int:
    """Statements of the semantic arm (either mode) among the captured ones."""
    return sum(1 for q in captured.captured_queries if SEMANTIC_ARM in q["sql"])


def test_the_entity_search_reuses_round_ones_semantic_list(bank, maria, maria_vectors):
    with CaptureQueriesContext(connection) as captured:
        result = planner.assemble(bank.principal, ContextNeed(current_message=SISTER), filters=FILTERS,
                                  max_items=20, max_tokens=2000, now=NOW, encoder=maria_vectors)
    # Round one, the reference search ("my sister"), then the entity search: all but the
    # entity search search the semantic arm.
    assert {s.channel for s in result.searches} == {"hybrid"} and len(result.searches) >= 2
    assert semantic_searches(captured) == len(result.searches) - 1
    ids = [i.id for i in result.items]
    assert ids[0] == maria["lives"] and maria["job"] in ids


def test_a_reused_semantic_list_recalls_what_a_fresh_search_does(bank, maria, maria_vectors):
    first = bank.recall(SISTER, encoder=maria_vectors)
    with CaptureQueriesContext(connection) as captured:
        reused = recall(principal=bank.principal, now=NOW, encoder=maria_vectors, surface="eval",
                        semantic_from=first.semantic_list,
                        request=RecallRequest(query=SISTER, ceiling="internal", entity_ids=("person:maria",)))
    fresh = bank.recall(SISTER, encoder=maria_vectors, entity_ids=("person:maria",))
    assert semantic_searches(captured) == 0
    assert [(i.id, i.score) for i in reused.items] == [(i.id, i.score) for i in fresh.items]
    assert reused.stages == fresh.stages and reused.semantic_list == fresh.semantic_list


@pytest.mark.parametrize("changed", [{"query": "Where does Maria work?"}, {"ceiling": "public"},
                                     {"max_items": 5}, {"belief_types": ("fact",)}, "exclude"])
def test_a_semantic_list_read_for_another_query_or_predicate_is_searched_again(bank, maria, maria_vectors,
                                                                               changed):
    first = bank.recall(SISTER, encoder=maria_vectors)
    fields = {"query": SISTER, "ceiling": "internal"}
    fields.update({"exclude_ids": (maria["lives"],)} if changed == "exclude" else changed)
    encoder = MappedEncoder({SISTER: basis(0), "Where does Maria work?": basis(0)}, default=basis(1))
    encoder.tuple = maria_vectors.tuple
    with CaptureQueriesContext(connection) as captured:
        other = recall(principal=bank.principal, now=NOW, encoder=encoder, surface="eval",
                       semantic_from=first.semantic_list, request=RecallRequest(**fields))
    assert other.channel == "hybrid" and semantic_searches(captured) == 1
    assert other.semantic_list.key != first.semantic_list.key
    if changed == "exclude":
        assert maria["lives"] not in other.stages.dense_ids


def test_a_semantic_list_of_another_instant_is_searched_again(bank, maria, maria_vectors):
    first = bank.recall(SISTER, encoder=maria_vectors)
    with CaptureQueriesContext(connection) as captured:
        recall(principal=bank.principal, now=NOW + timedelta(seconds=1), encoder=maria_vectors, surface="eval",
               semantic_from=first.semantic_list, request=RecallRequest(query=SISTER, ceiling="internal"))
    assert semantic_searches(captured) == 1


# --- round two's finds take round one's lowest places --------------------------------------

SIBLING = "What does my male sibling do for a living?"


def test_a_reference_search_finds_who_the_message_means_and_their_other_facts(bank, semantic_on):
    """The whole question's vector sits among other people's jobs; only the reference the
    message makes ("my male sibling") is near the brother, and that search's expansion arm
    brings his job, which shares his subject. Both take round one's two lowest places."""
    encoder = MappedEncoder({SIBLING: basis(0), "my male sibling": basis(1)}, default=basis(2))
    jobs = []
    for n in range(25):
        memory_id = bank.add(f"Colleague {n} works as a clerk.", subject=f"colleague {n}")
        bank.vector(memory_id, blend(0, 10 + n, 0.9 - 0.001 * n), encoder)
        jobs.append(memory_id)
    brother = bank.add("Joris Hamer is the owner's brother.", subject="Joris Hamer")
    bank.vector(brother, blend(1, 3, 0.95), encoder)
    firefighter = bank.add("Joris Hamer works as a firefighter in Breda.", subject="Joris Hamer")
    bank.vector(firefighter, away_from(1, blend(0, 4, 0.3)), encoder)  # far from both queries

    alone = bank.recall(SIBLING, encoder=encoder)
    assert {brother, firefighter}.isdisjoint(i.id for i in alone.items)  # deliberate search misses both

    result = planner.assemble(bank.principal, ContextNeed(current_message=SIBLING), filters=FILTERS,
                              max_items=20, max_tokens=2000, now=NOW, encoder=encoder)
    ids = [i.id for i in result.items]
    assert [s.purpose for s in result.searches] == ["message", "reference"]
    assert ids[:18] == jobs[:18] and set(ids[18:]) == {brother, firefighter}  # round one's two lowest give way
    assert result.stopped == "allowance" and result.context.endswith(planner.LIMITATION["allowance"])


def away_from(index: int, vector: list[float], cosine: float = -0.2) -> list[float]:
    """``vector`` turned a little away from ``basis(index)`` (to ``cosine``), still a unit vector."""
    scale = (1.0 - cosine * cosine) ** 0.5
    turned = [x * scale for x in vector]
    turned[index] = cosine
    return turned


def test_round_two_takes_only_each_searchs_own_top_and_at_most_half_the_allowance(settings):
    settings.RECALL_CONTEXT_DELTA_ITEMS = 5
    order = planner.ContextOrder(max_items=20)
    base = [item(f"base {n}") for n in range(20)]
    order.base(base)
    first = [base[0], *(item(f"first {n}") for n in range(10))]
    order.add(first)  # its first five: one already in the context, four new
    assert order.ordered() == [*base[:16], *first[1:5], *base[16:]]
    second = [item(f"second {n}") for n in range(10)]
    order.add(second)
    assert order.has_room() and order.ordered() == [*base[:11], *first[1:5], *second[:5], *base[11:]]
    third = [item(f"third {n}") for n in range(10)]
    order.add(third)  # one more fits: half the allowance is ten
    assert not order.has_room()
    assert order.ordered() == [*base[:10], *first[1:5], *second[:5], third[0], *base[10:]]

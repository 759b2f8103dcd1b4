"""The expansion arm (recall.arms.expansion): siblings of the fused top — same subject or entity,
nearest the query — under exactly the recall's own predicates, fused as a fourth list."""
from __future__ import annotations

import pytest

from memory import vocabulary
from memory.domain import MemoryChanges
from memory.services import memory_revise
from recall.arms import expansion, permitted
from recall.models import RecallTrace
from tests.recall.helpers import NOW, Bank, MappedEncoder, bank, basis, blend, semantic_on  # noqa: F401
from tests.recall.test_retriever_visibility import ENTITY, SCENARIOS, other  # noqa: F401
from veetbot.rls import owner_context

QUERY = "zqx what does my male sibling do for a living"


def _expand(bank: Bank, seeds, encoder, **request):
    """Run the arm directly with the predicate parameters a recall with ``request`` would use."""
    ceiling = request.get("ceiling", "internal")
    as_of = request.get("as_of")
    with owner_context(bank.principal):
        read = permitted.Read(
            params=permitted.base_params(
                tenant_id=bank.principal.tenant_id, principal_id=bank.principal.principal_id,
                at=as_of or NOW, as_of=as_of,
                sensitivities=list(vocabulary.SENSITIVITIES[: vocabulary.SENSITIVITY_RANK[ceiling] + 1]),
                scope=request.get("scope", "user"), exclude_ids=list(request.get("exclude_ids", ())),
                belief_types=list(request.get("belief_types", ())),
            ),
            historical=as_of is not None, limit=permitted.arm_limit(20),
        )
        return expansion.expand(read, seeds, basis(0), encoder.tuple.space)


def _two_hop(bank: Bank, encoder: MappedEncoder):
    """A relation that resembles the question, the answer about the same person that does
    not, and five unrelated beliefs that resemble the question more than the answer."""
    relation = bank.add("Joris Hamer is the owner's brother.", subject="Joris Hamer", belief_type="relationship")
    answer = bank.add("Joris Hamer works as a firefighter in Breda.", subject="Joris Hamer", belief_type="attribute")
    bank.vector(relation, basis(0), encoder)
    bank.vector(answer, blend(0, 7, 0.3), encoder)
    others = []
    for n in range(5):
        other_id = bank.add(f"Unrelated belief number {n}.", subject=f"topic {n}", belief_type="fact")
        bank.vector(other_id, blend(0, 10 + n, 0.8 - n * 0.01), encoder)
        others.append(other_id)
    return relation, answer, others


def test_a_two_hop_answer_reaches_the_top_only_through_the_expansion(bank, semantic_on):
    encoder = MappedEncoder({QUERY: basis(0)})
    relation, answer, _ = _two_hop(bank, encoder)
    hybrid = bank.recall(QUERY, encoder=encoder, max_items=3)
    dense = bank.recall(QUERY, encoder=encoder, max_items=3, channel="dense")
    assert answer in [item.id for item in hybrid.items] and relation in [item.id for item in hybrid.items]
    assert answer not in [item.id for item in dense.items]  # cosine alone ranks it last
    semantic_on.RECALL_EXPANSION_PER_SEED = 0
    without = bank.recall(QUERY, encoder=encoder, max_items=3)
    assert answer not in [item.id for item in without.items]


@pytest.mark.parametrize("bound", ["RECALL_EXPANSION_SEEDS", "RECALL_EXPANSION_PER_SEED"])
def test_either_bound_at_zero_switches_the_arm_off_and_the_trace_says_so(bank, semantic_on, bound):
    encoder = MappedEncoder({QUERY: basis(0)})
    _relation, answer, _ = _two_hop(bank, encoder)
    setattr(semantic_on, bound, 0)
    result = bank.recall(QUERY, encoder=encoder, max_items=3)
    with owner_context(bank.principal):
        assert RecallTrace.objects.get(id=result.trace_id).policy == ["recall@1", "semantic@2", "floor@1"]
    assert answer not in result.stages.ranked_ids[:3]


def test_the_trace_and_candidates_record_the_expansion_in_hybrid_only(bank, semantic_on):
    encoder = MappedEncoder({QUERY: basis(0)})
    _relation, answer, _ = _two_hop(bank, encoder)
    semantic_on.RECALL_ARM_MIN_CANDIDATES = 6  # the semantic arm alone stops before the answer
    semantic_on.RECALL_ARM_ITEMS_FACTOR = 1
    hybrid = bank.recall(QUERY, encoder=encoder, max_items=3)
    assert answer not in hybrid.stages.dense_ids
    assert answer in hybrid.stages.candidate_ids and answer in hybrid.stages.ranked_ids
    dense = bank.recall(QUERY, encoder=encoder, max_items=3, channel="dense")
    with owner_context(bank.principal):
        traces = {t.id: t for t in RecallTrace.objects.filter(id__in=[hybrid.trace_id, dense.trace_id])}
    assert traces[hybrid.trace_id].policy == ["recall@1", "semantic@2", "expansion@2", "floor@1"]
    assert answer in traces[hybrid.trace_id].candidate_ids
    assert traces[dense.trace_id].policy == ["recall@1", "semantic@2", "floor@1"]
    assert answer not in dense.stages.candidate_ids


def test_siblings_follow_seed_order_then_query_cosine_bounded_per_seed(bank, semantic_on):
    encoder = MappedEncoder({QUERY: basis(0)})
    first_seed = bank.add("Seed one.", subject="alpha")
    second_seed = bank.add("Seed two.", subject="beta")
    near_alpha = bank.add("Alpha near.", subject="alpha")
    far_alpha = bank.add("Alpha far.", subject="Alpha")  # the same subject once normalised
    near_beta = bank.add("Beta near.", subject="beta")
    for memory_id, cosine in ((first_seed, 0.1), (second_seed, 0.1), (near_alpha, 0.5), (far_alpha, 0.4),
                              (near_beta, 0.9)):
        bank.vector(memory_id, blend(0, 3, cosine), encoder)
    assert [c.id for c in _expand(bank, [first_seed, second_seed], encoder)] == [near_alpha, near_beta]
    semantic_on.RECALL_EXPANSION_PER_SEED = 2
    assert [c.id for c in _expand(bank, [first_seed, second_seed], encoder)] == [near_alpha, far_alpha, near_beta]
    semantic_on.RECALL_EXPANSION_SEEDS = 1
    assert [c.id for c in _expand(bank, [first_seed, second_seed], encoder)] == [near_alpha, far_alpha]


def test_an_entity_makes_a_sibling_and_seeds_are_never_siblings(bank, semantic_on):
    encoder = MappedEncoder({QUERY: basis(0)})
    seed = bank.add("Kees is the owner's best friend.", subject="Kees", entity_ids=("person:kees",))
    other_seed = bank.add("Kees supports Feyenoord.", subject="football", entity_ids=("person:kees",))
    sibling = bank.add("He lives in Delft.", subject="home town", entity_ids=("person:kees",))
    stranger = bank.add("Unrelated.", subject="weather")
    for memory_id in (seed, other_seed, sibling, stranger):
        bank.vector(memory_id, basis(0), encoder)
    semantic_on.RECALL_EXPANSION_PER_SEED = 5
    assert [c.id for c in _expand(bank, [seed, other_seed], encoder)] == [sibling]


@pytest.mark.parametrize("as_of", [None, NOW])
@pytest.mark.parametrize("kind", ["subject", "entity"])
def test_a_key_held_by_more_originals_than_the_bound_relates_nothing(bank, semantic_on, kind, as_of):
    """Bound 3: a key held by 3 active originals relates them; by 4, it is ignored whole
    (never truncated to some of its members), in current and historical recall alike."""
    encoder = MappedEncoder({QUERY: basis(0)})
    semantic_on.RECALL_EXPANSION_MAX_KEY_ORIGINALS = 3
    semantic_on.RECALL_EXPANSION_PER_SEED = 5
    shared = {"subject": "Kees"} if kind == "subject" else {"entity_ids": ("person:kees",)}

    def member(n: int):
        extra = {} if kind == "subject" else {"subject": f"fact {n}"}
        memory_id = bank.add(f"Kees fact {n}.", **shared, **extra)
        bank.vector(memory_id, blend(0, 5 + n, 0.9 - n * 0.1), encoder)
        return memory_id

    seed, first, second = member(0), member(1), member(2)
    assert [c.id for c in _expand(bank, [seed], encoder, as_of=as_of)] == [first, second]
    member(3)  # now 4 hold the key
    assert _expand(bank, [seed], encoder, as_of=as_of) == []


def test_a_sibling_counts_only_with_a_vector_of_its_current_revision(bank, semantic_on):
    encoder = MappedEncoder({QUERY: basis(0)})
    seed = bank.add("Seed.", subject="alpha")
    current = bank.add("Alpha, never revised.", subject="alpha")
    revised = bank.add("Alpha, first version.", subject="alpha")
    memory_revise(principal=bank.principal, memory_id=revised,
                  changes=MemoryChanges(statement="Alpha, second version."), now=NOW)
    bank.vector(revised, basis(0), encoder, revision=1)  # a vector of the old content
    bank.vector(current, blend(0, 3, 0.2), encoder)
    semantic_on.RECALL_EXPANSION_PER_SEED = 5
    assert [c.id for c in _expand(bank, [seed], encoder)] == [current]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_siblings_obey_every_hard_predicate(bank, other, semantic_on, scenario):
    """Every planted row shares the visible rows' subject and entity and has their vector:
    only permitted ones may come back as siblings, and they do."""
    s = SCENARIOS[scenario](bank, other)
    encoder = MappedEncoder({QUERY: basis(0)})
    for owner, memory_id, revision in s.vectors:
        owner.vector(memory_id, basis(0), encoder, revision=revision)
    semantic_on.RECALL_EXPANSION_PER_SEED = 100
    seed, *rest = s.visible.values()
    found = {c.id for c in _expand(bank, [seed], encoder, **s.request)}
    leaked = sorted(name for name, memory_id in s.forbidden.items() if memory_id in found)
    assert leaked == []
    assert found == set(rest)


def test_forbidden_seeds_expand_to_nothing(bank, other, semantic_on):
    """A seed the request may not see (here: another owner's belief) contributes no siblings."""
    encoder = MappedEncoder({QUERY: basis(0)})
    theirs = other.add("Their belief.", subject="shared subject", entity_ids=(ENTITY,))
    mine = bank.add("My belief.", subject="shared subject", entity_ids=(ENTITY,))
    bank.vector(mine, basis(0), encoder)
    assert _expand(bank, [theirs], encoder) == []

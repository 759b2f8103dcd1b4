"""The SQL of inventory and grouping: who is eligible, the two lane pages, the neighbour call.

Eligibility (``EXCLUSION_REASON``) is one CASE expression: the first failing filter's
content-free reason code, or '' for an eligible original. The same filters, in the same
order, are applied inside ``reconsolidation_neighbours`` (migration 0002) *before* every
bound, so an ineligible row can neither join a group nor displace an eligible neighbour;
``tests/reconsolidation/inventory/test_selection_bounds.py`` holds both to the same rows.

Why a function for neighbours: under forced row-level security the planner may not use a
non-leakproof operator (``tsvector @@ tsquery``, array ``@>``) as an index condition, so
GIN indexes could not serve a lookup and each anchor would scan the owner's whole bank.
The function is SECURITY DEFINER and applies the RLS policies' own owner predicate from
the same transaction-local settings; it takes no owner argument and returns opaque IDs,
revisions and ranks only. Where its owning role is not a superuser the policies still
apply inside it: same rows, slower plan.

Every statement is O(slice): keyset ranges, bounded LIMITs and indexed probes per anchor;
nothing compares all pairs. Values are always bound parameters.
"""
from __future__ import annotations

from memory.evidence import admitted_event
from memory.vocabulary import SHARED_SCOPE

# Owner user.message.created evidence that is neither excluded nor erased. (Sources and
# events are tied to their original's owner by owner-bound foreign keys, and RLS applies.)
OWNER_EVIDENCE = """
    EXISTS (
        SELECT 1 FROM memory_memorysource s
        CROSS JOIN LATERAL (
            SELECT 1 FROM memory_event e
            WHERE e.id = s.event_id AND """ + admitted_event("e") + """
            LIMIT 1
        ) e
        WHERE s.memory_id = {m}.id
    )
"""
# (The lateral LIMIT keeps this a walk from the original's sources to their events: with
# the policies' owner predicates the planner would otherwise start from all the owner's
# events whenever statistics are missing.)

EXCLUSION_REASON = f"""
    CASE
        WHEN m.erased_at IS NOT NULL THEN 'erased'
        WHEN m.status <> 'active' THEN 'not_active'
        WHEN m.expires_at IS NOT NULL AND m.expires_at <= %(now)s THEN 'expired'
        WHEN m.derivation = 'inferred' THEN 'not_direct'
        WHEN NOT (m.sensitivity = ANY(%(sensitivities)s::text[])) THEN 'above_sensitivity'
        WHEN m.scope = '{SHARED_SCOPE}' AND NOT m.portable THEN 'not_portable'
        WHEN NOT {OWNER_EVIDENCE.format(m="m")} THEN 'no_owner_evidence'
        ELSE ''
    END
"""

OWNER = "tenant_id = %(tenant_id)s AND principal_id = %(principal_id)s"

# Full lane: the next rows after the cursor in (creation_sequence, id) order, never past
# the generation's high watermark. limit + 1 rows tell whether the lane is exhausted.
FULL_PAGE = f"""
    SELECT m.id, m.creation_sequence, m.content_revision, {EXCLUSION_REASON} AS reason
    FROM (
        SELECT * FROM memory_memory
        WHERE {OWNER} AND creation_sequence > %(after)s AND creation_sequence <= %(through)s
        ORDER BY creation_sequence, id
        LIMIT %(limit)s
    ) m
    ORDER BY m.creation_sequence, m.id
"""
# (The LIMIT is inside so the planner costs the evidence subquery per page row, not as a
# hash over the owner's whole bank.)

# Changed lane: the next change-journal entries after the cursor, each with its original's
# current keys and eligibility ('gone' when no row is visible any more).
CHANGED_PAGE = f"""
    SELECT j.seq, j.memory_id, m.creation_sequence, m.content_revision,
           CASE WHEN m.id IS NULL THEN 'gone' ELSE {EXCLUSION_REASON} END AS reason
    FROM (
        SELECT seq, memory_id FROM memory_changejournal
        WHERE {OWNER} AND seq > %(after)s AND seq <= %(through)s
        ORDER BY seq LIMIT %(limit)s
    ) j
    LEFT JOIN LATERAL (
        SELECT * FROM memory_memory WHERE id = j.memory_id AND {OWNER} LIMIT 1
    ) m ON true
    ORDER BY j.seq
"""

# The current keys and eligibility of given originals (at most one group's worth each).
INPUTS = f"""
    SELECT m.id, m.content_revision, m.scope, {EXCLUSION_REASON} AS reason
    FROM unnest(%(ids)s::uuid[]) AS wanted(id)
    CROSS JOIN LATERAL (
        SELECT * FROM memory_memory WHERE id = wanted.id AND {OWNER} LIMIT 1
    ) m
"""

# (LIMIT inside each lateral keeps the planner on one primary-key probe per row, with the
# evidence subquery per row, even on tables without statistics.)

# How many full-lane rows remain (capped): the reservation a checkpoint must honour.
FULL_REMAINING = f"""
    SELECT count(*) FROM (
        SELECT 1 FROM memory_memory
        WHERE {OWNER} AND creation_sequence > %(after)s AND creation_sequence <= %(through)s
        LIMIT %(limit)s
    ) r
"""

FULL_RANGE_COUNT = f"""
    SELECT count(*) FROM memory_memory
    WHERE {OWNER} AND creation_sequence > %(after)s AND creation_sequence <= %(through)s
"""

CHANGED_RANGE_COUNT = f"""
    SELECT count(*) FROM memory_changejournal
    WHERE {OWNER} AND seq > %(after)s AND seq <= %(through)s
"""

# The owner's model work still waiting (pending or leased groups) and the failed attempts
# on it: read at every checkpoint, so through the pending index and bounded by the pending
# cap, never by the owner's history. A failed attempt leaves its group waiting with one
# more retry, or ends it: either way one of the two numbers moves (driver.made_progress).
WAITING_GROUPS = """
    SELECT count(*), coalesce(sum(retry_count), 0) FROM reconsolidation_reconsolidationgroup
    WHERE policy = %(policy)s AND state IN ('pending', 'leased')
"""

# Model coverage: processed and failed groups of this job. Exact-key groups of the
# equivalence pass never wait for a model and are not model work.
JOB_GROUP_OUTCOMES = """
    SELECT count(*) FILTER (WHERE state IN ('completed', 'no_change')),
           count(*) FILTER (WHERE state = 'failed')
    FROM reconsolidation_reconsolidationgroup WHERE job_id = %(job_id)s AND origin = 'neighbours'
"""

# Model reach of one job: the model-lane groups it formed, and those whose evidence was
# actually sent — named by a proposal call whose transport says the request went out
# (completed, or sent and then timed out or interrupted). A deferred, refused or cancelled
# call sent nothing, so its groups did not reach the model.
#
# Every slice reports it once, so its cost must not grow with the owner's history: only
# spends of the job's days are read (a job's calls are reserved on or after its due day,
# through the owner/day index), and the sent IDs are collected once and matched against the
# job's groups in a hash join. Left to the planner, the join of every spend's expanded
# ``group_ids`` with the groups flipped to a plan that took 150 ms after 300 slices.
MODEL_REACH = """
    WITH job_groups AS MATERIALIZED (
        SELECT id FROM reconsolidation_reconsolidationgroup
        WHERE job_id = %(job_id)s AND origin = 'neighbours'
    ), sent AS MATERIALIZED (
        SELECT DISTINCT sent.group_id::uuid AS group_id
        FROM reconsolidation_reconsolidationspend s
        CROSS JOIN LATERAL jsonb_array_elements_text(s.call_audit -> 'group_ids') AS sent(group_id)
        WHERE s.day >= (SELECT due_day FROM reconsolidation_reconsolidationjob WHERE id = %(job_id)s)
          AND s.call_audit ->> 'stage' = 'proposal'
          AND s.call_audit -> 'completion' ->> 'transport_outcome' IN ('completed', 'timeout', 'interrupted')
    )
    SELECT (SELECT count(*) FROM job_groups),
           (SELECT count(*) FROM job_groups g JOIN sent ON sent.group_id = g.id)
"""

# Model coverage of one job: anchors that have related originals (an anchor receipt of this
# job that names a group or waits for one) and those whose group the model processed. A
# duplicate whose receipt names no group (its set is another anchor's group) counts in
# neither: it is that anchor's.
MODEL_COVERAGE = """
    SELECT count(*) FILTER (WHERE r.outcome IN ('grouped', 'queued', 'not_selected')
                               OR (r.outcome = 'duplicate' AND r.group_id IS NOT NULL)),
           count(*) FILTER (WHERE r.outcome IN ('grouped', 'duplicate') AND g.state IN ('completed', 'no_change'))
    FROM reconsolidation_reconsolidationanchorreceipt r
    LEFT JOIN reconsolidation_reconsolidationgroup g ON g.id = r.group_id
    WHERE r.job_id = %(job_id)s AND r.policy = %(policy)s
"""

# --- The equivalence pass -------------------------------------------------------------
# ``recon_equivalence_digest`` is a generated column of memory_memory (migration 0006);
# these lookups use its partial index (owner, digest, creation order) with a plain
# equality, which forced RLS admits as an index condition.
LIVE = "erased_at IS NULL AND status = 'active'"

# The digests of the given anchors that at least one other eligible original shares.
SHARED_DIGESTS = f"""
    SELECT DISTINCT a.recon_equivalence_digest
    FROM memory_memory a
    WHERE a.tenant_id = %(tenant_id)s AND a.principal_id = %(principal_id)s AND a.id = ANY(%(ids)s::uuid[])
      AND a.erased_at IS NULL AND a.status = 'active'
      AND EXISTS (
          SELECT 1 FROM (
              SELECT * FROM memory_memory
              WHERE {OWNER} AND {LIVE} AND recon_equivalence_digest = a.recon_equivalence_digest AND id <> a.id
          ) m
          WHERE {EXCLUSION_REASON} = ''
      )
"""

# The eligible members of each digest (oldest creation key first, at most %(members)s).
SET_MEMBERS = f"""
    SELECT d.digest, s.id, s.content_revision
    FROM unnest(%(digests)s::text[]) AS d(digest)
    CROSS JOIN LATERAL (
        SELECT m.id, m.content_revision FROM (
            SELECT * FROM memory_memory
            WHERE {OWNER} AND {LIVE} AND recon_equivalence_digest = d.digest
            ORDER BY creation_sequence, id
        ) m
        WHERE {EXCLUSION_REASON} = ''
        ORDER BY m.creation_sequence, m.id
        LIMIT %(members)s
    ) s
"""

# The oldest carried-over sets of the owner (content-free digests only).
BACKLOG_PAGE = """
    SELECT key_digest FROM reconsolidation_reconsolidationequivalencebacklog
    ORDER BY queued_at, key_digest LIMIT %(limit)s
"""

# --- The model lane -----------------------------------------------------------------
# Receipts of anchors the model lane decided: the outcome and group, and the generation
# whose model lane decided it. The scan's own columns (lane, full_generation) are left as
# they are; a first receipt counts as a full-lane one not yet visited by the scan.
MODEL_RECEIPTS_UPSERT = """
    INSERT INTO reconsolidation_reconsolidationanchorreceipt AS r
        (id, tenant_id, principal_id, job_id, policy, memory_id, content_revision, lane, generation,
         full_generation, model_generation, outcome, reason, group_id, recorded_at)
    SELECT gen_random_uuid(), %(tenant_id)s, %(principal_id)s, %(job_id)s, %(policy)s, u.memory_id,
           u.content_revision, 'full', %(generation)s, 0, %(generation)s, u.outcome, u.reason, u.group_id, %(now)s
    FROM unnest(%(memory_ids)s::uuid[], %(revisions)s::int[], %(outcomes)s::text[], %(reasons)s::text[],
                %(group_ids)s::uuid[])
         AS u(memory_id, content_revision, outcome, reason, group_id)
    ON CONFLICT (tenant_id, principal_id, policy, memory_id) DO UPDATE SET
        job_id = EXCLUDED.job_id, content_revision = EXCLUDED.content_revision, generation = EXCLUDED.generation,
        model_generation = EXCLUDED.model_generation, outcome = EXCLUDED.outcome, reason = EXCLUDED.reason,
        group_id = EXCLUDED.group_id, recorded_at = EXCLUDED.recorded_at
"""

NEIGHBOURS = """
    SELECT anchor_id, memory_id, match_rank, overlap, creation_sequence, content_revision
    FROM reconsolidation_neighbours(
        %(anchors)s::uuid[], %(now)s, %(sensitivities)s::text[], %(start_key)s,
        %(neighbours)s, %(channel_rows)s, %(max_lexemes)s, %(min_overlap)s
    )
"""

# The owner allocators, read under the owner lock: the generation's high watermark is the
# last creation_sequence handed out, so a late commit cannot slip behind a saved cursor.
ALLOCATORS = f"""
    SELECT next_creation_sequence - 1, next_journal_seq - 1 FROM memory_ownerlock WHERE {OWNER}
"""

# A scan visit that finds an anchor ``queued`` after this generation's model lane already
# decided it (at this revision) keeps the model lane's outcome.
_KEPT = ("EXCLUDED.outcome = 'queued' AND r.model_generation = EXCLUDED.generation"
         " AND r.content_revision = EXCLUDED.content_revision")

# Upsert one receipt per anchor in one statement (one row per original, kept bounded).
RECEIPTS_UPSERT = """
    INSERT INTO reconsolidation_reconsolidationanchorreceipt AS r
        (id, tenant_id, principal_id, job_id, policy, memory_id, content_revision, lane, generation,
         full_generation, outcome, reason, group_id, recorded_at)
    SELECT gen_random_uuid(), %(tenant_id)s, %(principal_id)s, %(job_id)s, %(policy)s, u.memory_id,
           u.content_revision, u.lane, %(generation)s,
           CASE WHEN u.lane = 'full' THEN %(generation)s ELSE 0 END,
           u.outcome, u.reason, u.group_id, %(now)s
    FROM unnest(%(memory_ids)s::uuid[], %(revisions)s::int[], %(lanes)s::text[], %(outcomes)s::text[],
                %(reasons)s::text[], %(group_ids)s::uuid[])
         AS u(memory_id, content_revision, lane, outcome, reason, group_id)
    ON CONFLICT (tenant_id, principal_id, policy, memory_id) DO UPDATE SET
        job_id = EXCLUDED.job_id, content_revision = EXCLUDED.content_revision, lane = EXCLUDED.lane,
        generation = EXCLUDED.generation,
        full_generation = CASE WHEN EXCLUDED.lane = 'full' THEN EXCLUDED.generation ELSE r.full_generation END,
        outcome = CASE WHEN {kept} THEN r.outcome ELSE EXCLUDED.outcome END,
        reason = CASE WHEN {kept} THEN r.reason ELSE EXCLUDED.reason END,
        group_id = CASE WHEN {kept} THEN r.group_id ELSE EXCLUDED.group_id END,
        recorded_at = EXCLUDED.recorded_at
""".format(kept=_KEPT)

# --- The semantic neighbour arm ---------------------------------------------------------
# Each anchor's nearest eligible originals by their own vectors (the anchor's current vector
# in the configured space against the owner's vectors of the same space, each only for the
# content revision it was computed from), under the same hard predicates as the lexical
# arm (EXCLUSION_REASON, equal scope) and the same neighbour bound. Exact distances over the
# owner's vectors (forced RLS applies: the runtime role sees only this owner's rows); the
# probe by ID keeps the LIMIT counting eligible originals only. With no vector for an
# anchor (semantic off, not yet backfilled) the arm returns nothing for it.
def semantic_neighbours_sql(*, exact: bool) -> str:
    """Each anchor's nearest eligible originals of equal scope by stored vector, at most
    ``neighbours``, within ``max_distance``.

    Exact (an owner with few vectors): every owner vector's distance to the anchor, computed
    in a subquery the planner may not flatten — a full scan per anchor, cheaper than the
    index while the bank is small. Indexed (above ``RECALL_EXACT_SEARCH_MAX_VECTORS``): the
    owner's vectors ordered by the bare distance, so the HNSW index serves it with iterative
    scans (``recall.vectors.hnsw_session_settings``), the eligibility probe applied during the
    scan and the LIMIT ending it once ``neighbours`` eligible rows are found (or the scan's
    tuple bound is reached): no statement grows with the bank beyond the index probe. The
    indexed form returns the nearest ``neighbours`` before the distance bound, so the caller
    can tell a short probe (``grouping.semantic_neighbours`` then searches that anchor
    exactly) and applies the bound itself: the same set, since both order by distance."""
    eligible = f"""m.scope = a.scope AND {EXCLUSION_REASON} = ''"""
    vectors = """SELECT v.memory_id, v.content_revision, (v.embedding <=> av.embedding) AS distance
            FROM recall_memoryvector v
            WHERE v.tenant_id = %(tenant_id)s AND v.principal_id = %(principal_id)s AND v.space = %(space)s
              AND v.memory_id <> a.id"""
    row = f"""CROSS JOIN LATERAL (
            SELECT * FROM memory_memory
            WHERE id = d.memory_id AND {OWNER} AND content_revision = d.content_revision LIMIT 1
        ) m"""
    if exact:
        nearest = f"""
        SELECT m.id, m.creation_sequence, m.content_revision, d.distance
        FROM ({vectors}
            OFFSET 0
        ) d
        {row}
        WHERE d.distance <= %(max_distance)s AND {eligible}
        ORDER BY d.distance, m.creation_sequence, m.id
        LIMIT %(neighbours)s"""
    else:
        # The eligibility probe is a scalar subquery, not EXISTS: the planner flattens an
        # EXISTS into a semi-join driven by a scan of the owner's originals and then sorts
        # every distance (measured at 5,000 memories: no HNSW in the plan, 4x slower than the
        # exact scan); a scalar subquery stays a per-row filter of the index scan.
        nearest = f"""
        SELECT m.id, m.creation_sequence, m.content_revision, d.distance
        FROM ({vectors}
              AND (SELECT true FROM memory_memory m
                   WHERE m.id = v.memory_id AND m.{OWNER.replace(" AND ", " AND m.")}
                     AND m.content_revision = v.content_revision AND {eligible}
                   LIMIT 1)
            ORDER BY v.embedding <=> av.embedding
            LIMIT %(neighbours)s
        ) d
        {row}"""
    return f"""
    SELECT a.id, n.id, n.creation_sequence, n.content_revision, n.distance
    FROM memory_memory a
    JOIN recall_memoryvector av
      ON av.memory_id = a.id AND av.space = %(space)s AND av.content_revision = a.content_revision
     AND av.tenant_id = %(tenant_id)s AND av.principal_id = %(principal_id)s
    CROSS JOIN LATERAL ({nearest}
    ) n
    WHERE a.tenant_id = %(tenant_id)s AND a.principal_id = %(principal_id)s AND a.id = ANY(%(anchors)s::uuid[])
    ORDER BY a.id, n.distance, n.creation_sequence, n.id
"""


# Migration 0013 indexes the local scopes' originals (every scope but SHARED_SCOPE) apart, so
# a local scope is read without the shared one.
# Which anchors of a batch are in a local scope of at most %(small)s originals (counted
# through the local-scope index, never past one more than that).
SMALL_LOCAL_SCOPE_ANCHORS = f"""
    SELECT a.id FROM memory_memory a
    WHERE a.{OWNER.replace(" AND ", " AND a.")} AND a.id = ANY(%(anchors)s::uuid[]) AND a.scope <> '{SHARED_SCOPE}'
      AND (SELECT count(*) FROM (
               SELECT 1 FROM memory_memory x
               WHERE x.{OWNER.replace(" AND ", " AND x.")} AND x.scope = a.scope AND x.scope <> '{SHARED_SCOPE}'
               LIMIT %(small)s + 1) c) <= %(small)s
"""

# The semantic arm for an anchor of a small local scope: only originals of equal scope can
# be its neighbours, so every one of them is compared, exactly — the same rows and order as
# ``semantic_neighbours_sql(exact=True)``, read from the scope's originals (through the
# local-scope index) rather than from every vector of the owner.
SEMANTIC_NEIGHBOURS_IN_SCOPE = f"""
    SELECT a.id, n.id, n.creation_sequence, n.content_revision, n.distance
    FROM memory_memory a
    JOIN recall_memoryvector av
      ON av.memory_id = a.id AND av.space = %(space)s AND av.content_revision = a.content_revision
     AND av.tenant_id = %(tenant_id)s AND av.principal_id = %(principal_id)s
    CROSS JOIN LATERAL (
        SELECT m.id, m.creation_sequence, m.content_revision, d.distance
        FROM memory_memory m
        JOIN recall_memoryvector v
          ON v.memory_id = m.id AND v.space = %(space)s AND v.content_revision = m.content_revision
         AND v.tenant_id = %(tenant_id)s AND v.principal_id = %(principal_id)s
        CROSS JOIN LATERAL (SELECT v.embedding <=> av.embedding AS distance) d
        WHERE m.{OWNER.replace(" AND ", " AND m.")} AND m.scope = a.scope AND m.scope <> '{SHARED_SCOPE}'
          AND m.id <> a.id AND d.distance <= %(max_distance)s AND {EXCLUSION_REASON} = ''
        ORDER BY d.distance, m.creation_sequence, m.id
        LIMIT %(neighbours)s
    ) n
    WHERE a.tenant_id = %(tenant_id)s AND a.principal_id = %(principal_id)s AND a.id = ANY(%(anchors)s::uuid[])
    ORDER BY a.id, n.distance, n.creation_sequence, n.id
"""

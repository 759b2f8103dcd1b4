"""Settings, read from the environment in one place. Each value has a documented default.

Feature flags are booleans ("true" enables) and default off in production; the quick
start turns on what the demo needs and says so.
"""
from __future__ import annotations

import os
import secrets
from decimal import Decimal
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from veetbot.database import data_dir, database_settings

BASE_DIR = Path(__file__).resolve().parent.parent


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def _secret_key() -> str:
    """VEETBOT_SECRET_KEY, else a random key kept in the git-ignored data directory."""
    if key := os.environ.get("VEETBOT_SECRET_KEY"):
        return key
    path = data_dir(BASE_DIR) / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_flag("VEETBOT_DEBUG")
ALLOWED_HOSTS = os.environ.get("VEETBOT_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
# The review dashboard's forms: the CSRF cookie never travels cross-site nor to scripts.
CSRF_COOKIE_SAMESITE = "Strict"
CSRF_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Strict"

INSTALLED_APPS = [
    "veetbot",  # first, so its `migrate` (which runs as the owner role) wins
    "veetbot.admin_apps.StaffAdminConfig",  # django.contrib.admin with the content-free staff site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "memory",
    "recall",
    "reconsolidation",
    "review_ui",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "veetbot.urls"
WSGI_APPLICATION = "veetbot.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = database_settings(BASE_DIR)
DATABASE_ROUTERS = ["veetbot.db_router.RuntimeRoleRouter"]
# The role the application connects as: LOGIN, no superuser, no BYPASSRLS, owns nothing.
VEETBOT_RUNTIME_ROLE = DATABASES["default"]["USER"]
VEETBOT_RUNTIME_PASSWORD = DATABASES["default"]["PASSWORD"]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"

# --- Feature flags -----------------------------------------------------------------
AGENT_MEMORY_API_ENABLED = env_flag("AGENT_MEMORY_API_ENABLED")
AGENT_MEMORY_RECONSOLIDATION_API_ENABLED = env_flag("AGENT_MEMORY_RECONSOLIDATION_API_ENABLED")
AGENT_MEMORY_RECONSOLIDATION_ENABLED = env_flag("AGENT_MEMORY_RECONSOLIDATION_ENABLED")
AGENT_MEMORY_RECONSOLIDATION_MODE = os.environ.get("AGENT_MEMORY_RECONSOLIDATION_MODE", "reviewed")
# unattended only: path of a passing eval_reconsolidation report for the running provider (reconsolidation.mode)
AGENT_MEMORY_RECONSOLIDATION_EVIDENCE = os.environ.get("AGENT_MEMORY_RECONSOLIDATION_EVIDENCE", "")
AGENT_MEMORY_SEMANTIC_ENABLED = env_flag("AGENT_MEMORY_SEMANTIC_ENABLED")
# POST /v1/mcp: the owner API's context, search, remember, forget and journal as MCP tools
# (veetbot.mcp_server). Needs AGENT_MEMORY_API_ENABLED too; otherwise not_found.
AGENT_MEMORY_MCP_ENABLED = env_flag("AGENT_MEMORY_MCP_ENABLED")

# --- Bounds of the originals API and sweeps (names carry their unit) ------------------
MEMORY_PAGE_DEFAULT_ITEMS = 50
MEMORY_PAGE_MAX_ITEMS = 100
IDEMPOTENCY_KEY_MAX_CHARS = 128
MEMORY_STATEMENT_MAX_CHARS = 4000
MEMORY_SUBJECT_MAX_CHARS = 200
EVENT_PART_MAX_CHARS = 20000
EVENT_MAX_PARTS = 32
# Daily decay: unused non-USER memories lose utility; below the floor they retire.
MEMORY_DECAY_UNUSED_DAYS = env_int("MEMORY_DECAY_UNUSED_DAYS", 30)
MEMORY_DECAY_FACTOR = float(os.environ.get("MEMORY_DECAY_FACTOR", "0.9"))
MEMORY_DECAY_FLOOR = float(os.environ.get("MEMORY_DECAY_FLOOR", "0.2"))
# Rows per write batch of an import (and per ID list it looks up); every batch stages its rows
# in temporary tables (veetbot.bulk), so fewer, larger batches spend less on catalog work.
IMPORT_BATCH_ROWS = 10000
# Inserts of at least this many rows go through a staging table and COPY (veetbot.bulk);
# fewer rows cost less in one INSERT ... VALUES than the staging table's catalog work.
BULK_INSERT_COPY_MIN_ROWS = 200
# An import of more than one batch analyses its tables after the first (veetbot.statistics);
# it waits this long for another transaction's ANALYZE lock, then goes on without.
IMPORT_ANALYZE_LOCK_MS = 1000

# --- Recall ---------------------------------------------------------------------------
RECALL_MAX_ITEMS = 20  # default item budget of one recall
RECALL_MAX_TOKENS = 2000  # default token budget (deterministic estimate)
RECALL_ARM_MIN_CANDIDATES = 64  # each arm keeps max(max_items * 8, this)
RECALL_ARM_ITEMS_FACTOR = 8
RECALL_RRF_K = int(os.environ.get("RECALL_RRF_K", 60))
# Per-arm weights of reciprocal-rank fusion (an arm not named weighs 1; all 1 = plain RRF)
# and the arms whose equal signals share one rank (recall.ranking.fusion). Tuned on the diagnostic's
# development split and LoCoMo conversations 0-4 (evals/recall/README.md).
RECALL_RRF_WEIGHTS = {"lexical": 1.0, "structured": 1.0, "semantic": 2.0, "expansion": 2.0}
RECALL_RRF_SHARED_TIE_ARMS = ("lexical", "structured")
# Hybrid only: a lexical candidate votes in fusion when it covers at least this fraction of
# the query's distinct lexemes (and at least one); sparse recall keeps every lexical vote.
RECALL_HYBRID_LEXICAL_MIN_COVERAGE = 0.5
# Hybrid and dense (recall.ranking.floor): a ranked original is rendered only when its cosine
# similarity to the query is at least (the query's nearest original's similarity − this),
# or (hybrid) it has a lexical vote, an exact structured match or came from the expansion
# arm; 0 switches the floor off. Calibrated on the diagnostic's development split and LoCoMo
# conversations 0-4 (evals/reports/recall-floor-calibration.json).
RECALL_RELEVANCE_SIMILARITY_MARGIN = float(os.environ.get("RECALL_RELEVANCE_SIMILARITY_MARGIN", 0.25))
# Hybrid only (recall.arms.expansion): siblings (same subject or entity) of this many top fused
# candidates, this many per seed, nearest the query first. Either at 0 switches the arm off
# (indexed lookups of the seeds' keys, one probe per sibling).
RECALL_EXPANSION_SEEDS = 5
RECALL_EXPANSION_PER_SEED = 1
# A subject or entity held by more of the owner's active originals than this relates nothing
# (and would cost a vector comparison per holder).
RECALL_EXPANSION_MAX_KEY_ORIGINALS = 512
RECALL_ENCODER = os.environ.get("RECALL_ENCODER", "minilm")  # minilm | openai
RECALL_OPENAI_BASE_URL = os.environ.get("RECALL_OPENAI_BASE_URL", "https://api.openai.com/v1")
RECALL_OPENAI_MODEL = os.environ.get("RECALL_OPENAI_MODEL", "text-embedding-3-small")
RECALL_ENCODER_BATCH_ITEMS = 64
RECALL_ENCODER_TIMEOUT_SECONDS = 30.0
# A remote encoder (recall.egress): its host must be pinned here, and what one owner's text
# may cost it per UTC day (price per million tokens of text-embedding-3-small).
RECALL_ENCODER_RESIDENCY_PIN = os.environ.get("RECALL_ENCODER_RESIDENCY_PIN", "")
RECALL_REMOTE_ENCODER_DAILY_USD = float(os.environ.get("RECALL_REMOTE_ENCODER_DAILY_USD", 2.0))
RECALL_REMOTE_ENCODER_USD_PER_MILLION_TOKENS = float(os.environ.get("RECALL_REMOTE_ENCODER_USD_PER_MILLION_TOKENS", 0.02))
RECALL_QUERY_CACHE_ENTRIES = 128
RECALL_QUERY_CACHE_SECONDS = 300
RECALL_BACKFILL_BATCH_ITEMS = 64
# Beat backfill (only when a broker is configured and semantic recall is on):
RECALL_BACKFILL_INTERVAL_SECONDS = float(os.environ.get("RECALL_BACKFILL_INTERVAL_SECONDS", 600))
RECALL_BACKFILL_MAX_ITEMS_PER_OWNER = env_int("RECALL_BACKFILL_MAX_ITEMS_PER_OWNER", 2000)
# HNSW candidate list per scan step for recall's queries: 1,000, pgvector's largest. A question
# lies away from the statements that answer it, where the graph navigates poorly: over 100,000
# noise memories rendered recall through the index was 46.7 / 53.8 / 64.9 % at 200 / 400 /
# 1,000 against 75.3 % exact (evals/README.md, 2026-12-06), although statements used as queries
# find 98.5 % of their exact neighbours at 200. (Top-20 agreement with queries drawn from the
# bank's own words, the earlier basis for 200, hid this.)
RECALL_HNSW_EF_SEARCH = env_int("RECALL_HNSW_EF_SEARCH", 1000)
# How many permitted vectors one index search walks (the iterative scan's further steps past
# the first ef_search list) before keeping the arm's limit nearest. Over 100,000 memories,
# with the index built at m 48 / ef_construction 400 (recall migration 0012), the diagnostic's
# questions found 96-97 % of their 160 exact neighbours at depth 160 and all of them at 2,000
# (an index probe, evals/README.md, 2026-12-06); the diagnostic's rendered recall through the
# index rose from 64.2 to 74.6 % against 75.3 % exact. That depth costs about an exact scan at
# 100,000 (dense p95 100 against 108 ms): the index pays off above that size. It may not
# exceed RECALL_HNSW_MAX_SCAN_TUPLES, where the iterative scan stops.
RECALL_HNSW_SEARCH_DEPTH = env_int("RECALL_HNSW_SEARCH_DEPTH", 2000)
RECALL_HNSW_MAX_SCAN_TUPLES = 20000
# pgvector refuses an ef_search outside 1-1,000 at the first search, and its iterative scan
# silently stops at max_scan_tuples, which would cut a deeper search short: refuse both at start.
if not 1 <= RECALL_HNSW_EF_SEARCH <= 1000:
    raise ImproperlyConfigured(f"RECALL_HNSW_EF_SEARCH={RECALL_HNSW_EF_SEARCH}: pgvector accepts 1 to 1000")
if not 1 <= RECALL_HNSW_SEARCH_DEPTH <= RECALL_HNSW_MAX_SCAN_TUPLES:
    raise ImproperlyConfigured(f"RECALL_HNSW_SEARCH_DEPTH={RECALL_HNSW_SEARCH_DEPTH}: 1 to "
                               f"RECALL_HNSW_MAX_SCAN_TUPLES ({RECALL_HNSW_MAX_SCAN_TUPLES}), where the scan stops")
# Below this many vectors for an owner, exact search is used (set by measurement).
RECALL_EXACT_SEARCH_MAX_VECTORS = int(os.environ.get("RECALL_EXACT_SEARCH_MAX_VECTORS", 20000))
RECALL_VECTOR_COUNT_CACHE_SECONDS = 60  # an owner's vector count (search-mode choice) is reused this long
# Automatic context assembly (POST /v1/memories/context, recall.context): at most this many
# searches in at most this many rounds under one deadline, sharing one item/token allowance
# (the search defaults above); the task-context query keeps whole fragments within the bytes.
# RECALL_CONTEXT_TASK_QUERY: ADR-0193's task-context query (the message plus working-state
# fragments) instead of the baseline message alone in round one. Default off, as the spec
# has it and as measured: on the diagnostic's development split it rendered 2.7 points less
# evidence overall (88.0 against 90.7) for 4.5 more on multi-fact needs.
RECALL_CONTEXT_MAX_SEARCHES = 4
RECALL_CONTEXT_MAX_ROUNDS = 2
RECALL_CONTEXT_DEADLINE_SECONDS = float(os.environ.get("RECALL_CONTEXT_DEADLINE_SECONDS", 1.0))
RECALL_CONTEXT_QUERY_MAX_BYTES = 512
RECALL_CONTEXT_TASK_QUERY = env_flag("RECALL_CONTEXT_TASK_QUERY")
# Round two's new finds per reference or entity search that take the place of round one's
# lowest-ranked items (round two together: at most half the item allowance). Chosen on the
# diagnostic's development split (recall/context/planner.py).
RECALL_CONTEXT_DELTA_ITEMS = 5
# Correction notices a context carries beyond the shared allowance (recall/context/corrections.py).
RECALL_CONTEXT_MAX_CORRECTION_NOTICES = 4

# --- Conversation snapshots and citations (recall/snapshots/) -----------------------------
# A conversation's first turn freezes its context assembly as the prefix every later turn
# repeats byte for byte; the prefix is the context allowance's rendered records, so it is at
# most RECALL_MAX_ITEMS items and RECALL_MAX_TOKENS tokens (the allowance of any one turn).
# Turns per conversation: each turn keeps the content-free references of what it delivered,
# which later turns revalidate (corrections), so the bound keeps that work bounded.
RECALL_SNAPSHOT_MAX_TURNS = env_int("RECALL_SNAPSHOT_MAX_TURNS", 200)
# Citations one report of the assistant may carry (a report past it is a validation_error).
RECALL_CITATIONS_MAX_PER_REPORT = 32
# A short citation (a prefix of the hyphenated UUID) must be at least this many characters.
RECALL_CITATION_SHORT_ID_MIN_CHARS = 8
# What one faithful, unambiguous citation adds to the cited item's utility (bounded at 1.0).
RECALL_CITATION_UTILITY_GAIN = 0.1

# --- Source excerpts (recall/excerpts.py; ADR-0189 optional source recovery) --------------
# Off by default. On, a rendered original may carry whole text parts of the owner's own
# messages it was formed from (owner user.message.created, not excluded or erased, text
# unchanged since recorded, from a session of the recall's own scope, the original not
# corrected since formed), for a reader cleared for restricted content, never for a
# historical (as_of) recall or a conversation's frozen prefix. Excerpts take only what the
# items left of the token allowance and never an item slot. A part longer than the per-excerpt
# bound is withheld, never cut (no misleading truncated quote).
RECALL_SOURCE_EXCERPTS_ENABLED = env_flag("RECALL_SOURCE_EXCERPTS_ENABLED")
RECALL_SOURCE_EXCERPT_MAX_CHARS = env_int("RECALL_SOURCE_EXCERPT_MAX_CHARS", 600)  # one part, whole
RECALL_SOURCE_EXCERPTS_MAX_PER_ITEM = env_int("RECALL_SOURCE_EXCERPTS_MAX_PER_ITEM", 2)
RECALL_SOURCE_EXCERPTS_MAX_PER_RECALL = env_int("RECALL_SOURCE_EXCERPTS_MAX_PER_RECALL", 20)
RECALL_SOURCE_EXCERPTS_MAX_CHARS_PER_RECALL = env_int("RECALL_SOURCE_EXCERPTS_MAX_CHARS_PER_RECALL", 4000)

# --- Reconsolidation@1 bounds (read by reconsolidation/bounds.py; names carry their unit) --
RECON_DUE_TIME_UTC = os.environ.get("RECON_DUE_TIME_UTC", "03:00")  # daily due time per owner
RECON_LEASE_SECONDS = 180
RECON_RENEW_SECONDS = 30
RECON_SLICE_DEADLINE_SECONDS = 120
RECON_MAX_GROUP_ATTEMPTS = 3
RECON_SLICE_MAX_ANCHORS = 128
RECON_SLICE_FULL_LANE_ANCHORS = 64  # reserved for the fair full scan
RECON_SLICE_MAX_GROUPS = 4
RECON_GROUP_MAX_MEMBERS = 32  # anchor + 31 neighbours
RECON_PENDING_MAX_GROUPS = 256
RECON_SLICE_MAX_OPERATIONS = 8
RECON_SENSITIVITY_CEILING = "internal"
RECON_NEIGHBOUR_CHANNEL_ROWS = 64
RECON_NEIGHBOUR_MAX_LEXEMES = 24
# Anchors in a slice's first neighbour statement; each next one doubles (grouping.decide). Most
# lookups find their groups among the first few anchors, and every anchor looked up past the
# last group found is probed for nothing: at 100,000 memories a slice's median fell from 981
# to 777 ms at 4 and 688 ms at 2 (evals/README.md).
RECON_NEIGHBOUR_BATCH_ANCHORS = 2
RECON_NEIGHBOUR_MIN_OVERLAP_LEXEMES = 2
# The semantic neighbour arm: largest cosine distance (1 - cosine) of a semantic neighbour.
RECON_SEMANTIC_NEIGHBOUR_MAX_DISTANCE = 0.35
# Its HNSW candidate list: an anchor's neighbours are statements found from a statement, which
# the graph finds at 200 (98.5 % of 160 exact neighbours on a 100,000-vector index); recall's
# 1,000 would double the cost of a slice's 128 probes for nothing.
RECON_SEMANTIC_HNSW_EF_SEARCH = 200
RECON_MONEY_QUANTUM_USD = Decimal("0.00000001")
RECON_SLICE_BUDGET_USD = Decimal(os.environ.get("RECON_SLICE_BUDGET_USD", "0.25"))
RECON_DAILY_BUDGET_USD = Decimal(os.environ.get("RECON_DAILY_BUDGET_USD", "2.00"))
RECON_RULES_CALL_USD = RECON_MONEY_QUANTUM_USD  # the free rules provider still reserves
RECON_SUMMARY_MAX_CHARS = 1024  # rendered extractive summary: heading + bullets + clauses
RECON_SUMMARY_MAX_CLAUSES = 4
# A summary is proposed only where it tells recall more than one search already renders (a hit
# and its one expansion sibling: so at least three clauses) gathered from several conversations
# (three: with two, the demo bank's summaries were mostly a hit, its sibling and one more fact,
# and 7 of its 13 summary proposals; approving every summary has never moved the diagnostic's
# recall). Chosen on the demo bank and the development split, checked on generated banks
# (evals/reconsolidation/proposal_load.py; evals/README.md).
RECON_SUMMARY_MIN_CLAUSES = int(os.environ.get("RECON_SUMMARY_MIN_CLAUSES", "3"))
RECON_SUMMARY_MIN_SESSIONS = int(os.environ.get("RECON_SUMMARY_MIN_SESSIONS", "3"))
# One live summary per holder: two pending or active summaries whose support overlaps by more
# than this Jaccard index say the same thing; the newer revises or updates the older.
RECON_SUMMARY_MAX_SHARED_SUPPORT = 0.5
# Pending proposals one owner is asked to review at most; when it is full dreaming keeps its
# place and proposes more as the owner decides.
RECON_REVIEW_QUEUE_MAX = int(os.environ.get("RECON_REVIEW_QUEUE_MAX", "50"))
RECON_HYPOTHESIS_MAX_CONFIDENCE = 0.35  # inferred connections: confidence cap
RECON_HYPOTHESIS_MAX_DAYS = 30  # hypothesis expiry after its latest supporting event
RECON_HYPOTHESIS_MIN_EVENTS = 2  # distinct owner events (and source originals) cited
RECON_OPERATIONS_PAGE_DEFAULT = 50
RECON_OPERATIONS_PAGE_MAX = 100  # operation history page bound
RECON_IDEMPOTENCY_KEY_MAX_CHARS = 128

# --- Provider seam (reconsolidation/providers; read at call time; names carry their unit) --
AGENT_MEMORY_RECONSOLIDATION_PROVIDER = os.environ.get("AGENT_MEMORY_RECONSOLIDATION_PROVIDER", "rules")  # rules | openai
# Host of the only remote endpoint content may leave for (e.g. "api.openai.com"); empty =
# no remote egress. A loopback base URL (127.0.0.1, ::1, localhost) is local and needs no pin.
AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER = os.environ.get("AGENT_MEMORY_RECONSOLIDATION_RESIDENCY_PROVIDER", "")
RECON_SCRIPTED_PROVIDER_ALLOWED = env_flag("RECON_SCRIPTED_PROVIDER_ALLOWED")  # tests and evals only
RECON_REQUEST_MAX_INPUT_TOKENS = 16384  # estimated as one token per UTF-8 byte of the request
RECON_REQUEST_MAX_OUTPUT_TOKENS = 4096
RECON_REQUEST_MAX_BYTES = 65536
RECON_RESPONSE_MAX_BYTES = 65536  # guard on each response before parsing
RECON_STREAM_MAX_BYTES = 4194304  # raw SSE bytes of one call: 4,096 tokens x 1 KiB per event
RECON_EXCERPT_MAX_BYTES = 2048
RECON_EVENT_MAX_PARTS = 32
RECON_GROUP_MAX_EXCERPTS = 256
RECON_BATCH_MAX_GROUPS = 4
RECON_CLAUSE_MAX_CHARS = 2000
RECON_PROVIDER_MAX_ATTEMPTS = 1
RECON_PROVIDER_CALL_SECONDS = 30.0
RECON_PROVIDER_IDLE_SECONDS = 10.0
VEETBOT_OPENAI_BASE_URL = os.environ.get("VEETBOT_OPENAI_BASE_URL", "https://api.openai.com/v1")
VEETBOT_OPENAI_MODEL = os.environ.get("VEETBOT_OPENAI_MODEL", "")
# Unset = unknown price = every request defers (never a guessed price).
VEETBOT_OPENAI_INPUT_USD_PER_MTOK = os.environ.get("VEETBOT_OPENAI_INPUT_USD_PER_MTOK") or None
VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK = os.environ.get("VEETBOT_OPENAI_OUTPUT_USD_PER_MTOK") or None

# Evaluation answer stage (evals/reconsolidation/answers.py): output tokens per probe answer.
EVAL_ANSWER_MAX_OUTPUT_TOKENS = 64

# --- REST framework -------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["veetbot.auth.OwnerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["veetbot.auth.HasOwnerScopes"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "veetbot.api_errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Veetbot memory API",
    "DESCRIPTION": "Owner-scoped memory bank: originals, recall and reconsolidation.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
}

# --- Celery ---------------------------------------------------------------------------
# Without a broker, tasks run inline (the embedded default needs no Redis).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL or None)
# The queue every task and worker uses; deployments (or test runs) sharing one Redis keep
# apart by giving each its own.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TIMEZONE = "UTC"
MEMORY_EXPIRY_SWEEP_INTERVAL_SECONDS = float(os.environ.get("MEMORY_EXPIRY_SWEEP_INTERVAL_SECONDS", 300))
MEMORY_DECAY_SWEEP_INTERVAL_SECONDS = float(os.environ.get("MEMORY_DECAY_SWEEP_INTERVAL_SECONDS", 86400))
# Dreaming: every interval, each owner gets up to this many slices (one task per owner;
# the durable lease keeps overlapping runs apart). Processing still needs
# AGENT_MEMORY_RECONSOLIDATION_ENABLED.
RECON_DREAM_INTERVAL_SECONDS = float(os.environ.get("RECON_DREAM_INTERVAL_SECONDS", 60))
RECON_DREAM_MAX_SLICES_PER_OWNER = env_int("RECON_DREAM_MAX_SLICES_PER_OWNER", 10)
CELERY_BEAT_SCHEDULE = (
    {
        "memory-expire-due": {"task": "memory.tasks.expire_due_all", "schedule": MEMORY_EXPIRY_SWEEP_INTERVAL_SECONDS},
        "memory-decay-due": {"task": "memory.tasks.decay_due_all", "schedule": MEMORY_DECAY_SWEEP_INTERVAL_SECONDS},
        "recall-backfill-vectors": {
            "task": "recall.tasks.backfill_vectors_all",
            "schedule": RECALL_BACKFILL_INTERVAL_SECONDS,
            "kwargs": {"max_items_per_owner": RECALL_BACKFILL_MAX_ITEMS_PER_OWNER},
            "options": {"expires": RECALL_BACKFILL_INTERVAL_SECONDS},  # drop queued runs that went stale
        },
        "reconsolidation-dream-due": {
            "task": "reconsolidation.tasks.dream_due_all",
            "schedule": RECON_DREAM_INTERVAL_SECONDS,
            "options": {"expires": RECON_DREAM_INTERVAL_SECONDS},
        },
    }
    if CELERY_BROKER_URL
    else {}
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("VEETBOT_LOG_LEVEL", "WARNING")},
}

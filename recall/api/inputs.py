"""The closed request bodies of the recall routes, as strict pydantic models.

They are also the OpenAPI documentation of those bodies (``memory.api.schema
.StrictBodyScheme``): descriptions and bounds live on the fields, nothing is kept twice.

``RecallFilters`` are the hard predicates a caller may add to the ones the owner, the
ceiling and the lifecycle already impose — scope, belief types, explicit exclusions — and
the selection mode. Every channel and the expansion arm apply them in SQL before any
candidate limit (``recall.arms.permitted``); they can only narrow what a recall may see.
"""
from __future__ import annotations

from typing import Annotated, Optional
from uuid import UUID

from django.conf import settings
from pydantic import Field

from memory import vocabulary
from memory.api import parsing, schema
from memory.api.inputs import INSTANT_NOTE, Body, Instant
from memory.domain import BeliefType
from recall.context import former
from recall.domain import (
    MAX_EXCLUDE_IDS, MAX_ITEMS_BOUND, MAX_TOKENS_BOUND, QUERY_MAX_CHARS, Channel, SelectionMode, Sensitivity,
)

# Not blank (the view refuses a string of whitespace only as "blank") and, like every body
# string, without NUL: one pattern for the document, the same character classes the view uses.
NON_BLANK_PATTERN = f"^[^\\u0000]*[^{parsing.WHITESPACE_CLASS}\\u0000][^\\u0000]*$"
QUERY_PATTERN = NON_BLANK_PATTERN  # the search query's name for it

SCOPE_NOTE = (
    "The scope the recall happens in: user (default), project:<id> or session:<session id>. Local scopes "
    "never cross: a project or session recall sees its own scope's beliefs and the user-scope beliefs that "
    "are portable; a user recall sees user-scope beliefs only. A scope that names no session of the owner's "
    "simply holds nothing."
)


# The belief-type choice set is already named by the originals' belief_type: documented here
# as a pattern over the same values (one enum component name per choice set).
BeliefTypeItem = Annotated[BeliefType, Field(json_schema_extra=schema.enum_as_pattern)]


class HardFilters(Body):
    """Hard predicates and the selection mode, shared by search, context assembly and
    conversation turns."""

    ceiling: Sensitivity = Field(
        description=f"Highest sensitivity that may be recalled: {', '.join(vocabulary.SENSITIVITIES)}.",
        json_schema_extra=schema.enum_as_pattern)
    scope: str = Field(default="user", pattern=vocabulary.SCOPE.pattern, description=SCOPE_NOTE)
    belief_types: list[BeliefTypeItem] = Field(
        default_factory=list, max_length=len(vocabulary.BELIEF_TYPES),
        description="Only beliefs of these types (empty: every type). A hard filter, applied before any limit.")
    exclude_ids: list[UUID] = Field(
        default_factory=list, max_length=MAX_EXCLUDE_IDS,
        description="Memories never to return (unknown and foreign IDs are simply not there).")
    selection_mode: SelectionMode = Field(default="relevance", description=(
        "relevance (default): lexical, structured and semantic candidates ranked by relevance before any limit; "
        "recent: the legacy bounded newest-first selection (keyword channel only, said in fallback_reason)."))

    def hard_filters(self) -> dict:
        return dict(ceiling=self.ceiling, scope=self.scope, belief_types=tuple(self.belief_types),
                    exclude_ids=tuple(self.exclude_ids), selection_mode=self.selection_mode)


class RecallFilters(HardFilters):
    """The hard predicates, and the instant recall reads the bank at."""

    as_of: Optional[Instant] = Field(default=None, description=(
        "Recall as of this past instant (not in the future); current restrictions still apply. " + INSTANT_NOTE))


class MemorySearch(RecallFilters):
    """The closed search body. as_of must not be in the future (validation_error)."""

    query: str = Field(min_length=1, max_length=QUERY_MAX_CHARS, description="Not whitespace only.",
                       json_schema_extra={"pattern": QUERY_PATTERN})
    max_items: Optional[int] = Field(default=None, ge=1, le=MAX_ITEMS_BOUND, description=(
        f"Item budget (default {settings.RECALL_MAX_ITEMS})."))
    max_tokens: Optional[int] = Field(default=None, ge=1, le=MAX_TOKENS_BOUND, description=(
        f"Token budget of the rendered text (default {settings.RECALL_MAX_TOKENS}); whole items only."))
    channel: Optional[Channel] = Field(default=None, description=(
        "hybrid (default), dense or sparse. Without semantic recall the search runs sparse and says so in "
        "fallback_reason."))

    def request_fields(self) -> dict:
        """The ``recall.domain.RecallRequest`` fields this body sets (budgets defaulted)."""
        return dict(
            query=self.query, ceiling=self.ceiling, as_of=self.as_of, channel=self.channel, scope=self.scope,
            belief_types=tuple(self.belief_types), exclude_ids=tuple(self.exclude_ids),
            selection_mode=self.selection_mode,
            max_items=self.max_items or settings.RECALL_MAX_ITEMS,
            max_tokens=self.max_tokens or settings.RECALL_MAX_TOKENS,
        )


class WorkingFragmentBody(Body):
    text: str = Field(min_length=1, max_length=former.FRAGMENT_MAX_CHARS, json_schema_extra={"pattern": NON_BLANK_PATTERN})
    completed: bool = Field(default=False, description="A completed task's fragment is left out of the query.")


Fragment = Annotated[str, Field(min_length=1, max_length=former.FRAGMENT_MAX_CHARS,
                                json_schema_extra={"pattern": NON_BLANK_PATTERN})]


class TurnNeed(Body):
    """What the assistant knows about this turn, and the turn's allowance: the server forms
    the queries (no model call)."""

    current_message: str = Field(min_length=1, max_length=QUERY_MAX_CHARS, description="Not whitespace only.",
                                 json_schema_extra={"pattern": QUERY_PATTERN})
    task: Optional[Fragment] = Field(default=None, description="The current task, if any.")
    unresolved_references: list[Fragment] = Field(
        default_factory=list, max_length=former.FRAGMENTS_MAX,
        description="Phrases the turn refers to but does not resolve (\"that place\", \"her sister\").")
    active_entities: list[Annotated[str, Field(min_length=1, max_length=former.ENTITY_MAX_CHARS)]] = Field(
        default_factory=list, max_length=former.FRAGMENTS_MAX,
        description="Entity IDs in play (e.g. person:<uuid>), matched by the structured channel.")
    open_questions: list[Fragment] = Field(default_factory=list, max_length=former.FRAGMENTS_MAX)
    working_state: list[WorkingFragmentBody] = Field(default_factory=list, max_length=former.FRAGMENTS_MAX)
    max_items: Optional[int] = Field(default=None, ge=1, le=settings.RECALL_MAX_ITEMS, description=(
        f"The turn's item allowance, shared by every search (default and at most {settings.RECALL_MAX_ITEMS})."))
    max_tokens: Optional[int] = Field(default=None, ge=1, le=settings.RECALL_MAX_TOKENS, description=(
        f"The turn's token allowance, shared by every search (default and at most {settings.RECALL_MAX_TOKENS})."))

    def need(self) -> former.ContextNeed:
        return former.ContextNeed(
            current_message=self.current_message, task=self.task,
            unresolved_references=tuple(self.unresolved_references), active_entities=tuple(self.active_entities),
            open_questions=tuple(self.open_questions),
            working_state=tuple(former.WorkingFragment(text=f.text, completed=f.completed) for f in self.working_state))

    def allowance(self) -> dict:
        return dict(max_items=self.max_items or settings.RECALL_MAX_ITEMS,
                    max_tokens=self.max_tokens or settings.RECALL_MAX_TOKENS)


class MemoryContext(RecallFilters, TurnNeed):
    """The closed context-assembly body: what the assistant knows about this turn. The
    server forms the queries (no model call); as_of must not be in the future."""

    def filters(self) -> dict:
        return {**self.hard_filters(), "as_of": self.as_of}


class ConversationTurn(HardFilters, TurnNeed):
    """The closed body of one conversation turn: the context-assembly body without as_of (a
    conversation snapshots the current state). The first turn fixes ceiling, scope,
    belief_types and selection_mode for the conversation; exclude_ids may change per turn."""

    exclude_ids: list[UUID] = Field(
        default_factory=list, max_length=MAX_EXCLUDE_IDS - settings.RECALL_MAX_ITEMS,
        description=("Memories never to return in this turn (unknown and foreign IDs are simply not there); "
                     "the prefix's originals are excluded besides."))


CITATION_PATTERN = f"^[0-9a-fA-F-]{{{settings.RECALL_CITATION_SHORT_ID_MIN_CHARS},36}}$"


class CitationReportBody(Body):
    """The closed body of a citation report: what the assistant's answer cited."""

    citations: list[Annotated[str, Field(pattern=CITATION_PATTERN)]] = Field(
        min_length=1, max_length=settings.RECALL_CITATIONS_MAX_PER_REPORT, description=(
            "The [m:<id>] citations of the answer, as the ID (any case) or a prefix of it of at least "
            f"{settings.RECALL_CITATION_SHORT_ID_MIN_CHARS} characters. Each must name something the turn gave the "
            "model (the prefix or the turn's context): anything else — another owner's ID included — is not_found "
            f"with the field named, and nothing is written. At most {settings.RECALL_CITATIONS_MAX_PER_REPORT} "
            "(RECALL_CITATIONS_MAX_PER_REPORT)."))

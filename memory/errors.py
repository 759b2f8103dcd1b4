"""Service-level failures. Messages name the problem, never private content."""


class MemoryError_(Exception):
    """Base class; the API maps subclasses to its envelope codes."""


class NotFound(MemoryError_):
    """Unknown, foreign, erased or above-ceiling: indistinguishable on purpose."""


class MissingReference(NotFound):
    """A well-formed request naming something the owner does not have: a cited message
    part, a session scope, a person speaker. Not malformed — no schema can say which IDs
    exist — so it is not_found, with the fields that name nothing (never their values)."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class Invalid(MemoryError_):
    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class Conflict(MemoryError_):
    """A stale revision, a rejected claim, or an idempotency key reused with another body."""


class StateConflict(Conflict):
    """A well-formed request that the resource's current state refuses, naming the fields
    that conflict (never their values): a later conversation turn naming other filters than
    the first turn froze. Not invalid — the same request is accepted by a resource in another
    state, and no schema can say which state a resource is in — so conflict, as an
    Idempotency-Key reused with another request is."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))

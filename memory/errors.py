"""Service-level failures. Messages name the problem, never private content."""


class MemoryError_(Exception):
    """Base class; the API maps subclasses to its envelope codes."""


class NotFound(MemoryError_):
    """Unknown, foreign, erased or above-ceiling: indistinguishable on purpose."""


class Invalid(MemoryError_):
    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class Conflict(MemoryError_):
    """A stale revision, a rejected claim, or an idempotency key reused with another body."""

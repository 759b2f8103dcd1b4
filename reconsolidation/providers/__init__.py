"""Provider seam of reconsolidation: given an immutable prepared request, return a terminal
response with usage or a finite failure reason. ``rules`` (local, default), ``openai``
(OpenAI-compatible HTTP) and ``scripted`` (tests and evals only)."""

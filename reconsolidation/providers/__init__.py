"""Provider seam of reconsolidation: given an immutable prepared request, return a terminal
response with usage or a finite failure reason. ``rules`` (local, default), ``openai``
(OpenAI-compatible HTTP) and ``scripted`` (tests and evals only).

Layout of the model path (rules needs none of it: it is local and needs no egress):
``contract`` (PreparedRequest, ProviderConfig, results, the named limits), ``source_groups``
(claimed groups read into source values), ``egress`` (local classification/residency
policy), ``request`` (reconsolidation-input@1 proposal request builder), ``envelopes`` and
``parser`` (reconsolidation-proposal@1 / -verification@1, strict), ``verification``
(verification request and the batch review), ``openai`` / ``scripted`` (adapters),
``settlement`` (provider result -> spend settlement) and ``selection`` (which provider runs).
Nothing here opens a transaction around a provider call or writes a derived memory."""

"""What the owner (and the dashboard) reads of dreaming, as frozen values: ``operations``
(which operations a caller may see), ``journal`` (their allowlisted views, content only with
complete available support), ``derived`` (summaries and hypotheses), ``pause`` and
``status`` (the recent passes, content free)."""

"""Settings that pgvector would refuse at the first search, or silently cut short, are refused
when the settings load: at the bound and just past it, in a fresh interpreter each."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_settings(**environment: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import veetbot.settings"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, **environment},
    )


@pytest.mark.parametrize(("name", "at_bound", "past_bound"), [
    ("RECALL_HNSW_SEARCH_DEPTH", "20000", "20001"),  # RECALL_HNSW_MAX_SCAN_TUPLES
    ("RECALL_HNSW_SEARCH_DEPTH", "1", "0"),
    ("RECALL_HNSW_EF_SEARCH", "1000", "1001"),
    ("RECALL_HNSW_EF_SEARCH", "1", "0"),
])
def test_an_index_search_setting_past_its_bound_is_refused_at_start(name, at_bound, past_bound):
    assert load_settings(**{name: at_bound}).returncode == 0
    refused = load_settings(**{name: past_bound})
    assert refused.returncode != 0
    assert "ImproperlyConfigured" in refused.stderr and f"{name}={past_bound}" in refused.stderr

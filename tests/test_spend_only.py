"""A usage report with no cache to fill reads the other agents' spend rows alone
(``reading_spend_only``): its reports are the full read's, on every agent's fixture home."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from sessionlab.agents import USAGE_COLUMNS
from sessionlab.cli._blocks import blocks_report
from sessionlab.cli._usage import usage_report
from sessionlab.tables import call_mask
from sessionlab.tables._load import load_files

from ._agent_fixtures import DATA, use_home

AGENTS = sorted(p.name for p in DATA.iterdir() if (p / "home").is_dir())
REPORTS = ("daily", "weekly", "monthly", "session")
# the formats whose every row is spend (Droid's and Grok's usage records) and OpenClaw's pi files (pi's loader)
ALL_SPEND = ("droid", "grok", "openclaw")
NOW = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def _reports(agent: str) -> dict:
    out = {r: usage_report(r, agents=[agent]) for r in REPORTS}
    out["blocks"] = blocks_report(agents=[agent], now=NOW)["blocks"]
    return out


@pytest.mark.parametrize("agent", AGENTS)
def test_a_report_without_the_cache_is_the_full_reads(agent, monkeypatch, tmp_path):
    use_home(monkeypatch, agent)
    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", "")  # no cache: the spend rows alone
    lean = _reports(agent)
    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", str(tmp_path))  # a cache to fill: every row read
    full = _reports(agent)
    assert lean == full
    assert any(lean[r][k] for r in REPORTS for k in lean[r] if k in ("daily", "weekly", "monthly", "sessions"))


def _spend(res) -> tuple:
    from sessionlab.tables import Corpus

    t = Corpus(res.files).entries
    keep = call_mask(t) | np.asarray(t["usage_kind"].is_valid())
    cols = ("file", "session_id", "root_session_id", "timestamp", "agent", "model", "provider", *USAGE_COLUMNS)
    return t.num_rows, t.filter(keep).select(cols).to_pylist()


@pytest.mark.parametrize("agent", AGENTS)
def test_a_spend_only_read_keeps_the_spend_rows_and_their_usage(agent, monkeypatch):
    use_home(monkeypatch, agent)
    n_lean, lean = _spend(load_files(None, agents=[agent], cache=False, on_bad_lines="skip", spend_only=True))
    n_full, full = _spend(load_files(None, agents=[agent], cache=False, on_bad_lines="skip"))
    assert lean == full and lean
    if agent in ALL_SPEND:
        assert n_lean == n_full
    else:  # (messages that are no call were left out)
        assert n_lean < n_full


def test_a_spend_only_read_is_ignored_where_a_cache_is_filled(monkeypatch, tmp_path):
    use_home(monkeypatch, "amp")
    full = load_files(None, agents=["amp"], cache=False, on_bad_lines="skip")
    cached = load_files(None, agents=["amp"], cache=tmp_path, on_bad_lines="skip", spend_only=True)
    assert sum(r.entries.num_rows for r in cached.files) == sum(r.entries.num_rows for r in full.files)

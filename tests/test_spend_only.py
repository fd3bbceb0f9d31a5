"""A usage report with no cache to fill reads the other agents' spend rows alone
(``reading_spend_only``): its reports are the full read's, on every agent's fixture home."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    from sessionlab.cli import _select

    use_home(monkeypatch, agent)
    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", "")  # no cache: the spend rows alone
    lean = _reports(agent)
    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", str(tmp_path))  # a cache: its files whole, a database's sessions lean
    cached = _reports(agent)
    real = _select._loaded
    monkeypatch.setattr(_select, "_loaded", lambda source, agents, spend_only: real(source, agents, False))
    full = _reports(agent)  # (every row of every session read)
    assert lean == full and cached == full
    assert any(lean[r][k] for r in REPORTS for k in lean[r] if k in ("daily", "weekly", "monthly", "sessions"))


def _spend(res) -> tuple:
    from sessionlab.tables import Corpus

    t = Corpus(res.files).entries
    keep = call_mask(t) | np.asarray(t["usage_kind"].is_valid())
    cols = ("file", "session_id", "root_session_id", "entry_id", "timestamp", "agent", "model", "provider",
            *USAGE_COLUMNS)
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


@pytest.mark.parametrize("agent", ["goose", "kilo", "opencode", "hermes"])
def test_a_database_s_sessions_are_read_lean_with_a_cache_too(agent, monkeypatch, tmp_path):
    # (a cache never keeps a session of a database: it is read every time, so a usage report reads
    # its spend rows alone, cache or not)
    use_home(monkeypatch, agent)
    full = load_files(None, agents=[agent], cache=False, on_bad_lines="skip")
    for _ in range(2):  # (the cache filled, then used)
        cached = load_files(None, agents=[agent], cache=tmp_path, on_bad_lines="skip", spend_only=True)
        lean = load_files(None, agents=[agent], cache=False, on_bad_lines="skip", spend_only=True)
        assert _spend(cached) == _spend(lean)
        assert _spend(cached)[1] == _spend(full)[1]
    assert _spend(cached)[0] < _spend(full)[0]


GEMINI_DOCS = [
    b'{"sessionId":"s1","messages":[{"id":"u","type":"user","content":"hi","timestamp":"2026-05-01T10:00:00Z"},'
    b'{"id":"a","type":"gemini","model":"gemini-2.5-pro","timestamp":"2026-05-01T10:00:05Z","content":"x",'
    b'"thoughts":[{"subject":"s"}],"tokens":{"input":100,"output":20,"cached":40,"thoughts":5,"tool":0,"total":125}},'
    b'{"id":"a","type":"gemini","model":"gemini-2.5-pro","tokens":{"input":7,"output":1},"id":"b"},'
    b'{"type":"gemini","tokens":"none"},{"id":5,"type":"gemini","tokens":{"prompt":9,"candidates":2}}]}',
    b'{"sessionId":"s2","messages":[1,{"id":"a","type":"gemini","tokens":{"input":3,"output":4}}]}',  # (not objects)
    b'{"sessionId":"s3","messages":[{"id":"a","type":"gemini","tokens":{"input":NaN,"output":4}}]}',
    b'{"sessionId":"s4","messages":null}',
    b'{"sessionId":"s5"}\n{"id":"a","type":"gemini","tokens":{"input":3,"output":4}}\n',  # (the JSONL form)
    b'{"sessionId":"\xff","messages":[{"id":"a","type":"gemini","tokens":{"input":3,"output":4}}]}',
    b'[1,2]',
    b'{"messages":[{"id":"a","type":"gemini","model":null,"timestamp":17,"tokens":{"input":1}}],"messages":[]}',
]


@pytest.mark.parametrize("doc", GEMINI_DOCS)
def test_gemini_spend_documents_read_as_the_generic_parse_does(doc, monkeypatch):
    import io

    from sessionlab.agents import _gemini_reader as g
    from sessionlab.agents import reading_spend_only

    def read() -> tuple:
        try:
            with reading_spend_only(True):
                af = g.read_gemini("/x/chats/session-1.json", io.BytesIO(doc))
        except ValueError as exc:  # (a NaN count: the load makes the file a read_error issue)
            return ("raised", str(exc))
        return af.column_lists(), af.session, [(i.line_no, i.kind) for i in af.issues]

    typed = read()
    monkeypatch.setattr(g, "_spend_document", lambda data: None)  # (every document parsed whole)
    assert typed == read()


_COUNT = st.integers(0, 10**9)
_USAGE = st.tuples(st.one_of(st.none(), st.text(max_size=8)), st.one_of(st.none(), st.text(max_size=8)), _COUNT,
                   _COUNT, _COUNT, _COUNT, st.one_of(st.none(), _COUNT), st.one_of(st.none(), _COUNT),
                   st.one_of(st.none(), st.floats(0.001, 100)))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 50), st.text(min_size=1, max_size=8), st.one_of(st.none(), st.text(max_size=8)),
       st.one_of(st.none(), st.text(max_size=24)), st.one_of(st.none(), st.text(max_size=8), st.integers()),
       st.one_of(st.none(), st.text(max_size=8)), st.one_of(st.none(), _USAGE))
def test_a_call_built_as_a_tuple_is_the_row_a_chain_makes(line_no, eid, parent, ts, provider, model, usage):
    """A store's spend read builds an assistant message's row straight as its tuple; a reader's
    chain adds the message, then its usage: the same row, value for value."""
    from sessionlab.agents._calls import CALL_NAMES, call_values
    from sessionlab.agents._chain import Chain

    chain = Chain("/x", "opencode")
    i = chain.add(line_no, eid, ts, role="assistant", provider=provider, model=model, tool_call_count=0)
    chain.rows[i]["parent_id"] = parent
    chain.usage_of(i, usage)  # (Chain.usage's arguments in its order, as a reader's usage rule gives them)
    af = chain.done({"session_id": "s"})
    assert af.row_names == CALL_NAMES
    assert af.rows == [call_values(line_no, eid, parent, ts, provider, model, usage)]


def test_qwen_s_calls_read_as_tuples_keep_their_parents(monkeypatch):
    """Qwen's spend-only read builds its calls as tuples: each keeps the parent its record names,
    as the full read's row does."""
    use_home(monkeypatch, "qwen")

    def calls(spend: bool) -> list:
        from sessionlab.tables import Corpus

        t = Corpus(load_files(None, agents=["qwen"], cache=False, on_bad_lines="skip", spend_only=spend).files).entries
        t = t.filter(call_mask(t))
        return t.select(["file", "entry_id", "parent_id", "role", "tool_call_count"]).to_pylist()

    lean, full = calls(True), calls(False)
    assert lean and [{**r, "tool_call_count": 0} for r in full] == lean
    assert any(r["parent_id"] for r in lean)


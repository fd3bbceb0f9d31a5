"""Droid, Kilo, Hermes, OpenClaw and Grok Build through the agent seam: each fixture home is read as the agent
lays its files out, and ``sessionlab usage daily|monthly|session --agent X --json`` with that HOME
equals ccusage's reports on it (``tools/ccusage_agents.sh``, committed beside each fixture):
tokens equal, costs within 1%, and every difference stated exactly (docs/ccusage-differences.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sessionlab as sl
from sessionlab import agents
from sessionlab.pricing import model_rates
from sessionlab.tables import find_files
from tests._agent_fixtures import compare, use_home
from tests._agent_fixtures import theirs as ccusage_report  # (the tests name their results `theirs`)


@pytest.fixture
def home(monkeypatch):
    return lambda agent: use_home(monkeypatch, agent)


# -- Droid ------------------------------------------------------------------------------------------

def _droid_cost(key, m):
    """ccusage prices a Droid session's totals with the long-context rates on each field's tokens
    above 200k; sessionlab prices totals (many requests) at the base rates."""
    if m["modelName"] != "claude-sonnet-4-5":
        return None
    r = model_rates("claude-sonnet-4-5", 0)
    return (18240 * r[0] + (6120 + 2204) * r[1] + 388120 * r[2] + 42310 * r[3])


@pytest.mark.parametrize("report", ["daily", "monthly", "session"])
def test_droid_reports_equal_ccusage(home, capsys, report):
    home("droid")
    ours, theirs = compare("droid", report, capsys, output_extra=lambda r: r["reasoningOutputTokens"],
                            cost_of=_droid_cost)
    if report == "daily":  # the one difference is that of the long-context rule, on 2026-05-01
        # (its cache reads above 200k at twice the rate: the only field of the session above 200k)
        assert theirs["2026-05-01"]["totalCost"] - ours["2026-05-01"]["totalCost"] == pytest.approx(
            (388120 - 200000) * 0.3e-6, rel=1e-6)


def test_droid_sessions_and_calls(home):
    h = home("droid")
    corpus = sl.load(agents=["droid"], cache=False, progress=False, on_bad_lines="skip")
    assert corpus.issues["kind"].to_pylist() == ["unknown_model"]  # claude-unknown: no model named
    sessions = {s["session_id"]: s for s in corpus.sessions.to_pylist()}
    ids = [f"9b2e4c1a-0d3f-4a57-8e61-1f2a3b4c5d0{i}" for i in range(1, 8)]
    # the zero-usage session is a session without calls; the duplicate is two files of one session
    assert sorted(set(sessions)) == ids and corpus.sessions.num_rows == 8
    calls = [r for r in corpus.entries.to_pylist() if r["input_tokens"] is not None]
    by = {r["session_id"]: r for r in calls}
    assert len(calls) == 6 and ids[4] not in by
    a = by[ids[0]]
    assert (a["model"], a["provider"], a["input_tokens"], a["output_tokens"], a["reasoning_tokens"],
            a["cache_read_tokens"], a["cache_write_tokens"]) == ("claude-sonnet-4-5", "anthropic", 18240, 8324, 2204,
                                                                 388120, 42310)
    assert (a["cost_source"], str(a["timestamp"])[:19]) == ("priced", "2026-05-01 09:14:22")
    assert (a["type"], a["role"], a["usage_kind"], a["side_node"]) == ("usage", None, "session_total", True)
    assert set(corpus.sessions["call_count"].to_pylist()) == {0}  # totals, not calls
    assert by[ids[1]]["model"] == "gpt-5"  # from the transcript's "Model:" line
    assert by[ids[2]]["file"].endswith("-home-dev-tools/" + ids[2] + ".settings.json")  # the latest copy
    assert (by[ids[3]]["model"], by[ids[3]]["output_tokens"], by[ids[3]]["input_tokens"]) == (
        "claude-opus-4-1", 24000, 0)  # only totalTokens: all output
    assert (by[ids[5]]["model"], by[ids[5]]["cost_usd"], by[ids[5]]["cost_source"]) == (
        "claude-unknown", None, "unknown")
    g = by[ids[6]]  # 800 tokens of totalTokens beyond the parts: thinking
    assert (g["output_tokens"], g["reasoning_tokens"], g["provider"]) == (3000, 1500, "google")
    assert g["cost_usd"] == pytest.approx(20000 * 1.25e-6 + 3000 * 10e-6 + 5000 * 0.125e-6)
    assert agents.detect(b"{}", str(h / "x.jsonl")) == "pi"


def test_droid_broken_and_empty_settings(tmp_path, monkeypatch):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "bad.settings.json").write_text('{"tokenUsage": {"inputTokens": 5')
    (tmp_path / "p" / "none.settings.json").write_text('{"model": "gpt-5"}')
    (tmp_path / "p" / "ok.settings.json").write_text(
        '{"model": "gpt-5", "providerLockTimestamp": "2026-05-04T10:00:00Z", "tokenUsage": {"inputTokens": 1000}}')
    monkeypatch.setenv("DROID_SESSIONS_DIR", f" {tmp_path / 'p'} , {tmp_path / 'missing'}")
    assert agents.spec("droid").roots() == [tmp_path / "p", tmp_path / "missing"]
    corpus = sl.load(agents=["droid"], cache=False, progress=False, on_bad_lines="skip")
    assert corpus.issues["kind"].to_pylist() == ["read_error"]
    assert corpus.issues["file"].to_pylist()[0].endswith("bad.settings.json")
    calls = corpus.entries.filter(corpus.entries["input_tokens"].is_valid()).to_pylist()
    assert [(c["session_id"], c["input_tokens"], c["cost_usd"]) for c in calls] == [("ok", 1000, 1000 * 1.25e-6)]


# -- Kilo -------------------------------------------------------------------------------------------

_KILO = {k: f"ses_5a1f0c2e9ffeK1lo0{k}" for k in "abc"}


@pytest.mark.parametrize("report", ["daily", "monthly", "session"])
def test_kilo_reports_equal_ccusage(home, capsys, report):
    home("kilo")
    ours, theirs = compare("kilo", report, capsys, output_extra=lambda r: r["reasoningOutputTokens"],
                            fold={_KILO["b"]: _KILO["a"]})
    # recorded costs (Kilo's own, the gateway's, Copilot's zero) and one priced call: equal
    assert sum(r["totalCost"] for r in ours.values()) == pytest.approx(0.126319, abs=1e-9)
    if report == "session":  # ccusage lists the subagent's session apart; sessionlab in its parent's
        assert sorted(r["sessionId"] for r in ccusage_report("kilo", "session")["sessions"]) == sorted(_KILO.values())
        assert sorted(ours) == [_KILO["a"], _KILO["c"]]


def test_kilo_sessions_messages_and_calls(home):
    home("kilo")
    corpus = sl.load(agents=["kilo"], cache=False, progress=False, on_bad_lines="raise")
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert sorted(s) == sorted(_KILO.values())
    a, b, c = (s[_KILO[k]] for k in "abc")
    assert (a["name"], a["cwd"], a["agent_version"], a["agent"]) == ("Cart discount", "/home/dev/shop", "7.0.12", "kilo")
    assert (b["parent_session_id"], c["cwd"]) == (_KILO["a"], "/home/dev/shop")  # (c: the project's worktree)
    assert (a["call_count"], b["call_count"], c["call_count"]) == (2, 1, 3)
    e = {r["entry_id"]: r for r in corpus.entries.to_pylist()}
    assert [e[m]["role"] for m in ("msg_a01", "msg_a02", "msg_a04", "msg_a05")] == ["user", "assistant", "user",
                                                                                    "assistant"]
    assert (e["msg_a03"]["parent_id"], e["msg_a04"]["parent_id"]) == ("msg_a01", "msg_a03")  # answers; the chain
    assert (e["msg_a02"]["tool_call_count"], e["msg_a02"]["tool_name"], e["msg_a03"]["is_error"]) == (1, "read", True)
    assert (e["msg_a05"]["input_tokens"], e["msg_a05"]["is_error"], e["msg_a05"]["error_message"]) == (
        None, True, "Overloaded")
    m = e["msg_a02"]
    assert (m["input_tokens"], m["output_tokens"], m["reasoning_tokens"], m["cache_read_tokens"],
            m["cache_write_tokens"], m["cost_usd"], m["cost_source"]) == (3120, 998, 156, 18400, 9020, 0.0513,
                                                                          "recorded")
    assert (e["msg_b02"]["root_session_id"], e["msg_c02"]["cost_usd"], e["msg_c02"]["cost_source"]) == (
        _KILO["a"], 0.0, "recorded")
    assert (e["msg_c04"]["cost_source"], e["msg_c05"]["output_tokens"]) == ("priced", 1800)
    assert e["msg_c04"]["cost_usd"] == pytest.approx(2100 * 1.25e-6 + 1300 * 10e-6 + 8192 * 0.125e-6)
    assert str(m["timestamp"])[:19] == "2026-05-05 10:00:05"


def test_kilo_store_is_read_only_and_named_by_member(home):
    h = home("kilo")
    db = h / ".local" / "share" / "kilo" / "kilo.db"
    before = db.read_bytes()
    one = sl.load(f"{db}#{_KILO['c']}", cache=False, progress=False)
    assert one.sessions["session_id"].to_pylist() == [_KILO["c"]]
    assert find_files(f"{db}#{_KILO['c']}", agents=["kilo"]) == [f"{db}#{_KILO['c']}"]
    assert db.read_bytes() == before and not (db.parent / "kilo.db-wal").exists()
    whole = sl.load(str(db), cache=False, progress=False, on_bad_lines="skip")  # a store names its sessions
    assert whole.issues["kind"].to_pylist() == ["read_error"] and "#<session id>" in whole.issues["message"][0].as_py()


_KILO_DATA = st.fixed_dictionaries({}, optional={
    "role": st.sampled_from(["assistant", "user", "system", 3]), "modelID": st.sampled_from(["gpt-5", " ", 7]),
    "providerID": st.sampled_from(["openai", None]), "parentID": st.sampled_from(["m0", None, 1]),
    "finish": st.sampled_from(["stop", None]), "cost": st.sampled_from([0.25, 0, True, "1", None]),
    "time": st.sampled_from([{"created": 1780000000000}, {"created": 1780000000}, {}, None]),
    "error": st.sampled_from([{"name": "APIError", "data": {"message": "overloaded"}}, {"name": "X"}, {}, None]),
    "tokens": st.none() | st.fixed_dictionaries({}, optional={
        "input": st.integers(-1, 10**6) | st.just("12"), "output": st.integers(0, 10**6),
        "reasoning": st.integers(0, 10**4), "total": st.integers(0, 10**7),
        "cache": st.fixed_dictionaries({}, optional={"read": st.integers(0, 10**6), "write": st.integers(0, 10**5)}),
    })})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.none() | _KILO_DATA, max_size=6))
def test_kilo_s_spend_rows_are_its_spend_only_rows(datas):
    """A report's read of a Kilo session's messages (``spend_members``) gives the rows its spend-only
    read does (``message_rows`` of its assistant messages, no part read): a message whose data is
    no JSON object is no row and no parent."""
    import json

    from sessionlab.agents import kilo
    from sessionlab.agents._rows import file_rows

    messages = [("s", f"m{i}", "[" if d is None else json.dumps(d)) for i, d in enumerate(datas)]
    rows, prev = [], None
    for _, mid, data in messages:
        d = kilo._object(data)
        if d is not None:
            if d.get("role") == "assistant":
                rows.append(kilo.message_rows(mid, d, (), prev))
            prev = mid
    assert kilo._spend_rows(messages) == file_rows(rows, True)


def test_kilo_s_report_read_gives_its_sessions_as_their_own_reads(home):
    from sessionlab.agents import kilo
    from sessionlab.agents._spec import reading_spend_only

    db = str(home("kilo") / ".local" / "share" / "kilo" / "kilo.db")
    sids = [p.rpartition("#")[2] for p in kilo.store_sessions(db)]
    got = kilo.spend_members(db, sids)
    with reading_spend_only(True):
        files = kilo.read_members(db, sids)
    assert got.rows == [r for f in files for r in f.rows] and got.counts == [f.n for f in files]
    assert [dict(zip(got.sessions, v)) for v in zip(*got.sessions.values())] == [f.session for f in files]
    assert got.counts == [3, 1, 3]  # (the fixture's three sessions' assistant messages)


# -- Hermes -----------------------------------------------------------------------------------------

_H = {"a": "20260507_080000_a1b2c3", "b": "20260508_003000_d4e5f6", "c": "20260508_091500_0a9b8c",
      "d": "20260508_120000_77aa11"}


def _hermes_cost(key, m):
    """gpt-5 at its list rates (ccusage's Hermes report: $2.50/M input, $2/M output, $0.25/M cache
    read); hermes-4-405b has no price in genai-prices (ccusage has one)."""
    if m["modelName"] == "gpt-5":
        assert m["cost"] == pytest.approx(61000 * 2.5e-6 + 6000 * 2e-6 + 150000 * 0.25e-6)
        return 61000 * 1.25e-6 + 6000 * 10e-6 + 150000 * 0.125e-6
    if m["modelName"] == "hermes-4-405b":
        assert m["cost"] == pytest.approx(0.0075704)
        return 0.0
    return None


@pytest.mark.parametrize("report", ["daily", "monthly", "session"])
def test_hermes_reports_equal_ccusage(home, capsys, report):
    home("hermes")
    ours, theirs = compare("hermes", report, capsys, output_extra=lambda r: r["reasoningOutputTokens"],
                            cost_of=_hermes_cost, fold={_H["b"]: _H["a"]})
    if report == "session":  # the continuation after compression counts in the session it continues
        assert sorted(ours) == [_H["a"], _H["c"], _H["d"]]
    assert sum(r["totalTokens"] for r in ours.values()) == 525630


def test_hermes_sessions_messages_and_totals(home):
    home("hermes")
    corpus = sl.load(agents=["hermes"], cache=False, progress=False, on_bad_lines="skip")
    assert corpus.issues["kind"].to_pylist() == ["unknown_model"]  # hermes-4-405b
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert len(s) == 6 and (s[_H["a"]]["name"], s[_H["b"]]["parent_session_id"]) == ("Refactor the CLI", _H["a"])
    e = corpus.entries.to_pylist()
    totals = {r["session_id"]: r for r in e if r["usage_kind"] == "session_total"}
    assert sorted(totals) == sorted(_H.values())  # no model, or no usage: no totals row
    a = totals[_H["a"]]
    assert (a["input_tokens"], a["output_tokens"], a["cache_read_tokens"], a["cache_write_tokens"], a["cost_usd"],
            a["cost_source"], a["provider"]) == (48210, 6120, 181400, 22050, 0.4105, "recorded", "anthropic")
    assert str(a["timestamp"])[:23] == "2026-05-07 08:00:00.412"
    b, c = totals[_H["b"]], totals[_H["c"]]
    assert (b["cost_source"], c["cost_source"], c["output_tokens"], c["reasoning_tokens"]) == (
        "priced", "priced", 6000, 1800)  # an estimate and a subscription's zero are priced
    assert b["root_session_id"] == _H["a"]
    msgs = [r for r in e if r["session_id"] == _H["a"] and r["type"] == "message"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "toolResult", "assistant"]
    assert (msgs[1]["tool_call_count"], msgs[1]["tool_name"], msgs[2]["tool_name"]) == (1, "terminal", "terminal")
    assert [m["parent_id"] for m in msgs] == [f"hermes:{_H['a']}", "m1", "m2", "m3"]
    assert [r["is_error"] for r in e if r["session_id"] == _H["d"] and r["role"] == "assistant"] == [True]
    assert set(corpus.sessions["call_count"].to_pylist()) == {0}


# -- OpenClaw ---------------------------------------------------------------------------------------

_OC = {"a": "6f1c2a40-8d7e-4b1a-9c3d-0e5f7a9b1c01", "b": "6f1c2a40-8d7e-4b1a-9c3d-0e5f7a9b1c02",
       "w": "0b7d9e22-51c3-4f08-a6b4-2d8e0f1a3c05"}


@pytest.mark.parametrize("report", ["daily", "monthly", "session"])
def test_openclaw_reports_equal_ccusage(home, capsys, report):
    """Equal tokens and costs; ccusage names each model ``[openclaw] <model>``."""
    home("openclaw")
    ours, _ = compare("openclaw", report, capsys, model=lambda name: name.removeprefix("[openclaw] "))
    assert sum(r["totalCost"] for r in ours.values()) == pytest.approx(0.1111815, abs=1e-9)


def test_openclaw_files_are_pi_files_labelled_openclaw(home):
    h = home("openclaw")
    corpus = sl.load(agents=["openclaw"], cache=False, progress=False, on_bad_lines="raise")
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert sorted(s) == sorted(_OC.values())
    assert {r["agent"] for r in s.values()} == {"openclaw"} and set(corpus.entries["agent"].to_pylist()) == {"openclaw"}
    assert s[_OC["w"]]["file"].endswith(".jsonl.deleted.2026-05-12T09-00-00.000Z")
    assert (s[_OC["a"]]["cwd"], s[_OC["a"]]["call_count"]) == ("/home/dev/.openclaw/workspace", 4)  # (with the error)
    e = [r for r in corpus.entries.to_pylist() if r["role"] == "assistant"]
    w = [r for r in e if r["session_id"] == _OC["w"]][0]
    assert (w["cost_source"], w["model"]) == ("priced", "claude-haiku-4-5")
    assert w["cost_usd"] == pytest.approx(3300 * 1e-6 + 120 * 5e-6 + 2100 * 1.25e-6)
    assert {r["cost_source"] for r in e if r["session_id"] != _OC["w"]} == {"recorded"}
    # the same files named as a folder are pi's (no OpenClaw folder around them): a path decides
    assert agents.detect(b'{"type":"session","version":3,"id":"x"}\n', "/tmp/x.jsonl") == "pi"
    f = s[_OC["a"]]["file"]
    assert agents.detect(Path(f).read_bytes()[:65536], f) == "openclaw"
    assert sl.load(str(h / ".openclaw"), agents=["openclaw"], cache=False, progress=False).sessions.num_rows == 2


@pytest.mark.parametrize(("rel", "mine"), [
    (".openclaw/agents/a/sessions/x.jsonl", True), (".openclaw/agents/a/sessions/x.jsonl.deleted.17", True),
    (".openclaw/agents/a/sessions/x.jsonl.reset.17", True), (".clawdbot/agents/z/sessions/q.jsonl", True),
    (".openclaw/agents/a/sessions/../sessions/x.jsonl", True), (".openclaw/agents/a/b/sessions/x.jsonl", False),
    (".openclaw/agents/a/sessions/x.json", False), (".openclaw/agents/sessions/x.jsonl", False),
    ("elsewhere/agents/a/sessions/x.jsonl", False), (".openclaw/agents/a/sessions/sub/x.jsonl", False)])
def test_an_openclaw_file_is_known_by_its_folder_and_name(rel, mine, tmp_path, monkeypatch):
    # (the folder's answer is kept per folder: each of its files asks only its own name)
    from sessionlab.agents import openclaw

    monkeypatch.delenv("OPENCLAW_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert openclaw._recognise_file(str(tmp_path / rel), b"") is mine
    monkeypatch.setenv("OPENCLAW_DIR", str(tmp_path / "other"))  # (the environment is asked every time)
    assert openclaw._recognise_file(str(tmp_path / rel), b"") is False


# -- Grok Build -------------------------------------------------------------------------------------

_GK = {"a": "019f7000-0000-7000-8000-000000000001", "b": "019f7000-0000-7000-8000-000000000002"}


def _grok_cost(key, m):
    """ccusage prices grok-4's 5,000 cache-write tokens (turn p-3, no cost ticks: a partial bill) at
    $3.75/M (LiteLLM); genai-prices at its input rate, $3/M."""
    if m["modelName"] != "grok-4" or m["cacheCreationTokens"] == 0:
        return None
    r = model_rates("grok-4", 0)
    assert r[3] == pytest.approx(3e-6)
    other = 10000 * 3e-6 + 500 * 15e-6 if key == "2026-05" else 0.0  # (the month: session b's turn too)
    assert m["cost"] == pytest.approx(0.1 + 10000 * 3e-6 + 2000 * 15e-6 + 15000 * 0.75e-6 + 5000 * 3.75e-6 + other)
    return 0.1 + 10000 * r[0] + 2000 * r[1] + 15000 * r[2] + 5000 * r[3] + other


@pytest.mark.parametrize("report", ["daily", "monthly", "session"])
def test_grok_reports_equal_ccusage(home, capsys, report):
    home("grok")
    ours, _ = compare("grok", report, capsys, cost_of=_grok_cost)
    assert sum(r["totalTokens"] for r in ours.values()) == 105500


def test_grok_turns_per_model(home, monkeypatch):
    home("grok")
    monkeypatch.delenv("GROK_HOME", raising=False)
    corpus = sl.load(agents=["grok"], cache=False, progress=False, on_bad_lines="raise")
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert sorted(s) == sorted(_GK.values())
    assert (s[_GK["a"]]["name"], s[_GK["a"]]["cwd"], s[_GK["b"]]["name"]) == (
        "Rate limiting for the API", "/home/dev/api", "Explain the retry logic.")
    rows = {(r["session_id"], r["entry_id"]): r for r in corpus.entries.to_pylist()}
    assert sorted(k[1] for k in rows if k[0] == _GK["a"]) == ["p-1:grok-4", "p-3:grok-4", "p-3:grok-code-fast-1"]
    p1 = rows[(_GK["a"], "p-1:grok-4")]  # written twice, counted once; the prompt's cache reads taken out
    assert (p1["input_tokens"], p1["cache_read_tokens"], p1["output_tokens"], p1["reasoning_tokens"], p1["cost_usd"],
            p1["cost_source"], p1["usage_kind"]) == (20000, 30000, 2000, 800, 0.1, "recorded", "turn")
    p3 = rows[(_GK["a"], "p-3:grok-4")]  # a partial bill: no cost ticks, priced; cache writes out of the input
    assert (p3["input_tokens"], p3["cache_write_tokens"], p3["cost_source"]) == (10000, 5000, "priced")
    b = rows[(_GK["b"], "p-1:grok-4")]  # no per-model usage: the session's current model
    assert (b["model"], b["input_tokens"], str(b["timestamp"])[:19]) == ("grok-4", 10000, "2026-05-13 09:01:00")
    monkeypatch.setenv("GROK_HOME", "~/elsewhere")
    assert agents.spec("grok").roots() == [Path.home() / "elsewhere" / "sessions"]


def test_contexts_of_store_agents(home):
    """Contexts work from the tables; the messages of a store's session are not read back."""
    home("kilo")
    corpus = sl.load(agents=["kilo"], cache=False, progress=False)
    calls = sl.contexts(corpus, at="calls")
    assert calls.num_rows == 6
    with pytest.raises(sl.ArgumentValueError, match="not read back"):
        sl.context_messages(corpus.entries, "msg_a03")
    members = sl.context_members(corpus.entries, at=["msg_a03"])
    assert members.sort_by("position")["entry_id"].to_pylist() == ["msg_a01", "msg_a03"]


def test_dask_loads_a_store_s_sessions(home):
    from sessionlab.agents import kilo
    from sessionlab.dask import load_dask

    h = home("kilo")
    t = load_dask(kilo.store_sessions(str(h / ".local" / "share" / "kilo" / "kilo.db"))).compute()
    assert (len(t), set(t["agent"]), int(t["input_tokens"].sum())) == (12, {"kilo"}, 15370)


def _kept_by_loop(sessions, firsts):
    """The plain rule: per session the latest first timestamp wins (a later equal one too); a
    session none of whose files has one keeps its first file."""
    best: dict = {}
    for k, (sid, ts) in enumerate(zip(sessions, firsts)):
        if sid not in best or (ts is not None and (best[sid][0] is None or ts >= best[sid][0])):
            best[sid] = (ts, k)
    return sorted(k for _, k in best.values())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.one_of(st.none(), st.integers(0, 5))), max_size=30))
def test_droid_copies_kept_as_the_plain_rule_keeps_them(files):
    """The vectorised choice of which copy of a Droid session counts equals the plain loop's."""
    import pyarrow as pa

    from sessionlab.agents.droid import kept_copies

    sessions = [s for s, _ in files]
    stamps = [None if t is None else 1_700_000_000_000_000 + t for _, t in files]
    firsts = pa.chunked_array([pa.array(stamps, pa.timestamp("us", "UTC"))])
    assert [int(i) for i in kept_copies(sessions, firsts).nonzero()[0]] == _kept_by_loop(sessions, stamps)
    half = len(sessions) // 2  # (as the load gives them: each file's first row of its session_id column, in chunks)
    ids = pa.chunked_array([pa.array(sessions[:half], pa.string()), pa.array(sessions[half:], pa.string())])
    assert [int(i) for i in kept_copies(ids, firsts).nonzero()[0]] == _kept_by_loop(sessions, stamps)

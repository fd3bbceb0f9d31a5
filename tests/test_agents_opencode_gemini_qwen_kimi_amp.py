"""More agents through the registry: each one's fixture home read as the agent lays it out, and
``sessionlab usage daily|monthly|session --agent X --json`` held to the real ccusage's reports on
the same home (``tools/ccusage_agents.sh`` wrote them beside each fixture).

Tokens per row must be equal, costs within 1%, after the differences that
``docs/ccusage-differences.md`` explains (each one is checked here to its exact size):

- OpenCode: ccusage leaves a message's ``reasoning`` tokens out of ``outputTokens`` (counted in
  ``totalTokens`` through the message's ``total``); sessionlab's ``outputTokens`` include them. ccusage
  reports a subagent's child session as a session of its own; sessionlab counts it in the session
  that started it (as for Claude Code's subagents).
- Qwen Code: ccusage reads ``promptTokenCount`` as the uncached input and adds the cached part again
  as cache reads, and adds ``thoughtsTokenCount`` to the total although the output includes it;
  sessionlab's input is the uncached part. ccusage counts a /branch session's copies of its
  parent's records again; sessionlab once. genai-prices has no Qwen prices: sessionlab leaves the
  cost out (``unknown_model``), where ccusage prices from LiteLLM's table.
- Kimi CLI: tokens equal. The wire log names no model; both take the configuration's
  (``kimi-for-coding``, Kimi Code's subscription alias): ccusage prices it as ``kimi-k2.5`` before
  2026-04-20 and ``kimi-k2.6`` after, sessionlab leaves the cost out (``unknown_model``).
- Amp: equal, but for a usage without a model, which ccusage drops and sessionlab keeps unpriced.
- Gemini CLI: ccusage leaves a message's ``thoughts`` out of ``outputTokens`` (it counts them in
  ``totalTokens`` and prices them as output); sessionlab's ``outputTokens`` include them
  (``reasoningOutputTokens`` says how many), as for Codex. ccusage drops a call that names no model;
  sessionlab keeps it, unpriced.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sessionlab as sl
from tests._agent_fixtures import DATA, close, ours, theirs, use_home

_TOKENS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "totalTokens")
_KEY = {"daily": "date", "monthly": "month", "session": "sessionId"}
_LIST = {"daily": "daily", "monthly": "monthly", "session": "sessions"}


def _without_unnamed(row: dict) -> dict:
    """A row less its calls that name no model (ccusage drops them)."""
    out = dict(row)
    for m in row["modelBreakdowns"]:
        if m["modelName"] is None:
            for k in (*_TOKENS, "reasoningOutputTokens"):
                out[k] -= m[k]
    return out


def _gemini_row(row: dict) -> dict:
    row = _without_unnamed(row)
    row["outputTokens"] -= row["reasoningOutputTokens"]  # ccusage: thoughts only in totalTokens
    return row


def _reasoning_apart(row: dict) -> dict:
    row = dict(row)
    row["outputTokens"] -= row["reasoningOutputTokens"]  # ccusage: reasoning only in totalTokens
    return row


def _qwen_row(row: dict) -> dict:
    row = dict(row)  # ccusage: the prompt count with its cached part, and thoughts once more in the total
    row["inputTokens"] += row["cacheReadTokens"]
    row["totalTokens"] += row["cacheReadTokens"] + row["reasoningOutputTokens"]
    return row


_ADJUST = {"gemini": _gemini_row, "opencode": _reasoning_apart, "qwen": _qwen_row, "kimi": dict,
           "amp": _without_unnamed}
# genai-prices has no Qwen prices, and none for Kimi's subscription alias (ccusage guesses K2.5 or K2.6)
_UNPRICED = {"qwen": ["(none)", "qwen3-coder-flash", "qwen3-coder-plus"], "kimi": ["kimi-for-coding"]}
# child session -> the session that started it: ccusage reports it apart, sessionlab within its parent
_CHILDREN = {"opencode": {"ses_4f1a2b3c6ffeABCDEFGHIJ0002": "ses_4f1a2b3c5ffeABCDEFGHIJ0001"}}


def _qwen_fork_copies(report: str) -> dict[str, dict[str, int]]:
    """What ccusage counts again for the records a /branch session copied from its parent: the
    copies' usage as ccusage reads it, per report key."""
    out: dict[str, dict[str, int]] = {}
    for f in (DATA / "qwen" / "home").rglob("*.jsonl"):
        for ln in f.read_text().splitlines():
            d = json.loads(ln)
            u = d.get("usageMetadata")
            if not d.get("forkedFrom") or not u:
                continue
            k = {"daily": d["timestamp"][:10], "monthly": d["timestamp"][:7], "session": d["sessionId"]}[report]
            p, c, cached, th = (u["promptTokenCount"], u["candidatesTokenCount"], u["cachedContentTokenCount"],
                                u["thoughtsTokenCount"])
            row = out.setdefault(k, dict.fromkeys(_TOKENS, 0))
            for t, v in (("inputTokens", p), ("outputTokens", c), ("cacheReadTokens", cached),
                         ("totalTokens", p + c + cached + th)):
                row[t] += v
    return out


def _without_copies(agent: str, report: str, rows: list[dict]) -> list[dict]:
    copies = _qwen_fork_copies(report) if agent == "qwen" else {}
    out = []
    for r in rows:
        r = dict(r)
        for t, v in copies.get(r[_KEY[report]], {}).items():
            r[t] -= v
        out.append(r)
    return out


def _merge_children(agent: str, rows: list[dict]) -> list[dict]:
    """ccusage's session rows with each child session's added to its parent's."""
    children = _CHILDREN.get(agent, {})
    by_id = {r["sessionId"]: dict(r) for r in rows if r["sessionId"] not in children}
    for r in rows:
        if r["sessionId"] in children:
            parent = by_id[children[r["sessionId"]]]
            for k in (*_TOKENS, "totalCost"):
                parent[k] += r[k]
    return list(by_id.values())


@pytest.mark.parametrize("report", ["daily", "monthly", "session"])
@pytest.mark.parametrize("agent", sorted(_ADJUST))
def test_usage_reports_equal_ccusage(monkeypatch, capsys, agent, report):
    use_home(monkeypatch, agent)
    got = ours(capsys, agent, report)
    exp = theirs(agent, report)
    key = _KEY[report]
    rows = {r[key]: _ADJUST[agent](r) for r in got[_LIST[report]]}
    want_rows = _merge_children(agent, exp[_LIST[report]]) if report == "session" else exp[_LIST[report]]
    want = {r[key]: r for r in _without_copies(agent, report, want_rows)}
    assert sorted(rows) == sorted(want)
    for k, w in want.items():
        g = rows[k]
        assert {t: g[t] for t in _TOKENS} == {t: w[t] for t in _TOKENS}, k
        if agent in _UNPRICED:  # no price: the cost is left out (null per call), never a silent guess
            assert g["totalCost"] == 0 and got["unpricedModels"] == _UNPRICED[agent]
        else:
            assert close(g["totalCost"], w["totalCost"]), (k, g["totalCost"], w["totalCost"])
        named = {m["modelName"] for m in got[_LIST[report]][0]["modelBreakdowns"]} - {None}
        assert named <= {m["modelName"] for r in exp[_LIST[report]] for m in r["modelBreakdowns"]}


def _load(monkeypatch, agent: str):
    use_home(monkeypatch, agent)
    return sl.load(agents=[agent], cache=False, progress=False, on_bad_lines="skip")


# -- Gemini CLI ------------------------------------------------------------------------------------


def test_gemini_sessions_calls_and_messages(monkeypatch):
    corpus = _load(monkeypatch, "gemini")
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert set(s) == {"3f2a1b4c-6d8e-4f01-9a2b-3c4d5e6f7081", "b8c9d0e1-f2a3-4b4c-8d5e-6f708192a3b4"}
    json_s, jsonl_s = s["3f2a1b4c-6d8e-4f01-9a2b-3c4d5e6f7081"], s["b8c9d0e1-f2a3-4b4c-8d5e-6f708192a3b4"]
    assert (json_s["agent"], json_s["cwd"], jsonl_s["cwd"]) == ("gemini", None, "/home/dev/deploy-tools")
    assert (json_s["call_count"], jsonl_s["call_count"]) == (3, 3)  # the rewritten g1-8d2a counts once
    e = corpus.entries.to_pylist()
    calls = [r for r in e if r["input_tokens"] is not None]
    first = calls[0]
    # input 15327 with 11526 cached, tool prompt 7: 3808 uncached; thoughts 919 billed as output
    assert (first["input_tokens"], first["cache_read_tokens"], first["output_tokens"], first["reasoning_tokens"],
            first["total_tokens"]) == (3808, 11526, 942, 919, 16276)
    assert first["cost_source"] == "priced" and first["cost_usd"] == pytest.approx(
        3808 * 1.25e-6 + 11526 * 0.125e-6 + 942 * 10e-6, rel=1e-6)
    unnamed = [r for r in calls if r["model"] is None]
    assert [(r["input_tokens"], r["cost_usd"], r["cost_source"]) for r in unnamed] == [(1750, None, "unknown")]
    assert corpus.issues["kind"].to_pylist() == ["unknown_model"]
    js = [r for r in e if r["session_id"] == json_s["session_id"]]
    assert [(r["type"], r["role"]) for r in js] == [
        ("message", "user"), ("message", "assistant"), ("message", "toolResult"), ("message", "assistant"),
        ("message", "toolResult"), ("info", None), ("message", "user"), ("error", None), ("message", "assistant")]
    assert [r["tool_name"] for r in js if r["role"] == "toolResult"] == ["read_file", "replace"]
    assert all(r["parent_id"] == p["entry_id"] for p, r in zip(js, js[1:]))  # a chain
    assert [r["side_node"] for r in js].count(True) == 2
    rewritten = [r for r in e if r["entry_id"] == "g1-8d2a"]
    assert len(rewritten) == 1 and rewritten[0]["tool_call_count"] == 1  # the later, complete copy


def test_gemini_logs_and_other_files_are_not_sessions(monkeypatch):
    from sessionlab import agents

    home = use_home(monkeypatch, "gemini")
    found = agents.default_files(["gemini"])
    assert [Path(f).name for f in found] == ["session-2026-05-17T11-07-3f2a1b4c.json",
                                             "session-2026-05-18T23-59-b8c9d0e1.jsonl"]
    monkeypatch.setenv("GEMINI_DATA_DIR", f" {home}/.gemini/tmp/a07c2e9d4b1f3a5c7e9b0d2f4a6c8e1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f0a2c,")
    assert [Path(f).name for f in agents.default_files(["gemini"])] == ["session-2026-05-18T23-59-b8c9d0e1.jsonl"]


# -- OpenCode --------------------------------------------------------------------------------------

_OC = {"A": "ses_4f1a2b3c5ffeABCDEFGHIJ0001", "B": "ses_4f1a2b3c6ffeABCDEFGHIJ0002",
       "C": "ses_4f2b3c4d7ffeABCDEFGHIJ0003", "L": "ses_5a0b1c2d8ffeABCDEFGHIJ0004"}


def test_opencode_sessions_from_the_database_and_the_old_storage(monkeypatch):
    corpus = _load(monkeypatch, "opencode")
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert set(s) == set(_OC.values())  # the migrated session once (its old JSON copy is left out)
    a, b, c, old = (s[_OC[k]] for k in "ABCL")
    assert (a["name"], a["cwd"], a["agent_version"], a["call_count"]) == ("Fix rounding in the checkout total",
                                                                           "/home/dev/shop", "1.1.36", 3)
    assert (b["parent_session_id"], b["call_count"]) == (_OC["A"], 1)  # the explore subagent's session
    assert (c["cwd"], old["cwd"], old["agent_version"], old["call_count"]) == ("/home/dev", "/home/dev/notes",
                                                                              "0.15.8", 2)
    assert a["file"].endswith(f"opencode.db#{_OC['A']}") and old["file"].endswith(f"storage/message/{_OC['L']}")
    assert corpus.issues.num_rows == 0


@pytest.mark.parametrize("directory", ["kept", "blank"])
def test_opencode_s_report_read_gives_its_sessions_as_their_spend_only_reads(directory, tmp_path):
    """``spend_members`` (a report's read of a database's sessions) gives the calls and session facts
    of their spend-only reads, a session without a folder of its own taking its first message's."""
    import shutil
    import sqlite3

    from sessionlab.agents import _opencode_reader as oc
    from sessionlab.agents._spec import reading_spend_only

    db = str(tmp_path / "opencode.db")
    shutil.copy(DATA / "opencode" / "home" / ".local" / "share" / "opencode" / "opencode.db", db)
    if directory == "blank":
        with sqlite3.connect(db) as con:
            con.execute("UPDATE session SET directory = ''")
    sids = [_OC[k] for k in "ABC"]
    got = oc.spend_members(db, sids)
    with reading_spend_only(True):
        files = oc.read_members(db, sids)
    assert got.rows == [r for f in files for r in f.rows] and got.counts == [f.n for f in files]
    facts = [dict(zip(got.sessions, v)) for v in zip(*got.sessions.values())]
    assert facts == [{k: f.session[k] for k in got.sessions} for f in files]
    assert [f["cwd"] for f in facts] == ["/home/dev/shop", "/home/dev/shop", "/home/dev"]  # (blank: the messages')
    assert sum(got.counts) > 3


def test_opencode_s_messages_are_read_by_creation_then_id_in_any_batch(tmp_path):
    import shutil
    import sqlite3

    from sessionlab.agents import _opencode_reader as oc
    from sessionlab.agents._spec import reading_spend_only

    db = str(tmp_path / "opencode.db")
    shutil.copy(DATA / "opencode" / "home" / ".local" / "share" / "opencode" / "opencode.db", db)
    with sqlite3.connect(db) as con:  # (the last message made first; two of session B's made at once)
        con.execute("UPDATE message SET time_created = 1 WHERE id = 'msg_a06'")
        con.execute("UPDATE message SET time_created = 5 WHERE session_id = ?", (_OC["B"],))
        order = {sid: [i for (i,) in con.execute("SELECT id FROM message WHERE session_id = ? ORDER BY "
                                                 "time_created, id", (sid,))] for sid in (_OC["A"], _OC["B"])}
    con.close()
    assert order[_OC["A"]][0] == "msg_a06" and len(order[_OC["B"]]) > 1
    for sids in ([_OC["A"], _OC["B"]], [_OC["B"], _OC["A"]], [_OC["B"]]):
        for spend in (False, True):
            with reading_spend_only(spend):
                files = oc.read_members(db, sids)
            for sid, f in zip(sids, files):
                ids = [i for i in f.column_lists()["entry_id"] if "/" not in i]  # (a tool's result: after)
                assert ids == [i for i in order[sid] if not spend or i in ids] and ids
    got = oc.spend_members(db, [_OC["B"], _OC["A"]])
    calls = [r[got.row_names.index("entry_id")] for r in got.rows][got.counts[0]:]
    assert calls == [i for i in order[_OC["A"]] if i in calls] and calls[0] == "msg_a06"


def test_opencode_calls_tokens_and_costs(monkeypatch):
    e = _load(monkeypatch, "opencode").entries.to_pylist()
    calls = {r["entry_id"]: r for r in e if r["input_tokens"] is not None}
    assert sorted(calls) == ["msg_a02", "msg_a03", "msg_a05", "msg_b02", "msg_c02", "msg_l02", "msg_l03"]
    a03 = calls["msg_a03"]  # output 842 and 120 reasoning, billed as output
    assert (a03["input_tokens"], a03["output_tokens"], a03["reasoning_tokens"], a03["cache_read_tokens"],
            a03["cache_write_tokens"], a03["cost_usd"], a03["cost_source"]) == (3, 962, 120, 18240, 1310, 0.0226062,
                                                                                "recorded")
    codex = calls["msg_a05"]  # a recorded cost of 0: priced
    assert (codex["model"], codex["cost_source"]) == ("gpt-5.1-codex", "priced")
    assert codex["cost_usd"] == pytest.approx(5400 * 1.25e-6 + 20480 * 0.125e-6 + 1840 * 10e-6, rel=1e-6)
    assert calls["msg_c02"]["provider"] == "github-copilot" and calls["msg_c02"]["cost_source"] == "priced"
    aborted = [r for r in e if r["entry_id"] == "msg_a06"]
    assert len(aborted) == 1 and aborted[0]["input_tokens"] is None  # all-zero tokens: no call
    a = [r for r in e if r["session_id"] == _OC["A"]]
    assert [(r["role"], r["tool_name"]) for r in a] == [
        ("user", None), ("assistant", None), ("toolResult", "task"), ("assistant", None), ("toolResult", "edit"),
        ("user", None), ("assistant", None), ("toolResult", "bash"), ("assistant", None)]
    assert all(r["parent_id"] == p["entry_id"] for p, r in zip(a, a[1:]))
    assert str(a[0]["timestamp"]) == "2026-06-02 09:00:00+00:00"


def test_opencode_database_is_opened_read_only_and_sessions_load_by_name(monkeypatch, tmp_path):
    home = use_home(monkeypatch, "opencode")
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    before = (db.read_bytes(), db.stat().st_mtime_ns)
    one = sl.load(f"{db}#{_OC['C']}", cache=False, progress=False)
    assert one.sessions["session_id"].to_pylist() == [_OC["C"]] and one.sessions["agent"].to_pylist() == ["opencode"]
    cached = [sl.load(agents=["opencode"], cache=tmp_path, progress=False, on_bad_lines="skip") for _ in range(2)]
    assert cached[0].entries.equals(cached[1].entries) and cached[0].sessions.num_rows == 4
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert not list(db.parent.glob("opencode.db-*"))  # no journal, no WAL files left beside it


def test_opencode_sessions_in_the_dask_path(monkeypatch):
    pytest.importorskip("dask")
    from sessionlab.dask import load_dask

    store = use_home(monkeypatch, "opencode") / ".local" / "share" / "opencode"
    df = load_dask([f"{store / 'opencode.db'}#{_OC['A']}", str(store / "storage" / "message" / _OC["L"])]).compute()
    assert (len(df), df["session_id"].nunique(), int(df["input_tokens"].sum())) == (13, 2, 5427)


# -- Qwen Code -------------------------------------------------------------------------------------

_QW = {"main": "7d3f0a92-41c8-4e0b-9a55-0c2b7e91d4a6", "branch": "c0ffee11-2b3c-4d5e-8f90-a1b2c3d4e5f6",
       "dots": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9"}


def test_qwen_sessions_tree_calls_and_compaction(monkeypatch):
    corpus = _load(monkeypatch, "qwen")
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert set(s) == set(_QW.values())
    main_s, branch, dots = s[_QW["main"]], s[_QW["branch"]], s[_QW["dots"]]
    assert (main_s["name"], main_s["cwd"], main_s["agent_version"], main_s["call_count"]) == (
        "Empty cart 500", "/home/dev/api-server", "0.15.6", 5)
    assert (branch["parent_session_id"], branch["call_count"]) == (_QW["main"], 1)  # its copies are not calls
    assert (dots["cwd"], dots["call_count"]) == ("/home/dev/dotfiles", 2)  # the aborted c5 is no call
    e = corpus.entries.to_pylist()
    calls = {r["entry_id"]: r for r in e if r["input_tokens"] is not None and r["session_id"] == _QW["main"]}
    a5 = calls["a5"]  # prompt 14690 with 13952 cached
    assert (a5["input_tokens"], a5["cache_read_tokens"], a5["output_tokens"], a5["total_tokens"]) == (738, 13952, 402,
                                                                                                     15092)
    a11 = calls["a11"]  # 611 output tokens, 220 of them reasoning
    assert (a11["model"], a11["output_tokens"], a11["reasoning_tokens"]) == ("qwen3-coder-flash", 611, 220)
    assert calls["a12"]["model"] is None and calls["a12"]["cost_source"] == "unknown"
    main_rows = [r for r in e if r["session_id"] == _QW["main"]]
    kinds = {r["entry_id"]: (r["type"], r["role"], r["side_node"]) for r in main_rows}
    assert kinds["a2"] == ("system", None, True) and kinds["a4"] == ("message", "toolResult", False)
    [comp] = [r for r in main_rows if r["type"] == "compaction"]
    assert (comp["entry_id"], comp["tokens_before"]) == ("a10", 15216)
    assert {r["entry_id"]: r["parent_id"] for r in main_rows}["a11"] == "a10"  # the tree of uuid/parentUuid
    assert sorted(r["tool_name"] for r in main_rows if r["role"] == "toolResult") == ["edit", "read_file"]


# -- Kimi CLI --------------------------------------------------------------------------------------

_KI = {"csv": "0b7c9e4a-2f61-4d8e-b3a5-6c1d2e3f4a5b", "test": "9e8d7c6b-5a4f-4e3d-a2c1-b0f9e8d7c6b5",
       "blog": "4a4a4a4a-1b1b-4c2c-8d3d-5e5e5e5e5e5e"}


def test_kimi_sessions_steps_and_calls(monkeypatch):
    corpus = _load(monkeypatch, "kimi")
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert set(s) == set(_KI.values())
    assert [s[_KI[k]]["cwd"] for k in ("csv", "test", "blog")] == ["/home/dev/invoice-parser",
                                                                    "/home/dev/invoice-parser", "/home/dev/blog"]
    assert [s[_KI[k]]["call_count"] for k in ("csv", "test", "blog")] == [3, 2, 1]
    assert s[_KI["csv"]]["agent_version"] == "wire 1.3"
    e = [r for r in corpus.entries.to_pylist() if r["session_id"] == _KI["csv"]]
    # each step one assistant message: its thinking, text and tool calls, then its usage
    assert [(r["role"], r["tool_call_count"], r["input_tokens"]) for r in e] == [
        ("user", None, None), ("assistant", 1, 2841), ("toolResult", None, None), ("assistant", 1, 154),
        ("toolResult", None, None), ("assistant", 0, 42)]
    assert {r["model"] for r in e if r["role"] == "assistant"} == {"kimi-for-coding"}  # config.toml's default
    assert [r["tool_name"] for r in e if r["role"] == "toolResult"] == ["ReadFile", "StrReplaceFile"]
    blog = [r for r in corpus.entries.to_pylist() if r["session_id"] == _KI["blog"] and r["input_tokens"]]
    assert [(r["input_tokens"], r["cache_read_tokens"], r["cache_write_tokens"], r["output_tokens"]) for r in blog] == [
        (1207, 2048, 1024, 655)]
    test = [r["type"] for r in corpus.entries.to_pylist() if r["session_id"] == _KI["test"]]
    assert test.count("compaction") == 1


def test_kimi_model_from_either_configuration(tmp_path):
    from sessionlab.agents._kimi_reader import configured_model

    (tmp_path / "config.json").write_text(json.dumps({"default_model": "k2", "models": {"k2": {
        "provider": "moonshot", "model": "kimi-k2-turbo-preview", "max_context_size": 262144}}}))
    assert configured_model(str(tmp_path)) == "kimi-k2-turbo-preview"  # before config.toml
    (tmp_path / "config.toml").write_text('default_model = "a"\n[models.a]\nprovider = "p"\nmodel = "kimi-k2.5"\n'
                                          'max_context_size = 1\n')
    assert configured_model(str(tmp_path)) == "kimi-k2.5"
    assert configured_model(str(tmp_path / "none")) is None


# -- Amp -------------------------------------------------------------------------------------------

_AMP = {"resize": "T-3b1f2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "ledger": "T-9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"}


def test_amp_threads_messages_and_the_usage_ledger(monkeypatch):
    corpus = _load(monkeypatch, "amp")
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert set(s) == set(_AMP.values())
    resize, ledger = s[_AMP["resize"]], s[_AMP["ledger"]]
    assert (resize["name"], resize["cwd"], resize["call_count"]) == ("Speed up the image resize job", "/home/dev/media", 5)
    assert (ledger["cwd"], ledger["call_count"]) == ("/home/dev/server", 3)  # two messages and the title's call
    e = corpus.entries.to_pylist()
    r = [x for x in e if x["session_id"] == _AMP["resize"]]
    assert [(x["role"], x["tool_name"]) for x in r][:4] == [("user", None), ("assistant", None),
                                                             ("toolResult", "Read"), ("assistant", None)]
    assert all(x["parent_id"] == p["entry_id"] for p, x in zip(r, r[1:]))
    first = r[1]
    assert (first["input_tokens"], first["cache_write_tokens"], first["output_tokens"], first["model"]) == (
        3, 12890, 148, "claude-sonnet-4-5-20250929")
    assert [x["cost_source"] for x in r if x["input_tokens"] is not None].count("unknown") == 1  # no model
    led = [x for x in e if x["session_id"] == _AMP["ledger"] and x["input_tokens"] is not None]
    # the ledger's events: tokens from the event, the cache counts from the message it produced
    assert [(x["entry_id"], x["input_tokens"], x["cache_read_tokens"], x["model"]) for x in led] == [
        ("1", 3, 0, "claude-sonnet-4-5-20250929"), ("3", 4, 9870, "claude-sonnet-4-5-20250929"),
        ("ledger/evt-03", 412, 0, "claude-haiku-4-5-20251001")]
    assert str(led[0]["timestamp"]) == "2026-02-21 08:00:04.210000+00:00"


def test_kimi_sessions_are_the_wire_files_two_folders_down(tmp_path, monkeypatch):
    """``<work dir>/<session>/wire.jsonl`` is a session; a ``wire.jsonl`` higher or deeper is not."""
    from sessionlab.agents import kimi

    root = tmp_path / "sessions"
    for rel in ("w1/s1/wire.jsonl", "w1/s2/wire.jsonl", "w2/s1/wire.jsonl", "w1/wire.jsonl", "w1/s1/sub/wire.jsonl",
                "wire.jsonl", "w1/s3/other.jsonl"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n")
    (root / "w2" / "s2" / "wire.jsonl").mkdir(parents=True)  # (a folder of that name: no session)
    (root / "w2" / "s3").symlink_to(root / "w1" / "s1")  # (a link to a session folder is not followed)
    assert kimi.files([root]) == [str(root / r) for r in ("w1/s1/wire.jsonl", "w1/s2/wire.jsonl", "w2/s1/wire.jsonl")]


def test_a_token_count_falls_back_to_another_key_only_when_the_first_holds_no_number():
    from sessionlab.agents._chain import count_of
    from sessionlab.agents._gemini_reader import call_usage

    assert count_of({"input": 0, "prompt": 5}, "input", "prompt") == 0  # (a zero is a count)
    assert count_of({"input": "7", "prompt": 5.9}, "input", "prompt") == 5  # (text is none; a fraction cut)
    assert count_of({"prompt": -3}, "input", "prompt") == 0 and count_of([], "input") == 0
    assert count_of({"input": True, "prompt": 2}, "input", "prompt") == 2  # (a boolean is no count)
    assert call_usage({"prompt": 9, "candidates": 2, "reasoning": 1}) == call_usage(
        {"input": 9, "output": 2, "thoughts": 1})

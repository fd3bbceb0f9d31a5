"""Copilot CLI and Goose through the agent seam: each fixture home is read as the agent lays its files
out, and ``sessionlab usage daily|monthly|session --agent X --json`` with that HOME equals ccusage's
reports on it (``tools/ccusage_agents.sh``, committed beside each fixture): tokens equal, costs
within 1%, and every difference stated exactly (docs/ccusage-differences.md).
"""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sessionlab as sl
from sessionlab import agents
from sessionlab.agents import copilot, goose
from tests._agent_fixtures import DATA, compare, use_home

_C = {k: f"4f2a9c1e-7b3d-4e8a-9f10-2c6d8e0a1b0{i}" for i, k in enumerate("abc", 1)}
_G = {k: f"20260514_{i}" for i, k in enumerate("abcdef", 1)}


@pytest.fixture
def home(monkeypatch):
    return lambda agent: use_home(monkeypatch, agent)


# -- Copilot CLI ------------------------------------------------------------------------------------

@pytest.mark.parametrize("report", ["daily", "monthly", "session"])
def test_copilot_reports_equal_ccusage(home, capsys, report):
    """Equal tokens and costs: reasoning tokens are within the output count (not added to it)."""
    home("copilot")
    ours, theirs = compare("copilot", report, capsys)
    assert sum(r["totalTokens"] for r in ours.values()) == 139327
    for k, t in theirs.items():
        assert ours[k]["totalCost"] == pytest.approx(t["totalCost"], rel=1e-9)


def test_copilot_calls_deduplicated_by_trace_and_response(home):
    h = home("copilot")
    corpus = sl.load(agents=["copilot"], cache=False, progress=False)
    assert corpus.issues.num_rows == 0
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert sorted(s) == sorted(_C.values()) and s[_C["a"]]["agent_version"] == "0.0.354"
    e = corpus.entries.to_pylist()
    calls = [r for r in e if r["input_tokens"] is not None]
    by = {}
    for r in calls:
        by.setdefault(r["session_id"], []).append(r)
    # C1: three chat spans; its inference log and its agent span's totals repeat them
    assert [r["entry_id"] for r in by[_C["a"]]] == [f"{'8c1d' * 8}:a100000{i}" for i in (1, 3, 4)]
    first = by[_C["a"]][0]
    assert (first["input_tokens"], first["cache_read_tokens"], first["cache_write_tokens"], first["output_tokens"],
            first["model"], first["cost_source"]) == (24610 - 20480, 20480, 3890, 412, "claude-sonnet-4", "priced")
    assert str(first["timestamp"])[:23] == "2026-05-12 09:15:06.410"  # the span's end
    # C2: inference logs (no chat span in their trace), one without a model: its trace's
    assert [r["entry_id"].split(":")[0] for r in by[_C["b"]]] == ["log", "log", "8c3f" * 8]
    assert {r["model"] for r in by[_C["b"]]} == {"gpt-4.1"}
    assert by[_C["b"]][2]["output_tokens"] == 640  # a total alone: output
    # C3: reasoning counted within output
    assert [(r["output_tokens"], r["reasoning_tokens"]) for r in by[_C["c"]]] == [(2210, 1536), (940, 384)]
    tools = [r for r in e if r["role"] == "toolResult"]
    assert [(t["session_id"], t["tool_name"]) for t in tools] == [(_C["a"], "view")]
    err = [r for r in e if r["is_error"]]
    assert [(r["session_id"], r["error_message"], r["input_tokens"]) for r in err] == [(_C["b"], "rate_limited", None)]
    assert copilot.files([h / ".copilot" / "otel"]) == [
        f"{h}/.copilot/otel/copilot-otel-20260512-091500.jsonl#{_C['a']}",
        f"{h}/.copilot/otel/copilot-otel-20260512-091500.jsonl#{_C['b']}",
        f"{h}/.copilot/otel/copilot-otel-20260602-235900.jsonl#{_C['c']}"]


def test_copilot_exporter_path_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    src = DATA / "copilot" / "home" / ".copilot" / "otel" / "copilot-otel-20260602-235900.jsonl"
    dst = tmp_path / "elsewhere" / "export.jsonl"
    dst.parent.mkdir()
    shutil.copy(src, dst)
    monkeypatch.setenv("COPILOT_OTEL_FILE_EXPORTER_PATH", f" {dst} ")
    assert copilot.roots() == [tmp_path / ".copilot" / "otel", dst]
    assert agents.default_files(["copilot"]) == [f"{dst}#{_C['c']}"]
    assert agents.opener(f"{dst}#{_C['c']}") == "copilot" and agents.opener(str(dst)) is None
    corpus = sl.load(agents=["copilot"], cache=False, progress=False)
    assert corpus.entries["input_tokens"].to_pylist() == [12040, 15880 - 11776]
    assert agents.detect(dst.read_bytes()[:65536], str(dst)) == "copilot"  # a whole export: name a session
    whole = sl.load(str(dst), cache=False, progress=False, on_bad_lines="skip")
    assert whole.issues["kind"].to_pylist() == ["read_error"] and "holds many sessions" in whole.issues[
        "message"][0].as_py()
    assert agents.detect(b'{"type":"session","version":3,"id":"s"}\n', str(dst)) == "pi"



def test_copilot_exports_are_parsed_once_per_load(home, tmp_path, monkeypatch):
    """The listing's parse of each export is what its sessions are read from (not parsed again when
    they are read, however many exports), and it is let go when the load ends."""
    otel = tmp_path / ".copilot" / "otel"
    otel.mkdir(parents=True)
    for k in range(3):  # (six exports: more than a reader keeps parsed)
        for f in sorted((home("copilot") / ".copilot" / "otel").glob("*.jsonl")):
            shutil.copy(f, otel / f"{f.stem}-{k}.jsonl")
    monkeypatch.setenv("HOME", str(tmp_path))
    parsed = []
    real = copilot._parse
    monkeypatch.setattr(copilot, "_parse", lambda *key, **kw: parsed.append(key[0]) or real(*key, **kw))
    corpus = sl.load(agents=["copilot"], cache=False, progress=False, max_workers=1)
    assert corpus.sessions.num_rows == 9
    assert sorted(parsed) == sorted(str(f) for f in otel.glob("*.jsonl"))  # (each once)
    assert copilot._LISTED == {} and copilot._HEADS == {}
    opened = []
    monkeypatch.setattr(copilot, "open", lambda p, *a: opened.append(p) or open(p, *a), raising=False)
    parsed.clear()
    assert sl.load(agents=["copilot"], cache=False, progress=False, max_workers=1).sessions.equals(corpus.sessions)
    assert sorted(opened) == sorted(parsed)  # (each export opened once: the reads tell an export by its parse)

@pytest.mark.parametrize(("value", "count"), [(12, 12), (0, 0), (-1, None), (3.0, 3), (2.5, None), (True, None),
                                               (" 42 ", 42), ("-4", None), ("\u00b2", None), ("\u0663", None),
                                               ("1e3", None), (None, None), ([1], None)])
def test_a_copilot_count_is_a_whole_number_or_its_ascii_digits(value, count):
    # ("²" and "٣" are digits to str.isdigit: the first made int() raise, and the export's read with it)
    assert copilot._num(value) == count


def test_an_export_whose_count_is_no_number_still_loads(tmp_path, monkeypatch):
    otel = tmp_path / ".copilot" / "otel"
    otel.mkdir(parents=True)
    line = ('{"type":"span","traceId":"t1","spanId":"s1","name":"chat gpt-5","endTime":[1780000000,0],'
            '"attributes":{"gen_ai.operation.name":"chat","gen_ai.response.model":"gpt-5",'
            '"gen_ai.conversation.id":"c1","gen_ai.usage.input_tokens":"\u00b2","gen_ai.usage.output_tokens":7}}')
    (otel / "export.jsonl").write_text(line + "\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    corpus = sl.load(agents=["copilot"], cache=False, progress=False, max_workers=1)
    calls = corpus.entries.filter(corpus.entries["input_tokens"].is_valid()).to_pylist()
    assert [(c["session_id"], c["input_tokens"], c["output_tokens"]) for c in calls] == [("c1", 0, 7)]


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 2**70) | st.floats(allow_nan=True)
                     | st.text(max_size=6), lambda kids: st.lists(kids, max_size=3)
                     | st.dictionaries(st.text(max_size=4), kids, max_size=3), max_leaves=6)


def _keys(names):
    return st.dictionaries(st.sampled_from(sorted(names)) | st.text(max_size=5), _JSON, max_size=6)


@st.composite
def _record_lines(draw, broken):
    """An export's lines: records of the keys the reader asks and others, their attributes an object
    or not, missing or named with an escape, a first "attributes" that is no object, NaN (which
    only the stdlib's parse takes), numbers past 64 bits, blank lines; and, when ``broken``, lines
    that are no JSON object."""
    rec = draw(_keys(copilot._RECORD.values()))
    attributes = draw(_keys(copilot._ATTRIBUTES.values()) | _JSON)
    how = draw(st.sampled_from(["key", "key", "escaped", "none"]))
    if how != "none":
        rec["attributes" if how == "key" else "attribut\x00s"] = attributes
    line = json.dumps(rec).replace("\\u0000", "\\u0065")  # (the escaped key: "attribut\u0065s")
    if draw(st.booleans()):
        line = '{"attributes": ' + json.dumps(draw(_JSON)) + ", " + line[1:]
    return draw(st.sampled_from([line, line, "", "  "] + ([line[:-1], "[" + line + "]"] if broken else [])))


@settings(max_examples=300, deadline=None)
@given(st.lists(_record_lines(False), max_size=5) | st.lists(_record_lines(True), max_size=5))
def test_a_copilot_record_is_its_plain_parse_s_keys(tmp_path_factory, lines):
    """An export's records as the typed decode reads them (the whole file at once, else each line
    alone) are the plain parse's values of the keys the reader asks (missing: None; those asked
    whether present: UNSET), a line that is no record skipped, whichever parse takes it."""
    import msgspec

    from sessionlab.agents._chain import loads

    path = tmp_path_factory.mktemp("otel") / "export.jsonl"
    path.write_text("\n".join(lines))
    record = copilot._record_type()[1]
    want = []
    for line in lines:
        try:
            r = loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and isinstance(r.get("attributes"), dict):
            want.append(msgspec.convert(r, record))
            assert (want[-1].start_time is msgspec.UNSET) == ("startTime" not in r)
            assert repr((want[-1].trace_id, want[-1].attributes.input)) == repr(
                (r.get("traceId"), r["attributes"].get("gen_ai.usage.input_tokens")))  # (the keys' names)
    got = copilot._lines(str(path))
    assert repr(got) == repr(want)  # (repr: NaN is no value equal to itself)


_CALLS = st.lists(st.fixed_dictionaries({
    "key": st.text(max_size=4), "resp": st.none() | st.text(max_size=3), "ms": st.integers(0, 4 * 10**12),
    "model": st.sampled_from(["gpt-5", "unknown"]), "tool": st.none() | st.just("view"),
    "error": st.none() | st.just("timeout"),
    "usage": st.none() | st.tuples(*[st.integers(0, 10**6)] * 5)}), max_size=8)


@settings(max_examples=200, deadline=None)
@given(_CALLS)
def test_a_copilot_session_s_spend_rows_are_its_rows_spend_rows(calls):
    from sessionlab.agents._rows import file_rows

    assert copilot._spend_rows(calls) == file_rows([copilot._row(c) for c in calls], True)


def test_the_copilot_fixtures_spend_rows_are_their_rows_spend_rows(home):
    from sessionlab.agents._rows import file_rows

    seen = 0
    for f in sorted((home("copilot") / ".copilot" / "otel").glob("*.jsonl")):
        sids = copilot.store_sessions(str(f))
        for calls in copilot._session_calls(str(f), [s.rpartition("#")[2] for s in sids]):
            assert copilot._spend_rows(calls) == file_rows([copilot._row(c) for c in calls], True)
            seen += sum(c["tool"] is None for c in calls)
    copilot.finish([])
    assert seen == 9  # (the fixture's calls, errors among them)


# -- Goose ------------------------------------------------------------------------------------------

def _goose_cost(key, m):
    """ccusage prices o4-mini at half its list price ($0.55/M input, $2.20/M output); sessionlab at
    the list price ($1.10, $4.40): 22,150 input and 5,230 output tokens (1,830 + 3,400 reasoning)."""
    if m["modelName"] != "o4-mini":
        return None
    assert m["cost"] == pytest.approx((22150 * 0.55 + 5230 * 2.2) / 1e6, rel=1e-9)
    return (22150 * 1.1 + 5230 * 4.4) / 1e6


@pytest.mark.parametrize("report", ["daily", "monthly", "session"])
def test_goose_reports_equal_ccusage(home, capsys, report):
    home("goose")
    ours, theirs = compare("goose", report, capsys, output_extra=lambda r: r["reasoningOutputTokens"],
                            cost_of=_goose_cost, fold={_G["b"]: _G["a"]})
    if report == "session":  # the subagent's session counts in the session that started it
        assert sorted(ours) == [_G["a"], _G["c"], _G["d"], _G["f"]]
    assert sum(r["totalTokens"] for r in ours.values()) == 198500


def test_goose_sessions_messages_and_totals(home):
    h = home("goose")
    db = h / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    before = db.read_bytes()
    corpus = sl.load(agents=["goose"], cache=False, progress=False)
    assert db.read_bytes() == before and not (db.parent / "sessions.db-wal").exists()
    assert corpus.issues.num_rows == 0
    s = {r["session_id"]: r for r in corpus.sessions.to_pylist()}
    assert sorted(s) == sorted(_G.values())
    assert (s[_G["a"]]["name"], s[_G["a"]]["cwd"], s[_G["b"]]["parent_session_id"]) == (
        "Fix the flaky date test", "/home/dev/cal", _G["a"])
    e = corpus.entries.to_pylist()
    totals = {r["session_id"]: r for r in e if r["usage_kind"] == "session_total"}
    assert sorted(totals) == sorted(_G[k] for k in "abcdf")  # no model: no totals
    a = totals[_G["a"]]
    assert (a["input_tokens"], a["output_tokens"], a["cache_read_tokens"], a["cache_write_tokens"], a["provider"],
            a["model"], a["cost_source"]) == (96310, 3120, 0, 0, "anthropic", "claude-sonnet-4-20250514", "priced")
    assert str(a["timestamp"])[:19] == "2026-05-14 08:02:11" and totals[_G["b"]]["root_session_id"] == _G["a"]
    c, d = totals[_G["c"]], totals[_G["d"]]
    assert (c["output_tokens"], c["reasoning_tokens"], str(c["timestamp"])[:19]) == (5230, 3400, "2026-05-14 21:40:05")
    assert (d["input_tokens"], d["output_tokens"]) == (8400, 1200)  # the last request's counts, no running totals
    msgs = [r for r in e if r["session_id"] == _G["a"] and r["type"] == "message"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]
    assert [m["tool_name"] for m in msgs] == [None, "developer__shell", "developer__shell",
                                             "dynamic_task__create_task", "dynamic_task__create_task", None]
    assert [(m["is_error"], m["error_message"]) for m in msgs][4] == (True, "Subagent timed out")
    assert msgs[0]["parent_id"] == f"goose:{_G['a']}" and msgs[1]["parent_id"] == "msg_a1"
    assert set(corpus.sessions["call_count"].to_pylist()) == {0}


def test_goose_path_root_and_times(tmp_path, monkeypatch):
    monkeypatch.setenv("GOOSE_PATH_ROOT", f"{tmp_path} ")
    assert goose.roots() == [tmp_path / "data" / "sessions"]
    (tmp_path / "data" / "sessions").mkdir(parents=True)
    src = DATA / "goose" / "home" / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    shutil.copy(src, tmp_path / "data" / "sessions" / "sessions.db")
    got = agents.default_files(["goose"])
    assert len(got) == 6 and got[0].endswith(f"sessions.db#{_G['a']}")
    assert agents.opener(got[0]) == "goose" and agents.detect(src.read_bytes()[:64], str(src)) == "goose"
    assert [goose.session_time(v) for v in (1778745731, "1778745731000", "2026-05-14 08:02:11", "2026-05-14",
                                           "2026-05-14T10:02:11+02:00", "", "soon")] == [
        "2026-05-14T08:02:11.000Z", "2026-05-14T08:02:11.000Z", "2026-05-14T08:02:11.000Z",
        "2026-05-14T00:00:00.000Z", "2026-05-14T08:02:11.000Z", None, None]


def _two(lo: int, hi: int):
    return st.integers(lo, hi).map(lambda n: f"{n:02d}")


@settings(max_examples=500, deadline=None)
@given(st.tuples(st.sampled_from(["1969", "1970", "1971", "2026", "2099", "2100", "0001"]), _two(0, 13),
                 _two(0, 32), st.sampled_from([" ", "T", "t", "_"]), _two(0, 25), _two(0, 61), _two(0, 61),
                 st.sampled_from(["", "", "", "Z", ".5", "+02:00", " "])))
def test_goose_s_own_time_form_reads_as_the_plain_parse(parts):
    """``YYYY-MM-DD HH:MM:SS`` is read without ``datetime`` (every Goose session has one): the
    same text as :meth:`datetime.fromisoformat` gives it, bad days and hours included."""
    y, mo, d, sep, h, mi, s, tail = parts
    text = f"{y}-{mo}-{d}{sep}{h}:{mi}:{s}{tail}"
    assert goose.session_time(text) == goose._parsed_time(text.strip())


def test_goose_s_own_time_form_is_read_without_datetime(monkeypatch):
    monkeypatch.setattr(goose, "_parsed_time", None)  # (the plain form never reaches it)
    assert goose.session_time("2026-02-28 23:59:59") == "2026-02-28T23:59:59.000Z"
    assert goose.session_time(" 2024-02-29T00:00:00 ") == "2024-02-29T00:00:00.000Z"
    assert goose.session_time("2026-05-14T21:40:05Z") == "2026-05-14T21:40:05.000Z"


def test_a_goose_time_its_offset_moves_out_of_the_calendar_is_none():
    # (a session's read used to fail on it: the store is untrusted input)
    assert goose.session_time("0001-01-01 00:00:00+02:00") is None
    assert goose.session_time("9999-12-31T23:59:59-02:00") is None


def _old_goose_store(folder) -> None:
    """A store of an older schema: no running totals, no parent column, no cost."""
    import sqlite3

    folder.mkdir(parents=True)
    con = sqlite3.connect(folder / "sessions.db")
    con.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, working_dir TEXT NOT NULL, created_at TIMESTAMP,"
        " provider_name TEXT, model_config_json TEXT, input_tokens INTEGER, output_tokens INTEGER,"
        " total_tokens INTEGER);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL,"
        " role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL);")
    con.executemany("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?)", [
        ("s1", "Old one", "/w", "2026-05-01 10:00:00", " openai ", '{"model_name": "gpt-4.1"}', 1200, 300, 1600),
        ("s2", "", "", "2026-05-02 11:00:00", None, '{"model_name": "gpt-4.1"}', 0, 0, None),  # (counts nothing)
        ("s3", "No model", "/w", "2026-05-03 12:00:00", "openai", "{}", 50, 5, 55),
        ("s4", "Text counts", "/w", "2026-05-04 13:00:00", "", '{"model_name": "gpt-4.1"}', "many", 7.0, 80)])
    con.execute("INSERT INTO messages VALUES (1, 'm1', 's1', 'user', '[{\"type\":\"text\",\"text\":\"hi\"}]', 1)")
    con.commit()
    con.close()


def test_an_older_goose_store_reads_the_same_for_a_report_and_in_full(tmp_path, monkeypatch):
    """A usage report reads a store's sessions as tuples of the columns it has (the others null):
    the same totals and session facts as the full read of their rows as dicts."""
    from sessionlab.tables import Corpus, load_files

    _old_goose_store(tmp_path / "data" / "sessions")
    monkeypatch.setenv("GOOSE_PATH_ROOT", str(tmp_path))
    cols = ("session_id", "root_session_id", "type", "timestamp", "model", "provider", "input_tokens",
            "output_tokens", "reasoning_tokens", "total_tokens", "usage_kind", "cost_source", "side_node")
    got = {}
    for spend in (True, False):
        c = Corpus(load_files(None, agents=["goose"], cache=False, on_bad_lines="skip", spend_only=spend).files)
        usage = c.entries.filter(c.entries["usage_kind"].is_valid()).select(cols).to_pylist()
        got[spend] = usage, c.sessions.select(["session_id", "name", "cwd", "parent_session_id"]).to_pylist()
    assert got[True] == got[False]
    usage, sessions = got[True]
    assert [(r["session_id"], r["input_tokens"], r["output_tokens"], r["reasoning_tokens"], r["provider"])
            for r in usage] == [("s1", 1200, 400, 100, "openai"), ("s4", 0, 80, 73, None)]  # ("many": no count)
    assert [(s["name"], s["cwd"]) for s in sessions] == [("Old one", "/w"), (None, None), ("No model", "/w"),
                                                        ("Text counts", "/w")]

"""Real odd files the tables and the CLI must survive: timestamps that are missing, numbers or not
dates; pi's ``--mode json`` event streams (entries without ids); ``custom_message`` entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionlab import contexts, entries_table, issues_table, read_session, sessions_table
from sessionlab.cli import UNKNOWN_DAY, main, summarize_session
from tests._native_cases import assert_paths_agree

HEADER = {"type": "session", "version": 3, "id": "odd-1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
USAGE = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.5}}


def user(eid, parent, ts="2026-01-01T00:00:01.000Z"):
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts,
            "message": {"role": "user", "content": "q", "timestamp": 1767225601000}}


def assistant(eid, parent, **ts):
    e = {"type": "message", "id": eid, "parentId": parent,
         "message": {"role": "assistant", "content": [{"type": "text", "text": "a"}], "api": "x", "provider": "p",
                     "model": "m", "usage": USAGE, "stopReason": "stop", "timestamp": 1767225602000}}
    e.update(ts)
    return e


def write(path: Path, objs) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return path


@pytest.fixture
def odd_times(tmp_path) -> Path:
    """One good call and three whose entry timestamps pi's writer would never produce."""
    return write(tmp_path / "odd.jsonl", [
        HEADER, user("u1", None), assistant("a1", "u1", timestamp="2026-01-01T00:00:02.000Z"),
        user("u2", "a1"), assistant("a2", "u2"),  # no timestamp
        user("u3", "a2"), assistant("a3", "u3", timestamp=1767225600000),  # a number
        user("u4", "a3"), assistant("a4", "u4", timestamp="yesterday"),  # not a date
    ])


def test_bad_timestamps_are_issues(odd_times):
    sf = read_session(odd_times, on_bad_lines="skip")
    assert [(i.line, i.kind) for i in sf.issues] == [(5, "bad_timestamp"), (7, "bad_timestamp"), (9, "bad_timestamp")]
    assert "no timestamp" in sf.issues[0].message and "1767225600000" in sf.issues[1].message
    issues = issues_table(odd_times)
    assert issues.column("kind").to_pylist() == ["bad_timestamp"] * 3
    t = entries_table(odd_times, on_bad_lines="skip")
    assert t.column("timestamp").null_count == 3
    assert sessions_table(odd_times, on_bad_lines="skip").column("issue_count").to_pylist() == [3]


def test_bad_timestamps_paths_agree(odd_times, monkeypatch):
    assert_paths_agree(odd_times, monkeypatch)


def test_summary_prints_an_unknown_day(odd_times, capsys):
    assert main(["summary", str(odd_times)]) == 0
    out = capsys.readouterr().out
    day_rows = out.split("Usage by day (UTC)")[1].splitlines()
    unknown = [r for r in day_rows if r.startswith(UNKNOWN_DAY)]
    known = [r for r in day_rows if r.startswith("2026-01-01")]
    assert len(unknown) == 1 and unknown[0].split()[2] == "3"  # three calls of unknown day
    assert len(known) == 1 and known[0].split()[1] == "1"
    assert main(["summary", "--format", "json", str(odd_times)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["day"]: r["calls"] for r in data["usage"]["day"]} == {"2026-01-01": 1, UNKNOWN_DAY: 3}
    assert data["sessions"][0]["issues"] == 3


def json_mode_stream(path: Path, turns: int = 20) -> Path:
    """What ``pi --mode json`` prints: the session header, then events without ids."""
    u = {"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 1767225601000}
    a = {"role": "assistant", "content": [{"type": "text", "text": "done"}], "api": "x", "provider": "p",
         "model": "m", "usage": USAGE, "stopReason": "stop", "timestamp": 1767225602000}
    events = [HEADER, {"type": "agent_start"}]
    for _ in range(turns):
        events += [{"type": "turn_start"}, {"type": "message_start", "message": u}, {"type": "message_end", "message": u},
                   {"type": "message_start", "message": a}]
        events += [{"type": "message_update", "message": a,
                    "assistantMessageEvent": {"type": "text_delta", "delta": "d", "contentIndex": 0}}] * 5
        events += [{"type": "message_end", "message": a}, {"type": "turn_end", "message": a, "toolResults": []}]
    events.append({"type": "agent_end", "messages": [u, a]})
    return write(path, events)


def test_json_mode_stream_is_named_once_and_has_no_leaves(tmp_path, capsys):
    path = json_mode_stream(tmp_path / "stream.jsonl")
    sf = read_session(path, on_bad_lines="skip")
    assert len(sf.entries) == 2 + 20 * 11 and sf.leaf_id is None
    (issue,) = sf.issues  # once per file, not once per event
    assert issue.kind == "missing_id" and issue.line == 2 and "--mode json" in issue.message
    sessions = sessions_table(path, on_bad_lines="skip")
    assert sessions.column("leaf_count").to_pylist() == [0]
    assert sessions.column("leaf_id").to_pylist() == [None]
    table = entries_table(path, on_bad_lines="skip")
    for at in ("leaves", "entries", "calls"):
        assert contexts(table, at=at).num_rows == 0
    row = summarize_session(path)
    assert row["leaves"] == 0 and row["issues"] == 1
    assert main(["summary", str(path)]) == 0


def test_missing_ids_in_a_session_are_one_issue(tmp_path):
    objs = [HEADER, user("u1", None), assistant("a1", "u1", timestamp="2026-01-01T00:00:02.000Z")]
    objs += [{k: v for k, v in user(None, "a1").items() if k != "id"} for _ in range(3)]
    path = write(tmp_path / "s.jsonl", objs)
    sf = read_session(path, on_bad_lines="skip")
    assert [(i.line, i.kind) for i in sf.issues] == [(4, "missing_id")]
    assert "3 entries" in sf.issues[0].message and "--mode json" not in sf.issues[0].message
    table = entries_table(path, on_bad_lines="skip")
    # the entries without ids are no nodes: a1 is the leaf
    assert contexts(table, at="leaves").column("at_id").to_pylist() == ["a1"]
    assert set(contexts(table, at="entries").column("at_id").to_pylist()) == {"u1", "a1"}
    assert sessions_table(path, on_bad_lines="skip").column("leaf_count").to_pylist() == [1]
    assert summarize_session(path)["leaves"] == 1


def test_custom_message_column(tmp_path, capsys):
    cm = {"type": "custom_message", "id": "c1", "parentId": "u1", "timestamp": "2026-01-01T00:00:03.000Z",
          "customType": "note", "content": "hello", "display": True}
    path = write(tmp_path / "c.jsonl", [HEADER, user("u1", None), cm, dict(cm, id="c2", parentId="c1")])
    assert summarize_session(path)["custom_messages"] == 2
    assert main(["summary", str(path), "--no-usage", "--wide"]) == 0  # (a --wide column)
    lines = capsys.readouterr().out.splitlines()
    head = next(ln for ln in lines if ln.startswith("Session"))
    end = head.index("custom_message") + len("custom_message")  # right-aligned: cells end where it ends
    row = next(ln for ln in lines if ln.startswith(HEADER["id"]))
    total = next(ln for ln in lines if ln.startswith("Total"))
    assert row[:end].split()[-1] == "2" and total[:end].split()[-1] == "2"


# -- one odd name or string must not stop a run (issue 24, cases 7 and 8) --------------------------
SURROGATES = (
    '{"type":"session","version":3,"id":"sur","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p\\ud83d"}\n'
    '{"type":"session_info","id":"n1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","name":"half \\ud83d"}\n'
    '{"type":"message","id":"u1","parentId":"n1","timestamp":"2026-01-01T00:00:01.000Z",'
    '"message":{"role":"user","content":"emoji \\ud83d cut","timestamp":0}}\n'
    '{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant",'
    '"content":[{"type":"text","text":"ok"}],"provider":"anthropic","model":"m","usage":{"input":5,"output":7,'
    '"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"total":0.5}},"stopReason":"stop","timestamp":0}}\n'
)


@pytest.mark.parametrize("native", ["1", "0"])
@pytest.mark.parametrize("where", ["name", "text"])
def test_non_utf8_file_names_and_lone_surrogates_do_not_stop_a_run(tmp_path, capsys, monkeypatch, native, where):
    import os

    monkeypatch.setenv("SESSIONLAB_NATIVE", native)
    src = tmp_path / "src"
    src.mkdir()
    (src / "ok.jsonl").write_text(SURROGATES.replace("\\ud83d", "").replace('"sur"', '"ok"'), encoding="utf-8")
    name = os.fsencode(str(src)) + (b"/bad\xff-\xfe.jsonl" if where == "name" else b"/plain.jsonl")
    text = SURROGATES if where == "text" else SURROGATES.replace("\\ud83d", "")
    with open(name, "w", encoding="utf-8") as fh:
        fh.write(text)
    for argv in (["summary", str(src), "--format", "json"], ["usage", "session", str(src), "--json"],
                 ["report", str(src), "-o", str(tmp_path / "r.html")]):
        assert main([*argv]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        if argv[0] == "summary":
            rows = json.loads(out)["sessions"]
            assert len(rows) == 2 and sum(r["cost"] for r in rows) == 1.0
            odd = next(r for r in rows if r["session_id"] == "sur")
            if where == "name":
                assert odd["file"].endswith("/bad\ufffd-\ufffd.jsonl")
            else:
                assert odd["name"] == "half \ufffd" and odd["cwd"] == "/p\ufffd"


def test_a_repo_session_with_an_undecodable_cwd_is_summarized(tmp_path, capsys):
    from sessionlab import JsonlSessionRepo, UserMessage

    repo = JsonlSessionRepo(tmp_path / "r")
    s = repo.create(cwd="/home/\udcff")
    s.append_message(UserMessage(content="hi", timestamp=0))
    assert main(["summary", str(tmp_path / "r"), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sessions"]
    assert [r["cwd"] for r in rows] == ["/home/\ufffd"]


def test_a_system_message_whose_text_is_a_number_loads(tmp_path):
    """A damaged pi 1.6 file whose system message holds a number where its text goes (found by the
    scanner's fuzz run): every loader path loads it, and the system prompt is the number as
    JavaScript writes it (pi joins the text parts with String())."""
    from sessionlab.pi.model import messages as M
    from sessionlab.pi.model.content import TextContent
    from sessionlab.pi.tokens import current_system_message

    f = tmp_path / "s.jsonl"
    f.write_text('{"type":"session_start","id":"9b2e4c1a-0d3f-4a57-8e61-1f2a3b4c5d02","title":"t"}\n'
                 '{"type":"message","id":"m1","message":{"role":"system","content":[{"type":"text",'
                 '"text":9007199254740993}]}}\n'
                 '{"type":"message","id":"m2","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}\n')
    t = entries_table(f, cache=False, on_bad_lines="skip")
    assert t.num_rows == 3
    system = M.SystemMessage(content=[TextContent(text=9007199254740993)], timestamp=1)  # type: ignore[arg-type]
    merged = current_system_message([system])
    assert merged is not None and merged.content == "9007199254740992"

"""pi's v4 harness files (read-only): reader, contexts at every branch tip, tables.

Expected values are the harness's own (``tests/data/pi/v4/*.context.json``, computed by pi-agent-core
0.99.1's code with ``tools/v4_contexts/contexts.mjs``; see that folder's README). Variants with bad
lines are made in ``tmp_path``.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import sessionlab
from sessionlab import BadInputError, ReadOnlyFormatError, read_session, write_session
from sessionlab.errors import EntryNotFoundError
from sessionlab.pi.context import iso_to_ms
from sessionlab.pi.io import SessionWriter, message_to_dict, parse_session_bytes
from sessionlab.pi.io.v4 import ms_to_iso, sniff_v4
from sessionlab.pi.model import entries as E
from sessionlab.pi.v4_context import v4_path, v4_session_context
from sessionlab.tables import _fast, _load, _native, entries_table, issues_table, sessions_table
from sessionlab.tree import leaves, session_tree

V4 = Path(__file__).parent / "data" / "pi" / "v4"
CASES = sorted(V4.rglob("*.context.json"))
FILES = sorted(V4.rglob("*.jsonl"))
# the file with a compaction, two branches and a list write (see the folder's README)
RICH = next(p for p in FILES if p.name.endswith("000000000003.jsonl"))


def _expected(case: Path) -> tuple[Path, dict]:
    exp = json.loads(case.read_text(encoding="utf-8"))
    return V4 / exp["file"], exp


def _writes(path: Path) -> list[dict]:
    """Every write of a file, read with plain json (the independent reference)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        obj = json.loads(line)
        out.extend(obj if isinstance(obj, list) else [obj])
    return out


def test_data_is_all_there():
    assert len(CASES) == 5 and len(FILES) == 5
    assert {_expected(c)[0] for c in CASES} == set(FILES)


# ---------------------------------------------------------------------------------- reader


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name[:24])
def test_file_facts_equal_the_harness(case):
    path, exp = _expected(case)
    before = path.read_bytes()
    sf = read_session(path, on_bad_lines="raise")
    assert path.read_bytes() == before  # opening never changes the file (as the harness)
    assert sf.issues == [] and sf.version == 4 and sf.dialect == "pi"
    h = exp["header"]
    assert sf.header.version == 4 and sf.header.id == h["id"] and sf.header.cwd == h["cwd"]
    assert iso_to_ms(sf.header.timestamp) == h["createdAt"]
    assert sf.header.extra["storageVersion"] == h["storageVersion"] == 1
    assert sf.name == exp["name"]
    assert sf.labels == exp["labels"]
    assert len(sf.entries) == exp["entryCount"]
    assert dict(Counter(e.type for e in sf.entries)) == exp["entryTypeCounts"]
    assert sf.branch_tips == {b["branch"]: b["tipId"] for b in exp["branches"]}
    assert exp["fileUnchangedByOpen"] is True


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:24])
def test_entries_keep_every_write(path):
    sf = read_session(path, on_bad_lines="raise")
    entry_writes = [w for w in _writes(path) if w["kind"] == "entry"]
    assert [e.id for e in sf.entries] == [w["id"] for w in entry_writes]
    assert [e.parent_id for e in sf.entries] == [w["parentId"] for w in entry_writes]
    assert sf.entry_seqs == [w["seq"] for w in entry_writes]
    assert [iso_to_ms(e.timestamp) for e in sf.entries] == [w["timestamp"] for w in entry_writes]
    for e, w in zip(sf.entries, entry_writes):
        if w["type"] == "message":
            assert message_to_dict(e.message) == w["message"]
        elif w["type"] == "compaction":
            assert isinstance(e, E.CompactionEntry) and e.first_kept_entry_id is None
            assert (e.summary, e.tokens_before) == (w["summary"], w["tokensBefore"])
            assert [message_to_dict(m) for m in e.retained_tail] == w["retainedTail"]
        elif w["type"] == "custom":
            assert isinstance(e, E.CustomEntry) and (e.custom_type, e.data) == (w["customType"], w["data"])
        assert "seq" not in e.extra and "kind" not in e.extra
    assert sf.usage_writes == [w for w in _writes(path) if w["kind"] == "usage"]
    assert sf.list_writes == [w for w in _writes(path) if w["kind"] == "list"]


def test_values_list_writes_and_line_numbers():
    sf = read_session(RICH, on_bad_lines="raise")
    assert sf.list_writes == [{"kind": "list", "op": "append", "seq": 21, "namespace": "demo.list", "key": "k",
                               "value": {"v": 1}}]
    assert sf.values["pi.session.name"] == {"": "Session 3"}
    assert sf.values["pi.branch.tip"] == {"alt": "e0000019", "main": "e000001b"}  # order of the last set
    assert sf.leaf_id == "e000001b"  # main's tip
    # entry i sits on the line of its transaction (line 1 is the header)
    assert sf.line_numbers == [3, 4, 5, 6, 7, 11, 12, 13]


def test_ms_to_iso_is_javascripts_to_iso_string():
    assert ms_to_iso(1768471240000) == "2026-01-15T10:00:40.000Z"
    assert ms_to_iso(1768471240123) == "2026-01-15T10:00:40.123Z"
    assert ms_to_iso(0) == "1970-01-01T00:00:00.000Z"
    assert ms_to_iso(-1) == "1969-12-31T23:59:59.999Z"
    assert ms_to_iso("1768471240000") is None and ms_to_iso(True) is None and ms_to_iso(10**20) is None


def test_sniff_only_takes_v4_headers():
    assert sniff_v4(RICH.read_bytes())
    assert sniff_v4(b'\n  {"kind":"header","version":4,"id":"x"}\n')
    assert not sniff_v4(b'{"type":"session","version":3,"id":"x"}\n')
    assert not sniff_v4(b'{"kind":"header","type":"session"}\n')  # a v3 header with a stray key
    assert not sniff_v4(b"") and not sniff_v4(b"not json\n")


# ---------------------------------------------------------------------------------- contexts


def _branches():
    for case in CASES:
        path, exp = _expected(case)
        for b in exp["branches"]:
            yield pytest.param(path, b, id=f"{path.name[-9:-6]}-{b['branch']}")


@pytest.mark.parametrize(("path", "branch"), list(_branches()))
def test_context_equals_the_harness(path, branch):
    sf = read_session(path, on_bad_lines="raise")
    tip = sf.branch_tips[branch["branch"]]
    assert tip == branch["tipId"]
    path_entries = v4_path(sf, tip)
    assert [e.id for e in path_entries] == branch["pathIds"]
    ctx = v4_session_context(sf, tip)
    assert [message_to_dict(m) for m in ctx.messages] == branch["messages"]
    assert [m.role for m in ctx.messages] == branch["roles"]
    assert len(ctx.messages) == branch["messageCount"]
    assert ctx.thinking_level == "off"
    last_assistant = [m for m in branch["messages"] if m["role"] == "assistant"][-1]
    assert (ctx.model.provider, ctx.model.model_id) == (last_assistant["provider"], last_assistant["model"])
    comps = [i for i, e in enumerate(path_entries) if isinstance(e, E.CompactionEntry)]
    if branch["compaction"] is None:
        assert comps == []
        return
    c = path_entries[comps[-1]]
    tail = list(c.retained_tail)
    assert {"id": c.id, "tokensBefore": c.tokens_before, "retainedTailCount": len(tail),
            "retainedTailInContext": sum(any(m is t for t in tail) for m in ctx.messages),
            "entriesBeforeCompactionDropped": comps[-1]} == branch["compaction"]


def _variant(tmp_path: Path, lines: list[str], name: str = "v.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _rich_lines() -> list[str]:
    return RICH.read_text(encoding="utf-8").splitlines()


def test_context_drops_failed_assistants_inside_and_after_the_retained_tail(tmp_path):
    lines = _rich_lines()
    # line 12: the compaction; its retainedTail's assistant becomes aborted
    comp = json.loads(lines[11])
    comp[0]["retainedTail"][1]["stopReason"] = "aborted"
    lines[11] = json.dumps(comp)
    # after the user message, three assistants on main: error, deferred, then a good one
    msgs = [("e00000a1", "error"), ("e00000a2", "deferred"), ("e00000a3", "stop")]
    parent, seq = "e000001b", 100
    for eid, reason in msgs:
        m = {"role": "assistant", "content": [{"type": "text", "text": reason}], "api": "a", "provider": "p",
             "model": reason, "stopReason": reason, "timestamp": 1}
        lines.append(json.dumps([{"kind": "entry", "id": eid, "parentId": parent, "type": "message", "message": m,
                                  "seq": seq, "timestamp": 2},
                                 {"kind": "value", "op": "set", "seq": seq + 1, "namespace": "pi.branch.tip",
                                  "key": "main", "value": eid}]))
        parent, seq = eid, seq + 2
    sf = read_session(_variant(tmp_path, lines), on_bad_lines="raise")
    ctx = v4_session_context(sf, sf.branch_tips["main"])
    texts = [m.content[0].text for m in ctx.messages[1:]]
    assert texts == ["kept user", "after compaction", "stop"]
    assert ctx.model.model_id == "stop"


def test_context_branch_summaries_and_custom_projectors(tmp_path):
    lines = _rich_lines()[:3]  # header, empty main, first user message (e0000014)
    entries = [("b1", "e0000014", ""), ("b2", "b1", "left a branch")]
    for i, (eid, parent, summary) in enumerate(entries):
        lines.append(json.dumps({"kind": "entry", "id": eid, "parentId": parent, "type": "branch_summary",
                                 "fromId": "e0000014", "summary": summary, "seq": 10 + i, "timestamp": 5000}))
    lines.append(json.dumps({"kind": "entry", "id": "c1", "parentId": "b2", "type": "custom", "customType": "t",
                             "data": 7, "seq": 20, "timestamp": 6000}))
    sf = read_session(_variant(tmp_path, lines), on_bad_lines="raise")
    ctx = v4_session_context(sf, "c1")
    assert [m.role for m in ctx.messages] == ["user", "branchSummary"]
    assert message_to_dict(ctx.messages[1]) == {"role": "branchSummary", "summary": "left a branch",
                                                "fromId": "e0000014", "timestamp": 5000}
    opts = sessionlab.SessionContextBuildOptions(entry_projectors={
        "t": lambda e, i, es: [sessionlab.UserMessage(content=f"data {e.data}")]})
    assert [m.role for m in v4_session_context(sf, "c1", options=opts).messages] == ["user", "branchSummary", "user"]
    assert v4_session_context(sf, None).messages == []
    with pytest.raises(EntryNotFoundError):
        v4_session_context(sf, "nope")


# ---------------------------------------------------------------------------------- bad input


def test_torn_last_line_is_reported_and_the_file_left_alone(tmp_path):
    whole = RICH.read_bytes()
    last_tx = whole.rstrip(b"\n").rsplit(b"\n", 1)[0] + b"\n"  # without the list write
    torn = last_tx + b'[{"kind":"entry","id":"e0000099","parentId":"e000001b","type":"mess'
    p = tmp_path / "torn.jsonl"
    p.write_bytes(torn)
    sf = read_session(p, on_bad_lines="skip")
    assert p.read_bytes() == torn
    assert [(i.line, i.kind) for i in sf.issues] == [(len(last_tx.splitlines()) + 1, "truncated_last_line")]
    assert [e.id for e in sf.entries] == [e.id for e in read_session(RICH).entries]
    assert sf.list_writes == [] and sf.branch_tips["main"] == "e000001b"
    with pytest.raises(BadInputError, match="truncated_last_line"):
        read_session(p, on_bad_lines="raise")
    # a complete transaction without its newline never committed either: the harness drops it
    p.write_bytes(whole.rstrip(b"\n"))
    sf = read_session(p, on_bad_lines="skip")
    assert [(i.line, i.kind) for i in sf.issues] == [(14, "truncated_last_line")] and sf.list_writes == []
    assert p.read_bytes() == whole.rstrip(b"\n")


def test_invalid_lines_are_line_numbered_and_every_valid_write_loads(tmp_path):
    lines = _rich_lines()
    lines[3] = lines[3][:40] + "}}}"  # e0000015 and its tip write: not JSON
    lines[8] = '{"kind":"value","op":"set","seq":13,"namespace":"pi.entry.label","key":"e0000015","value":"x"} xyz'
    lines.insert(9, '[1, {"kind":"mystery","seq":13.5}]')
    lines.append('{"kind":"usage","seq":2,"id":"u1","usage":{"input":1}}')  # seq goes backwards
    sf = read_session(_variant(tmp_path, lines), on_bad_lines="skip")
    issues = [(i.line, i.kind) for i in sf.issues]
    assert issues == [(4, "invalid_json"), (5, "dangling_parent"), (9, "invalid_json"), (10, "not_an_object"),
                      (10, "bad_seq"), (10, "unknown_write"), (16, "bad_seq")]
    ids = [e.id for e in read_session(RICH).entries]
    assert [e.id for e in sf.entries] == [i for i in ids if i != "e0000015"]
    assert sf.labels == {"e0000015": "x"}  # recovered from the line with trailing garbage
    assert sf.usage_writes == [{"kind": "usage", "seq": 2, "id": "u1", "usage": {"input": 1}}]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        read_session(tmp_path / "v.jsonl")
    assert len(w) == 1 and "invalid_json" in str(w[0].message)


def test_value_deletes_and_null_tips(tmp_path):
    lines = _rich_lines()
    lines.append('{"kind":"value","op":"delete","seq":30,"namespace":"pi.entry.label","key":"e0000015"}')
    lines.append('{"kind":"value","op":"set","seq":31,"namespace":"pi.branch.tip","key":"main","value":null}')
    lines.append('{"kind":"value","op":"set","seq":32,"namespace":"pi.session.name","key":"","value":""}')
    sf = read_session(_variant(tmp_path, lines), on_bad_lines="raise")
    assert sf.labels == {} and sf.branch_tips == {"alt": "e0000019"} and sf.name == ""
    assert sf.leaf_id == "e0000019"  # no main tip: the tip set last
    row = sessions_table(tmp_path / "v.jsonl").to_pylist()[0]
    assert (row["leaf_id"], row["leaf_count"], row["name"]) == ("e0000019", 1, None)


def test_the_084_header_gets_unsupported_version(tmp_path):
    lines = _rich_lines()
    lines[0] = '{"kind":"header","version":4,"id":"s-084","timestamp":"2026-01-15T10:00:37.000Z","cwd":"/x"}'
    p = _variant(tmp_path, lines)
    sf = read_session(p, on_bad_lines="skip")
    assert [(i.line, i.kind) for i in sf.issues] == [(1, "unsupported_version")]
    assert "0.84" in sf.issues[0].message and "nothing loaded" in sf.issues[0].message
    assert sf.header is None and sf.entries == [] and sf.version == 4
    issues = issues_table(p).to_pylist()
    assert [(r["line"], r["kind"]) for r in issues] == [(1, "unsupported_version")]
    row = sessions_table(p, on_bad_lines="skip").to_pylist()[0]
    assert (row["session_id"], row["version"], row["entry_count"], row["issue_count"]) == (None, 4, 0, 1)


def test_v4_is_read_only(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(RICH.read_bytes())
    sf = read_session(p)
    with pytest.raises(ReadOnlyFormatError, match="v4") as exc:
        write_session(sf, p)
    assert isinstance(exc.value, ValueError)
    with pytest.raises(ReadOnlyFormatError):
        write_session(sf, tmp_path / "other.jsonl", dialect="seed")
    with pytest.raises(ReadOnlyFormatError):
        SessionWriter(p)
    assert p.read_bytes() == RICH.read_bytes() and not (tmp_path / "other.jsonl").exists()
    assert sorted(f.name for f in tmp_path.iterdir()) == ["s.jsonl"]  # no temporary file left


def test_parse_session_bytes_dispatches_on_the_header():
    data = RICH.read_bytes()
    assert parse_session_bytes(data).version == 4
    assert parse_session_bytes(b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")).entries[-1].id == "e000001b"


def test_open_session_sees_the_tips_labels_and_name_and_cannot_append(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(RICH.read_bytes())
    s = sessionlab.open_session(p, on_bad_lines="raise")
    assert s.get_leaf_id() == "e000001b" and s.get_session_name() == "Session 3"
    assert s.get_label("e0000015") == "first-call" and s.get_label("e0000014") is None
    assert [e.id for e in s.get_branch()] == [e.id for e in v4_path(read_session(p), "e000001b")]
    with pytest.raises(ReadOnlyFormatError):
        s.append_message(sessionlab.UserMessage(content="more"))
    with pytest.raises(ReadOnlyFormatError):
        s.move_to("e0000014")
    assert p.read_bytes() == RICH.read_bytes() and s.get_leaf_id() == "e000001b"


# ---------------------------------------------------------------------------------- tables


def test_scanner_and_msgspec_path_refuse_v4_headers():
    data = RICH.read_bytes()
    with pytest.raises(_fast.Refused):
        _fast.fast_columns(data, want_blocks=False)
    header_only = data.split(b"\n", 1)[0] + b"\n"
    with pytest.raises(_fast.Refused):
        _fast.fast_columns(header_only, want_blocks=False)
    if _native._scan is not None:
        sc = _native._scan.Scanner(False)
        assert isinstance(sc.add(data), str) and isinstance(sc.add(header_only), str)
    res = _load.load_files(FILES, on_bad_lines="raise")
    assert [r.fast for r in res.files] == [False] * len(FILES)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name[:24])
@pytest.mark.parametrize("native", ["1", "0"])
def test_sessions_and_entries_tables(case, native, monkeypatch):
    monkeypatch.setenv("SESSIONLAB_NATIVE", native)
    path, exp = _expected(case)
    row = sessions_table(path, on_bad_lines="raise").to_pylist()[0]
    tips = {b["branch"]: b["tipId"] for b in exp["branches"]}
    assert row["version"] == 4 and row["session_id"] == exp["header"]["id"] and row["cwd"] == exp["header"]["cwd"]
    assert row["header_timestamp"].timestamp() * 1000 == exp["header"]["createdAt"]
    assert row["name"] == exp["name"]
    assert row["leaf_id"] == tips["main"]
    assert row["leaf_count"] == len(set(tips.values()))
    assert row["entry_count"] == exp["entryCount"]
    assert row["message_count"] == exp["entryTypeCounts"].get("message", 0)
    assert row["compaction_count"] == exp["entryTypeCounts"].get("compaction", 0)
    assert row["issue_count"] == 0
    writes = [w for w in _writes(path) if w["kind"] == "entry"]
    t = entries_table(path, on_bad_lines="raise")
    assert t.column("entry_id").to_pylist() == [w["id"] for w in writes]
    assert t.column("type").to_pylist() == [w["type"] for w in writes]
    assert pc.cast(t.column("timestamp"), pa.int64()).to_pylist() == [w["timestamp"] for w in writes]
    usage = [w["message"].get("usage") for w in writes if w["type"] == "message"]
    costs = [u["cost"]["total"] for u in usage if u]
    assert row["cost_usd"] == pytest.approx(sum(costs))
    comps = [w for w in writes if w["type"] == "compaction"]
    got = t.filter(pc.equal(t.column("type"), "compaction")).to_pylist()
    # the tail columns count what the harness sends: failed assistants in the tail are left out
    assert [r["tokens_before"] for r in got] == [w["tokensBefore"] for w in comps]
    assert [b["compaction"]["retainedTailInContext"] for b in exp["branches"] if b["compaction"]] == [
        r["retained_tail_messages"] for r in got]


def test_tree_of_a_v4_file_has_every_entry_and_tip():
    for case in CASES:
        path, exp = _expected(case)
        g = session_tree(entries_table(path))
        assert g.number_of_nodes() == exp["entryCount"]
        tips = {b["tipId"] for b in exp["branches"]}
        assert tips <= set(leaves(g))
        for b in exp["branches"]:  # each tip's path is the tree's path to it
            ids = b["pathIds"]
            assert all(g.has_edge(a, c) for a, c in zip(ids, ids[1:]))

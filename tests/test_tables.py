"""entries/sessions/blocks/issues tables against the object model and a per-line computation."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import warnings

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from sessionlab import BadInputError, BadLinesWarning, read_session
from sessionlab.tables import (
    ENTRY_SCHEMA,
    _fast,
    _load,
    _native,
    blocks_df,
    blocks_table,
    entries_df,
    entries_table,
    issues_table,
    sessions_df,
    sessions_table,
)
from sessionlab.tables._schema import ENTRY_COLUMNS
from tests._tables_ref import DATA, SAMPLES, line_rows, object_rows

CLEAN_V3 = [p for p in SAMPLES if "synthetic" not in p.parts and "real" not in p.parts]


def _rows(table):
    d = table.to_pydict()
    d["timestamp_ms"] = pc.cast(table.column("timestamp"), pa.int64()).to_pylist()
    d["system_json"] = [None if v is None else json.loads(v) for v in d["system_json"]]
    return [dict(zip(d, vals)) for vals in zip(*d.values())]


def _check(actual, expected, path):
    assert len(actual) == len(expected), path
    for a, e in zip(actual, expected):
        for k, v in e.items():
            assert a[k] == v, (path, e["entry_id"], k, a[k], v)
        for k in ENTRY_COLUMNS:  # columns the reference leaves out are null
            if k.name not in e and k.name not in ("file", "timestamp"):
                assert a[k.name] is None, (path, e["entry_id"], k.name, a[k.name])


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:40])
def test_entries_equal_object_model(path):
    _, expected = object_rows(path)
    table = entries_table(path, on_bad_lines="skip")
    assert table.schema == ENTRY_SCHEMA
    _check(_rows(table), expected, path)


@pytest.mark.parametrize("path", CLEAN_V3, ids=lambda p: p.name[:40])
def test_entries_equal_per_line_json(path):
    expected = line_rows(path)
    rows = _rows(entries_table(path, on_bad_lines="skip"))
    assert len(rows) == len(expected)
    for a, e in zip(rows, expected):
        assert {k: a[k] for k in e} == e


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:40])
def test_fast_paths_equal_tolerant_path(path, monkeypatch):
    """The native scanner, the msgspec path and the object-model path give the same tables."""
    native = entries_table(path, on_bad_lines="skip"), blocks_table(path, on_bad_lines="skip")
    monkeypatch.setenv("SESSIONLAB_NATIVE", "0")
    fast = entries_table(path, on_bad_lines="skip"), blocks_table(path, on_bad_lines="skip")

    def refuse(*a, **k):
        raise _fast.Refused("test")

    monkeypatch.setattr("sessionlab.tables._file.fast_columns", refuse)
    tolerant = entries_table(path, on_bad_lines="skip"), blocks_table(path, on_bad_lines="skip")
    for a, b, c in zip(native, fast, tolerant):
        assert a.equals(c)
        assert b.equals(c)


def test_clean_v3_files_take_the_fast_path():
    res = _load.load_files(CLEAN_V3, on_bad_lines="skip")
    fast = {r.path: r.fast for r in res.files}
    assert sum(fast.values()) >= len(CLEAN_V3) - 1  # sample G has an orphan (dangling parent)


# pi 1.6.0's own results (the tables follow its rules: user images count, system messages are estimated)
@pytest.mark.parametrize("exp_path", sorted((DATA / "expected-1.6").glob("*__*.json")), ids=lambda p: p.name[:40])
def test_sessions_match_pi_expected(exp_path):
    exp = json.loads(exp_path.read_text())
    src = DATA / exp["file"]
    s = sessions_table(src, on_bad_lines="skip").to_pylist()
    t = entries_table(src, on_bad_lines="skip")
    if not exp["valid"]:
        assert s[0]["session_id"] is None
        assert "missing_header" in issues_table(src).column("kind").to_pylist()
        return
    (row,) = s
    assert row["entry_count"] == exp["entryCount"] == t.num_rows
    assert row["leaf_id"] == exp["defaultLeafId"]
    assert row["leaf_count"] == len(exp["leafIds"])
    assert row["session_id"] == exp["header"]["id"]
    assert row["name"] == exp["sessionName"]  # pi 1.6.0's rule: the latest session_info, empty clears it
    counts = dict(zip(*[c.to_pylist() for c in t.column("type").value_counts().flatten()]))
    assert counts == exp["entryTypeCounts"]
    # per-message estimates: on every branch without a compaction or a context_edit, the context is the
    # branch's message, custom_message and non-empty branch_summary entries, and their est_tokens are pi's
    rows = {r["entry_id"]: r for r in t.to_pylist()}
    checked = 0
    for leaf in exp["leaves"]:
        branch = [rows[i] for i in leaf["branchIds"]]
        if any(r["type"] in ("compaction", "context_edit") for r in branch):
            continue
        est = [r["est_tokens"] for r in branch if r["type"] in ("message", "custom_message")
               or (r["type"] == "branch_summary" and r["summary_chars"])]
        assert est == leaf["perMessageEstimatedTokens"]
        checked += 1
    assert checked or any(r["type"] == "compaction" for r in rows.values())


def test_session_totals_equal_object_model():
    for path in SAMPLES:
        sf, rows = object_rows(path)
        (s,) = sessions_table(path, on_bad_lines="skip").to_pylist()
        assert s["entry_count"] == len(rows)
        assert s["input_tokens"] == sum(r.get("input_tokens") or 0 for r in rows)
        assert s["total_tokens"] == sum(r.get("context_tokens") or 0 for r in rows)
        assert math.isclose(s["cost_usd"] or 0, sum(r.get("cost_usd") or 0 for r in rows))
        assert s["compaction_count"] == sum(r["type"] == "compaction" for r in rows)
        assert s["leaf_id"] == sf.leaf_id
        assert s["version"] == sf.version
        assert s["issue_count"] == len(sf.issues)


def test_blocks_sum_to_est_tokens():
    b = blocks_table(DATA, on_bad_lines="skip")
    t = entries_table(DATA, on_bad_lines="skip")
    sums = b.group_by(["session_id", "entry_id"]).aggregate([("chars", "sum")]).to_pylist()
    by = {(r["session_id"], r["entry_id"]): r["chars_sum"] for r in sums}
    n = 0
    for r in t.to_pylist():
        if r["role"] in ("user", "assistant", "toolResult") or r["type"] == "custom_message":
            assert math.ceil(by.get((r["session_id"], r["entry_id"]), 0) / 4) == r["est_tokens"], r["entry_id"]
            n += 1
    assert n > 2000
    calls = b.filter(pc.equal(b["block_type"], "toolCall"))
    assert calls.num_rows == pc.sum(t["tool_call_count"]).as_py()


@pytest.mark.parametrize("native", ["1", "0"])
def test_astral_text_floats_and_odd_arguments(tmp_path, monkeypatch, native):
    monkeypatch.setenv("SESSIONLAB_NATIVE", native)
    # UTF-16 lengths (astral characters count 2), tool arguments that are not JSON.stringify's text
    # (floats, spaces, escapes, duplicate keys), images, string vs list content, unknown roles
    msgs = [
        {"role": "user", "content": "emoji 😀😀 and 𝄞", "timestamp": 1},
        {"role": "user", "content": [{"type": "text", "text": "é😀"}, {"type": "image", "data": "x", "mimeType": "i"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "🤔" * 3},
                                          {"type": "toolCall", "id": "c1", "name": "edit", "arguments": {"a": 1.0, "b": 1e21, "c": 1e-7}},
                                          {"type": "toolCall", "id": "c2", "name": "w", "arguments": {"t": "😀\n\"q\"", "n": [1, {"x": None}]}},
                                          {"type": "toolCall", "id": "c3", "name": "n"},
                                          {"type": "toolCall", "id": "c4", "name": "z", "arguments": None}],
         "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0}}, "stopReason": "toolUse"},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "edit", "content": [{"type": "image", "data": "x"}], "isError": True},
        {"role": "bashExecution", "command": "ls 😀", "output": "a\u2028b"},
        {"role": "hookMessage", "content": "x" * 40},
        {"role": "custom", "customType": "k", "content": [{"type": "text", "text": "abc"}]},
    ]
    lines = [json.dumps({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"},
                        separators=(",", ":"))]
    prev = None
    for i, m in enumerate(msgs):
        eid = f"{i + 1:08x}"
        lines.append(json.dumps({"type": "message", "id": eid, "parentId": prev,
                                 "timestamp": f"2026-01-01T00:00:{i:02d}.000Z", "message": m},
                                ensure_ascii=False, separators=(",", ":")))
        prev = eid
    # non-canonical raw argument text written by hand (spaces, escapes, duplicate key)
    odd = ('{"type":"message","id":"000000aa","parentId":"' + prev + '","timestamp":"2026-01-01T00:01:00.000Z",'
           '"message":{"role":"assistant","content":[{"type":"toolCall","id":"c9","name":"x",'
           '"arguments":{"p": "\\u00e9\\/", "p": 2}}]}}')
    lines.append(odd)
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _load.load_files(f).files[0].fast
    _, expected = object_rows(f)
    _check(_rows(entries_table(f)), expected, f)
    assert [r["est_tokens"] for r in expected][:2] == [math.ceil(17 / 4), math.ceil((3 + 4800) / 4)]  # pi 1.6: user images


@pytest.mark.parametrize("native", ["1", "0"])
def test_null_tool_arguments_count_zero(tmp_path, monkeypatch, native):
    """``arguments: null`` counts 0 characters (the object model's None), also when every other
    argument in the file is canonical JSON (the msgspec path's one-batch shortcut)."""
    monkeypatch.setenv("SESSIONLAB_NATIVE", native)
    content = [{"type": "toolCall", "id": "c1", "name": "ab", "arguments": None},
               {"type": "toolCall", "id": "c2", "name": "cd", "arguments": {"k": [1, "v"]}}]
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"},
             {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "assistant", "content": content}}]
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), encoding="utf-8")
    assert _load.load_files(f).files[0].fast
    chars = 2 + 2 + len('{"k":[1,"v"]}')  # names, then only the second call's arguments
    assert entries_table(f).column("est_tokens").to_pylist() == [math.ceil(chars / 4)]
    assert blocks_table(f).column("chars").to_pylist() == [2, 2 + len('{"k":[1,"v"]}')]
    assert [r["est_tokens"] for r in object_rows(f)[1]] == [math.ceil(chars / 4)]


def test_damaged_files_warn_raise_skip(tmp_path):
    bad = DATA / "generated" / "synthetic" / "synthetic-v3-malformed.jsonl"
    with pytest.warns(BadLinesWarning, match="invalid_json"):
        t = entries_table(bad)
    assert t.num_rows == len(read_session(bad, on_bad_lines="skip").entries)
    with pytest.raises(BadInputError):
        entries_table(bad, on_bad_lines="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        entries_table(bad, on_bad_lines="skip")
    iss = issues_table(bad).to_pylist()
    assert [(i["line"], i["kind"]) for i in iss] == [(i.line, i.kind) for i in read_session(bad, on_bad_lines="skip").issues]


def test_a_failing_file_does_not_stop_the_others(tmp_path, monkeypatch):
    good = CLEAN_V3[0]
    shutil.copy(good, tmp_path / "a.jsonl")
    (tmp_path / "b.jsonl").write_bytes(b"\xff\xfe garbage")
    (tmp_path / "c.jsonl").mkdir()  # not a file: skipped by the folder search
    t = entries_table(tmp_path, on_bad_lines="skip")
    assert t.num_rows == len(read_session(good).entries)
    monkeypatch.setattr("sessionlab.tables._file.parse_session_bytes", lambda *a, **k: 1 / 0)
    iss = issues_table(tmp_path).to_pylist()
    assert any(i["kind"] == "read_error" and i["file"].endswith("b.jsonl") for i in iss)


@pytest.mark.parametrize("native", ["1", "0"])  # a thread pool with the native scanner, else processes
def test_pool_gives_the_same_table(monkeypatch, native):
    monkeypatch.setenv("SESSIONLAB_NATIVE", native)
    serial = entries_table(DATA, on_bad_lines="skip", max_workers=1)
    monkeypatch.setattr(_load, "_SERIAL_BYTES", 0)
    monkeypatch.setattr(_load, "_CHUNK_BYTES", (200_000, 200_000))
    pooled = entries_table(DATA, on_bad_lines="skip", max_workers=2)
    assert pooled.equals(serial)


def test_sources_globs_lists_and_default_dir(tmp_path, monkeypatch):
    gen = DATA / "generated" / "sessions"
    n = entries_table(gen, on_bad_lines="skip").num_rows
    assert entries_table(str(gen / "**" / "*.jsonl"), on_bad_lines="skip").num_rows == n
    files = sorted(gen.rglob("*.jsonl"))
    assert entries_table([files[0], gen], on_bad_lines="skip").num_rows == n  # deduplicated
    agent = tmp_path / "agent"
    shutil.copytree(gen, agent / "sessions")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    assert entries_table(on_bad_lines="skip").num_rows == n
    with pytest.raises(FileNotFoundError):
        entries_table(tmp_path / "nope")


def test_columns_and_pandas_views():
    gen = DATA / "generated" / "sessions"
    t = entries_table(gen, columns=["session_id", "entry_id", "est_tokens"], on_bad_lines="skip")
    assert t.column_names == ["session_id", "entry_id", "est_tokens"]
    df = entries_df(gen, on_bad_lines="skip")
    assert all(isinstance(d, pd.ArrowDtype) for d in df.dtypes)
    assert str(df["timestamp"].dtype) == "timestamp[ms, tz=UTC][pyarrow]"
    assert len(sessions_df(gen, on_bad_lines="skip")) == 7
    assert len(blocks_df(gen, on_bad_lines="skip")) > 0


def test_docstrings_list_every_column():
    from sessionlab.tables._schema import BLOCK_COLUMNS, ISSUE_COLUMNS, SESSION_COLUMNS
    for fn, cols in [(entries_table, ENTRY_COLUMNS), (sessions_table, SESSION_COLUMNS),
                     (blocks_table, BLOCK_COLUMNS), (issues_table, ISSUE_COLUMNS)]:
        for c in cols:
            assert f"{c.name} ({c.type})" in fn.__doc__


def test_core_does_not_import_notebook_modules():
    code = ("import sys; sys.modules.update({m: None for m in ('matplotlib', 'ipywidgets', 'IPython')});"
            "import sessionlab.tables, sessionlab.tree")
    assert os.system(f'"{sys.executable}" -c "{code}"') == 0


def test_native_loading_does_not_import_pandas():
    """pandas costs ~0.3 s to import and only the *_df views need it. pa.array and pa.scalar import
    it, so the native path builds its arrays from buffers (the fallback paths do import it)."""
    clean = [str(p) for p in CLEAN_V3 if isinstance(_native._scan.Scanner().add(p.read_bytes()), tuple)]
    assert len(clean) >= 5
    code = ("import sys; from sessionlab.tables import _native, entries_table, blocks_table;"
            "assert _native.native_available();"
            f"[f({clean!r}) for f in (entries_table, blocks_table)];"
            "assert 'pandas' not in sys.modules, 'pandas imported'")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]


def test_generated_corpus_if_available(tmp_path):
    synth = pytest.importorskip("sessionlab.synth")
    paths = synth.generate_corpus(tmp_path, n_sessions=6, target_bytes=1_500_000, seed=1)
    t = entries_table(tmp_path, on_bad_lines="skip")
    exp = [r for p in sorted(map(str, paths)) for r in object_rows(p)[1]]
    assert t.num_rows == len(exp)
    for a, e in zip(_rows(t), exp):
        for k, v in e.items():
            assert a[k] == v, (e["entry_id"], k)


def test_a_first_table_imports_only_the_loader():
    """``import sessionlab`` then a table of files the C scanner takes: no analysis, compaction,
    plotting or widget module, no Claude Code / Codex reader, no Parquet, and not the object model
    or the slower loader paths built on it (each is imported when first used)."""
    clean = [str(p) for p in CLEAN_V3 if isinstance(_native._scan.Scanner().add(p.read_bytes()), tuple)][:3]
    code = ("import sys, sessionlab; sessionlab.entries_table(" + repr(clean) + ");"
            "bad = [m for m in ('sessionlab.analysis', 'sessionlab.compaction', 'sessionlab.plotting',"
            " 'sessionlab.widgets', 'sessionlab.synth', 'sessionlab.agents._claude_reader', 'sessionlab.agents._codex_reader',"
            " 'pyarrow.parquet', 'pandas', 'sessionlab.pi.model', 'sessionlab.pi.context', 'sessionlab.pi.tokens',"
            " 'sessionlab.pi.io.reader', 'sessionlab.pi.io.dialects', 'sessionlab.tables._fast',"
            " 'sessionlab.tables._objects', 'msgspec', 'multiprocessing') if m in sys.modules];"
            "assert not bad, bad")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    code = "import sessionlab; assert callable(sessionlab.to_parquet) and callable(sessionlab.contexts)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).returncode == 0

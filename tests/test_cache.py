"""The loaders' append-aware cache: reloads equal fresh loads, read only what changed, never serve
stale rows, and survive a process killed mid-write."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab.cli import main as cli_main
from sessionlab.tables import _cache, _cache_grow, load_files, refresh

ROOT = Path(__file__).parent.parent


def fresh(src):
    res = load_files(src, on_bad_lines="skip", cache=False)
    return (sl.entries_table(src, on_bad_lines="skip", cache=False),
            sl.sessions_table(src, on_bad_lines="skip", cache=False), [i for r in res.files for i in r.issues])


def cached(src, cache):
    res = load_files(src, on_bad_lines="skip", cache=cache)
    return (sl.entries_table(src, on_bad_lines="skip", cache=cache),
            sl.sessions_table(src, on_bad_lines="skip", cache=cache), [i for r in res.files for i in r.issues]), res


def assert_same(src, cache):
    (e, s, i), res = cached(src, cache)
    fe, fs, fi = fresh(src)
    assert e.equals(fe)
    assert s.equals(fs)
    assert i == fi
    return res


@pytest.fixture
def corpus(tmp_path):
    src = tmp_path / "sessions"
    shutil.copytree(ROOT / "data" / "sessions", src)
    shutil.copytree(ROOT / "tests" / "data" / "pi" / "generated", src / "samples")  # bad lines, v1/v2, seed...
    return src


def pi_lines(n_turns: int = 12) -> list[bytes]:
    """A clean pi v3 session, written by hand: the header, a model change, then turns of a user
    message and an assistant reply with usage, one turn branching off an earlier one."""
    def line(obj: dict) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode() + b"\n"

    ts = "2026-01-05T10:00:{:02d}.000Z"
    out = [line({"type": "session", "version": 3, "id": "s-cache-test", "timestamp": ts.format(0), "cwd": "/p"}),
           line({"type": "model_change", "id": "m0", "parentId": None, "timestamp": ts.format(0),
                 "provider": "anthropic", "modelId": "claude-sonnet-4-5"})]
    parent = "m0"
    for t in range(n_turns):
        if t == n_turns // 2:
            parent = "a2"  # a branch from an earlier reply
        user = {"role": "user", "content": f"step {t}: " + "word " * 30, "timestamp": 0}
        out.append(line({"type": "message", "id": f"u{t}", "parentId": parent, "timestamp": ts.format(t),
                         "message": user}))
        reply = {"role": "assistant", "content": [{"type": "text", "text": "done " * 20}],
                 "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                 "usage": {"input": 10 + t, "output": 40, "cacheRead": 100 * t, "cacheWrite": 5, "totalTokens": 155 + 101 * t,
                           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.001 * t}},
                 "stopReason": "stop", "timestamp": 0}
        out.append(line({"type": "message", "id": f"a{t}", "parentId": f"u{t}", "timestamp": ts.format(t),
                         "message": reply}))
        parent = f"a{t}"
        if t == 3:
            out.append(line({"type": "session_info", "id": "n0", "parentId": parent, "timestamp": ts.format(t),
                             "name": "cache test"}))
            parent = "n0"
    return out


@pytest.fixture
def session_lines():
    return pi_lines()


def test_reload_equals_fresh_and_reads_the_cache(corpus, tmp_path):
    cache = tmp_path / "cache"
    first = assert_same(corpus, cache)
    assert first.changes.added and not first.changes.unchanged  # (several loads ran: all added once)
    assert len(list((cache / "entries-v1").glob("*.arrow"))) == 1
    again = load_files(corpus, on_bad_lines="skip", cache=cache)
    assert again.changes.unchanged == [r.path for r in again.files] and not again.changes.changed
    assert again.files[0].entries.num_rows > 0


def test_unchanged_files_are_not_parsed(corpus, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    load_files(corpus, on_bad_lines="skip", cache=cache)

    def boom(*a, **k):
        raise AssertionError("parsed a file the cache holds")

    monkeypatch.setattr("sessionlab.tables._load._iter_results", boom)
    assert_same_cached_only = load_files(corpus, on_bad_lines="skip", cache=cache)
    assert not assert_same_cached_only.changes.changed


def test_appended_lines_are_parsed_alone(tmp_path, session_lines, monkeypatch):
    src = tmp_path / "s"
    src.mkdir()
    f = src / "a.jsonl"
    cut = len(session_lines) // 2
    f.write_bytes(b"".join(session_lines[:cut]))
    cache = tmp_path / "cache"
    assert_same(src, cache)
    with open(f, "ab") as fh:
        fh.write(b"".join(session_lines[cut:]))
    parsed = []
    real = _cache_grow._load_bytes

    def spy(path, data):
        parsed.append(data)
        return real(path, data)

    monkeypatch.setattr(_cache_grow, "_load_bytes", spy)
    res = assert_same(src, cache)
    assert res.changes.appended == [str(f)]
    # parsed: the header, a one-line stand-in for each old parent the new lines name, the new lines
    new_lines = b"".join(session_lines[cut:])
    old_ids = {json.loads(x).get("id") for x in session_lines[1:cut]}
    old_parents = {json.loads(x)["parentId"] for x in session_lines[cut:]} & old_ids
    assert len(old_parents) == 2  # the last old entry, and the branch point
    assert len(parsed) == 1 and parsed[0].startswith(session_lines[0]) and parsed[0].endswith(new_lines)
    assert parsed[0].count(b"\n") == 1 + len(old_parents) + len(session_lines) - cut
    # the name and leaf come from the new lines; the leaf count is the whole file's
    s = sl.sessions_table(src, cache=False).to_pylist()[0]
    assert s["leaf_id"] == json.loads(session_lines[-1])["id"] and s["name"] == "cache test"
    assert s["entry_count"] == len(session_lines) - 1


@pytest.mark.parametrize("change", ["truncate", "rewrite", "duplicate_id", "bad_line", "torn", "replace",
                                    "compaction"])
def test_other_changes_rescan_the_file(tmp_path, session_lines, change):
    src = tmp_path / "s"
    src.mkdir()
    f = src / "a.jsonl"
    cut = len(session_lines) - 3
    f.write_bytes(b"".join(session_lines[:cut]))
    cache = tmp_path / "cache"
    assert_same(src, cache)
    if change == "truncate":
        f.write_bytes(b"".join(session_lines[:cut - 2]))
    elif change == "rewrite":
        f.write_bytes(b"".join(session_lines[:cut]).replace(b'"role":"user"', b'"role":"User"', 1))
    elif change == "duplicate_id":
        with open(f, "ab") as fh:
            fh.write(session_lines[3])
    elif change == "bad_line":
        with open(f, "ab") as fh:
            fh.write(b"{not json\n" + session_lines[cut])
    elif change == "torn":
        with open(f, "ab") as fh:
            fh.write(session_lines[cut][:20])
    elif change == "compaction":  # a row that may need other lines: the whole file is read again
        last = json.loads(session_lines[cut - 1])
        comp = {"type": "compaction", "id": "c0mp0001", "parentId": last["id"], "timestamp": last["timestamp"],
                "summary": "earlier work", "firstKeptEntryId": last["id"], "tokensBefore": 1000}
        with open(f, "ab") as fh:
            fh.write(json.dumps(comp).encode() + b"\n")
    else:
        f.unlink()
        f.write_bytes(b"".join(session_lines[:cut + 1]))
    res = assert_same(src, cache)
    assert res.changes.changed
    if change != "replace":  # (a replacement may reuse the inode and only add lines: that is an append)
        assert res.changes.rewritten == [str(f)]


def test_torn_last_line_completed_later(tmp_path, session_lines):
    src = tmp_path / "s"
    src.mkdir()
    f = src / "a.jsonl"
    cut = len(session_lines) - 3
    f.write_bytes(b"".join(session_lines[:cut]) + session_lines[cut][:25])
    cache = tmp_path / "cache"
    assert_same(src, cache)  # with a truncated_last_line issue
    with open(f, "ab") as fh:
        fh.write(session_lines[cut][25:])
    # the cached rows came from the tolerant path (the file had an issue): read whole once
    assert assert_same(src, cache).changes.rewritten == [str(f)]
    with open(f, "ab") as fh:
        fh.write(b"".join(session_lines[cut + 1:]))
    assert assert_same(src, cache).changes.appended == [str(f)]


def test_same_size_rewrite_within_the_mtime_tick_is_not_served(tmp_path, session_lines):
    # a rewrite that keeps size, mtime and the first and last KB: only the whole-file hash of a
    # recently modified ("racy") file tells
    src = tmp_path / "s"
    src.mkdir()
    f = src / "a.jsonl"
    data = b"".join(session_lines)
    f.write_bytes(data)
    st = f.stat()
    cache = tmp_path / "cache"
    assert_same(src, cache)
    mid = data.index(b'"role":"user"', len(data) // 3)
    f.write_bytes(data[:mid] + b'"role":"User"' + data[mid + 13:])
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size
    res = assert_same(src, cache)
    assert res.changes.rewritten == [str(f)]


def test_new_and_removed_files_and_refresh(corpus, tmp_path, session_lines):
    cache = tmp_path / "cache"
    first = load_files(corpus, on_bad_lines="skip", cache=cache)
    gone = first.files[0].path
    os.unlink(gone)
    added = corpus / "zz" / "new.jsonl"
    added.parent.mkdir()
    added.write_bytes(b"".join(session_lines[:5]))
    grown = first.files[-1].path
    later = refresh(first)
    assert later.changes.removed == [gone] and later.changes.added == [str(added)]
    assert later.changes.appended == [] and later.changes.rewritten == []
    with open(added, "ab") as fh:
        fh.write(b"".join(session_lines[5:]))
    latest = refresh(later)
    assert latest.changes.appended == [str(added)] and len(latest.changes.unchanged) == len(later.files) - 1
    assert not refresh(latest).changes.changed
    assert_same(corpus, cache)
    # without a cache, refresh compares the files' size, mtime and inode
    a = load_files(corpus, on_bad_lines="skip", cache=False)
    with open(grown, "ab") as fh:
        fh.write(b"\n")
    assert refresh(a).changes.appended == [grown]


def test_a_file_changed_while_it_is_read_is_a_change_to_the_next_refresh(corpus, monkeypatch):
    """Without a cache a file's key is its stat as listed, before its read: a line written while the
    load reads it is not taken as read already."""
    from sessionlab.tables import _load

    grown = load_files(corpus, on_bad_lines="skip", cache=False).files[-1].path
    real = _load.load_chunk

    def load_then_append(paths, want_blocks=False, spend_only=False, **options):
        out = real(paths, want_blocks, spend_only, **options)
        if grown in paths:
            with open(grown, "ab") as fh:  # (after its read, within the load)
                fh.write(b"\n")
        return out

    monkeypatch.setattr(_load, "load_chunk", load_then_append)
    first = load_files(corpus, on_bad_lines="skip", cache=False, max_workers=1)
    monkeypatch.setattr(_load, "load_chunk", real)
    assert refresh(first).changes.appended == [grown]


def test_killed_mid_write_leaves_a_usable_cache(corpus, tmp_path):
    cache = tmp_path / "cache"
    assert_same(corpus, cache)
    manifest = next((cache / "entries-v1").glob("*.json"))
    before = manifest.read_bytes()
    f = next(corpus.rglob("*.jsonl"))
    with open(f, "ab") as fh:
        fh.write(b"\n")  # a change, so the next load writes the cache again
    flag = tmp_path / "writing"
    code = f"""
import sys, time
import os
from sessionlab.tables import load_files
def stuck(fd):  # the segment's bytes are in its temporary file, not yet synced nor renamed
    open({str(flag)!r}, "w").close()
    time.sleep(60)
os.fsync = stuck
load_files({str(corpus)!r}, on_bad_lines="skip", cache={str(cache)!r})
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        for _ in range(600):
            if flag.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert flag.exists(), "the writer never started"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert manifest.read_bytes() == before  # the old cache is in force, whole
    assert list((cache / "entries-v1").glob("*.tmp-*"))  # the torn temporary file was never renamed
    assert load_files(corpus, on_bad_lines="skip", cache=cache).changes.appended == [str(f)]
    assert not list((cache / "entries-v1").glob("*.tmp-*"))  # its process is gone: removed at once
    assert_same(corpus, cache)


def test_segments_stay_few(tmp_path, session_lines):
    # a reload with a change writes one small segment with the changed files' rows; a segment no
    # file uses any more is deleted; past the limit everything is packed into one again
    src = tmp_path / "s"
    src.mkdir()
    k = next(i for i in range(len(session_lines)) if len(b"".join(session_lines[:i])) > 1024)  # (past the first KB)
    files = [src / f"{i}.jsonl" for i in range(10)]
    for f in files:
        f.write_bytes(b"".join(session_lines[:k]))
    cache = tmp_path / "cache"
    load_files(src, on_bad_lines="skip", cache=cache)
    counts = []
    for f in files:
        with open(f, "ab") as fh:
            fh.write(session_lines[k])
        assert load_files(src, on_bad_lines="skip", cache=cache).changes.appended == [str(f)]
        counts.append(len(list((cache / "entries-v1").glob("*.arrow"))))
    assert counts[:3] == [2, 3, 4]
    assert max(counts) == _cache._MAX_SEGMENTS and 1 in counts
    assert_same(src, cache)


def test_unreadable_cache_file_is_ignored(corpus, tmp_path):
    cache = tmp_path / "cache"
    assert_same(corpus, cache)
    segment = next((cache / "entries-v1").glob("*.arrow"))
    segment.write_bytes(segment.read_bytes()[:500])
    with pytest.warns(sl.CacheWarning, match="does not match its checksum"):
        assert_same(corpus, cache)
    manifest = next((cache / "entries-v1").glob("*.json"))
    manifest.write_text("{not json")
    with pytest.warns(sl.CacheWarning, match="manifest"):
        assert_same(corpus, cache)
    manifest.write_bytes(b"")  # zero-length (a crash before its data reached the disk)
    with pytest.warns(sl.CacheWarning, match="manifest"):
        assert_same(corpus, cache)
    assert_same(corpus, cache)  # written again, whole


def test_default_folder_and_options(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", str(tmp_path / "c"))
    assert _cache.resolve_cache(None) == tmp_path / "c" == _cache.resolve_cache(True)
    sl.entries_table(ROOT / "data" / "sessions")
    assert list((tmp_path / "c" / "entries-v1").glob("*.arrow"))
    assert _cache.cache_size() > 0
    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", "")
    assert _cache.resolve_cache(None) is None
    monkeypatch.delenv("SESSIONLAB_CACHE_DIR")
    import platformdirs

    assert _cache.resolve_cache(None) == Path(platformdirs.user_cache_dir("sessionlab"))
    assert _cache.resolve_cache(False) is None
    with pytest.raises(TypeError, match="cache must be"):
        sl.entries_table(ROOT / "data" / "sessions", cache=3)


def test_blocks_loads_are_not_cached(tmp_path):
    sl.blocks_table(ROOT / "data" / "sessions")
    res = load_files(ROOT / "data" / "sessions", want_blocks=True, cache=tmp_path / "c")
    assert res.changes is None and not (tmp_path / "c").exists()


def test_cli_cache_clear(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", str(tmp_path / "c"))
    sl.entries_table(ROOT / "data" / "sessions")
    sl.entries_table(ROOT / "data" / "pi")
    assert cli_main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert "removed 4 files" in out and str(tmp_path / "c") in out  # a manifest and a segment per source
    assert not list((tmp_path / "c" / "entries-v1").iterdir())
    assert cli_main(["cache", "clear"]) == 0
    assert "removed 0 files" in capsys.readouterr().out


def test_cached_loads_do_not_import_pandas(tmp_path):
    # the native loader avoids pandas (~0.3 s to import); writing and reading the cache must too
    src = tmp_path / "s"
    src.mkdir()
    (src / "a.jsonl").write_bytes(b"".join(pi_lines()))
    code = ("import sys; from sessionlab.tables import entries_table;"
            f"[entries_table({str(src)!r}, cache=False if c == 'off' else c) for c in sys.argv[1:]];"
            "assert 'pandas' not in sys.modules, 'pandas imported'")
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def run(*caches: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code, *caches], capture_output=True, text=True, env=env)

    if run("off").returncode != 0:  # the loader alone
        pytest.skip("this build's loader imports pandas without the cache (no C scanner?)")
    out = run(str(tmp_path / "c"), str(tmp_path / "c"))  # writes the cache, then reads it
    assert out.returncode == 0, out.stderr[-2000:]
    assert list((tmp_path / "c" / "entries-v1").glob("*.json"))


def test_appending_to_a_cached_file_does_not_import_pandas(tmp_path):
    # the append path (a grown pi file's new lines parsed alone) keeps to the loader's buffers too
    src = tmp_path / "s"
    src.mkdir()
    lines = pi_lines()
    (src / "a.jsonl").write_bytes(b"".join(lines[:-2]))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    first = "from sessionlab.tables import entries_table; import sys; entries_table(sys.argv[1], cache=sys.argv[2])"
    assert subprocess.run([sys.executable, "-c", first, str(src), str(tmp_path / "c")], env=env).returncode == 0
    with open(src / "a.jsonl", "ab") as fh:
        fh.write(b"".join(lines[-2:]))
    code = ("import sys; from sessionlab.tables import load_files;"
            "r = load_files(sys.argv[1], cache=sys.argv[2]);"
            "assert r.changes.appended, r.changes;"
            "assert 'pandas' not in sys.modules, 'pandas imported'")
    out = subprocess.run([sys.executable, "-c", code, str(src), str(tmp_path / "c")], capture_output=True,
                         text=True, env=env)
    if "native" in out.stderr.lower() and out.returncode:
        pytest.skip("no C scanner")
    assert out.returncode == 0, out.stderr[-2000:]

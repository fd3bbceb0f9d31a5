"""The cache under damage and hostile folders: it never serves wrong rows, never crashes, never
touches a file it did not write, and leaves no temporary file behind.

Each load of a damaged cache runs in a child process (damage used to crash pyarrow), and is
compared with a fresh load of the same files."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from sessionlab.cli import main as cli_main
from sessionlab.errors import CacheError, CacheWarning
from sessionlab.tables import _cache, clear_cache, load_files
from tests.test_cache import assert_same, pi_lines

ROOT = Path(__file__).parent.parent

# a child process: load through the cache, group as the summary does, and say whether the result
# equals a fresh load and whether the cache warned
_CHILD = """
import json, sys, warnings
import sessionlab as sl
from sessionlab.errors import CacheWarning
src, cache = sys.argv[1], sys.argv[2]
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    e = sl.entries_table(src, on_bad_lines="skip", cache=cache)
    s = sl.sessions_table(src, on_bad_lines="skip", cache=cache)
u = sl.usage_by(e, by=["day", "model"])
fe = sl.entries_table(src, on_bad_lines="skip", cache=False)
fs = sl.sessions_table(src, on_bad_lines="skip", cache=False)
print(json.dumps({"same": e.equals(fe) and s.equals(fs), "usage": u.equals(sl.usage_by(fe, by=["day", "model"])),
                  "warned": any(issubclass(x.category, CacheWarning) for x in w)}))
"""


def child_load(src: Path, cache: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SESSIONLAB_CACHE_DIR", None)
    p = subprocess.run([sys.executable, "-c", _CHILD, str(src), str(cache)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture
def src(tmp_path):
    d = tmp_path / "sessions"
    shutil.copytree(ROOT / "data" / "sessions", d)
    return d


def filled(src: Path, tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    load_files(src, on_bad_lines="skip", cache=cache)
    return cache


def segment_of(cache: Path) -> Path:
    return next((cache / "entries-v1").glob("*.arrow"))


def manifest_of(cache: Path) -> Path:
    return next((cache / "entries-v1").glob("*.json"))


# -- 2. clear never follows a symlink, removes only the cache's own files --------------------------
def test_clear_refuses_a_symlinked_cache_folder_and_keeps_the_target(tmp_path):
    precious = tmp_path / "thesis"
    precious.mkdir()
    (precious / "notes.txt").write_text("notes")
    (precious / "thesis.tex").write_text("tex")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "entries-v1").symlink_to(precious, target_is_directory=True)
    with pytest.raises(CacheError, match="symlink"):
        clear_cache(cache)
    assert sorted(p.name for p in precious.iterdir()) == ["notes.txt", "thesis.tex"]


def test_clear_removes_only_files_the_cache_wrote(src, tmp_path):
    cache = filled(src, tmp_path)
    d = cache / "entries-v1"
    (d / "notes.txt").write_text("mine")
    outside = tmp_path / "outside.arrow"
    outside.write_text("x")
    (d / ("0" * 32 + "-" + "1" * 12 + ".arrow")).symlink_to(outside)  # a cache-like name, but a symlink
    where, n, size = clear_cache(cache)
    assert n == 2 and size > 0  # a manifest and a segment
    assert sorted(p.name for p in d.iterdir()) == ["0" * 32 + "-" + "1" * 12 + ".arrow", "notes.txt"]
    assert outside.read_text() == "x"


def test_cli_clear_on_a_read_only_folder_fails(src, tmp_path, monkeypatch, capsys):
    cache = filled(src, tmp_path)
    monkeypatch.setenv("SESSIONLAB_CACHE_DIR", str(cache))
    d = cache / "entries-v1"

    def refuse(*a, **k):  # what a read-only folder answers (root ignores the folder's mode)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "unlink", refuse)
    monkeypatch.setattr(os, "remove", refuse)
    monkeypatch.setattr(Path, "unlink", refuse)
    assert cli_main(["cache", "clear"]) == 1
    err = capsys.readouterr().err
    assert "could not remove 2 files" in err and "Permission denied" in err
    monkeypatch.undo()
    assert len(list(d.iterdir())) == 2


# -- 4. a killed writer's temporary files go at the next write --------------------------------------
def test_temporary_files_of_dead_processes_are_removed_at_once(src, tmp_path):
    cache = filled(src, tmp_path)
    d = cache / "entries-v1"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    torn = d / f"{segment_of(cache).name}.tmp-{dead}-0badf00d"
    torn.write_bytes(b"ARROW1" + b"x" * 100_000)
    alive = d / f"{segment_of(cache).name}.tmp-{os.getpid()}-0badf00d"  # a write in progress: kept
    alive.write_bytes(b"ARROW1")
    load_files(src, on_bad_lines="skip", cache=cache)  # (nothing changed: nothing written)
    assert not torn.exists() and alive.exists()


# -- 5. damaged segments and manifests: equal to a fresh load or a warning and a fresh read ----------
@pytest.mark.parametrize("seed", range(8))
def test_flipped_bytes_in_a_segment_are_never_served(src, tmp_path, seed):
    cache = filled(src, tmp_path)
    seg = segment_of(cache)
    data = bytearray(seg.read_bytes())
    rng = random.Random(seed)
    for _ in range(4):
        data[rng.randrange(len(data))] = rng.randrange(256)
    seg.write_bytes(bytes(data))
    got = child_load(src, cache)
    assert got["same"] and got["usage"], got
    assert got["warned"]
    assert child_load(src, cache) == {"same": True, "usage": True, "warned": False}  # repaired


@pytest.mark.parametrize("block", [0, 1, 3, -1])
def test_a_zeroed_block_in_a_segment_is_never_served(src, tmp_path, block):
    cache = filled(src, tmp_path)
    seg = segment_of(cache)
    data = bytearray(seg.read_bytes())
    blocks = [b for b in range(len(data) // 4096) if any(data[b * 4096:(b + 1) * 4096])]  # (zeros over zeros
    start = blocks[block] * 4096                                                           # would be no damage)
    data[start:start + 4096] = bytes(min(4096, len(data) - start))
    seg.write_bytes(bytes(data))
    got = child_load(src, cache)
    assert got == {"same": True, "usage": True, "warned": True}


def _rewrite_manifest(path: Path, change) -> None:
    """Apply ``change`` to the manifest's JSON and write it back with a checksum that matches."""
    data = path.read_bytes()
    head, body = _cache.split_manifest(data) if hasattr(_cache, "split_manifest") else (None, data)
    meta = json.loads(body)
    change(meta)
    path.write_bytes(_cache.seal_manifest(json.dumps(meta).encode()) if head is not None else json.dumps(meta).encode())


@pytest.mark.parametrize("change", [
    lambda m: m["files"][0].pop("segment"),
    lambda m: m["files"][0].update(batch=7),
    lambda m: m["files"][0].update(offset=10**9),
    lambda m: m["files"][0].update(rows=-3),
    lambda m: m["files"][0].update(issues=[[1]]),
    lambda m: m["files"][0].update(session="x"),
    lambda m: m.update(files={"a": 1}),
    lambda m: m.update(segments=[3]),
    lambda m: m["files"].append(m["files"][0]),
    # found by the cache fuzz target's first long run:
    lambda m: m["files"][0].update(rows=m["files"][0]["rows"] - 1),
    lambda m: m["files"][0].update(rows=0),
    lambda m: m["files"][0].update(session={"a": 1}),
    lambda m: m["files"][0].update(segment=["x"]),
    lambda m: m["files"][0].update(segment={"a": 1}),
], ids=["no-segment", "batch", "offset", "rows", "issue-row", "session", "files-dict", "segments", "twice",
        "fewer-rows", "no-rows", "other-session", "segment-list", "segment-dict"])
def test_a_manifest_with_bad_fields_is_never_used(src, tmp_path, change):
    cache = filled(src, tmp_path)
    _rewrite_manifest(manifest_of(cache), change)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert_same(src, cache)
    assert any(issubclass(x.category, CacheWarning) for x in w)
    assert_same(src, cache)  # and the next load finds a good cache again


def test_an_unsealed_manifest_is_not_used(src, tmp_path):
    cache = filled(src, tmp_path)
    m = manifest_of(cache)
    data = bytearray(m.read_bytes())
    i = data.index(b'"rows":') + 7
    data[i:i + 1] = b"9" if data[i:i + 1] != b"9" else b"8"  # a row count changed, still valid JSON
    m.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert_same(src, cache)
    assert any(issubclass(x.category, CacheWarning) for x in w)


# -- 6. a changed middle is never taken for an append or for no change -----------------------------
@pytest.fixture
def one_file(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    f = d / "a.jsonl"
    f.write_bytes(b"".join(pi_lines(40)))
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns - 10_000_000_000))  # settled: no whole-file hash kept
    return d, f


def _edit_middle(f: Path) -> None:
    data = bytearray(f.read_bytes())
    i = data.index(b'"output":40', len(data) // 2)
    data[i:i + 11] = b'"output":99'  # same length, far from the first and last KB
    st = f.stat()
    f.write_bytes(bytes(data))
    return st


def test_middle_edit_then_append_is_not_an_append(one_file, tmp_path):
    src, f = one_file
    cache = tmp_path / "cache"
    assert_same(src, cache)
    _edit_middle(f)
    with open(f, "ab") as fh:
        fh.write(b"".join(pi_lines(41)[len(pi_lines(40)):]))  # a turn after the last one
    res = assert_same(src, cache)
    assert res.changes.rewritten == [str(f)]


def test_same_size_middle_edit_with_mtime_restored_is_seen(one_file, tmp_path):
    src, f = one_file
    cache = tmp_path / "cache"
    assert_same(src, cache)
    settled = f.stat()
    _edit_middle(f)
    os.utime(f, ns=(settled.st_atime_ns, settled.st_mtime_ns))  # touch -r
    assert f.stat().st_size == settled.st_size
    res = assert_same(src, cache)
    assert res.changes.rewritten == [str(f)]


def test_a_touched_but_unchanged_file_is_still_served_from_the_cache(one_file, tmp_path):
    src, f = one_file
    cache = tmp_path / "cache"
    assert_same(src, cache)
    os.utime(f, None)
    res = assert_same(src, cache)
    assert res.changes.unchanged == [str(f)]


# -- what held, and stays held ------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["missing", "a_file", "file_as_subfolder"])
def test_a_missing_or_non_folder_cache_never_stops_a_load(src, tmp_path, where):
    cache = tmp_path / "cache"
    if where == "a_file":
        cache.write_text("not a folder")
    elif where == "file_as_subfolder":
        cache.mkdir()
        (cache / "entries-v1").write_text("not a folder")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert_same(src, cache)
        assert_same(src, cache)
    if where == "missing":
        assert not w and len(list((cache / "entries-v1").glob("*.arrow"))) == 1
    else:  # not used (a warning says why), and not cleared
        assert w and all(issubclass(x.category, CacheWarning) and "not a folder" in str(x.message) for x in w)
        with pytest.raises(CacheError, match="not a folder"):
            clear_cache(cache)


def test_zero_length_segment_is_read_afresh(src, tmp_path):
    cache = filled(src, tmp_path)
    segment_of(cache).write_bytes(b"")
    with pytest.warns(CacheWarning):
        assert_same(src, cache)
    assert_same(src, cache)


_APPENDER = """
import json, sys, time
from sessionlab.io.writer import SessionWriter
path, stop = sys.argv[1], time.time() + float(sys.argv[2])
last = json.loads(open(path, "rb").read().rstrip(b"\\n").rsplit(b"\\n", 1)[-1])["id"]
with SessionWriter(path) as w:
    i = 0
    while time.time() < stop:
        eid = f"x{i:06d}"
        w.append_line(json.dumps({"type": "message", "id": eid, "parentId": last, "timestamp":
                      "2026-01-05T10:00:00.000Z", "message": {"role": "user", "content": "more " * 20,
                      "timestamp": 0}}, separators=(",", ":")))
        last, i = eid, i + 1
        time.sleep(0.002)
"""


def test_two_loaders_on_one_cache_while_a_third_process_appends(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    d = tmp_path / "s"
    d.mkdir()
    f = d / "a.jsonl"
    f.write_bytes(b"".join(pi_lines(30)))
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", _APPENDER, str(f), "4"], env=env)

    def loads(_):
        done = []
        while proc.poll() is None:
            e = load_files(d, on_bad_lines="skip", cache=cache).files[0].entries
            done.append(e)
        return done

    try:
        with ThreadPoolExecutor(2) as ex:
            results = [e for part in ex.map(loads, range(2)) for e in part]
    finally:
        proc.wait(30)
    data = f.read_bytes()
    assert len(results) >= 10
    for e in results:  # each cached load equals a fresh load of the lines it saw
        n = e["line_no"].to_pylist()[-1]
        prefix = tmp_path / "prefix" / "a.jsonl"
        prefix.parent.mkdir(exist_ok=True)
        prefix.write_bytes(b"".join(data.splitlines(keepends=True)[:n]))
        fresh = load_files(prefix.parent, on_bad_lines="skip", cache=False).files[0].entries
        assert e.drop_columns(["file"]).equals(fresh.drop_columns(["file"]))


def test_a_read_only_cache_folder_only_costs_speed(src, tmp_path, monkeypatch):
    cache = filled(src, tmp_path)
    f = next(src.rglob("*.jsonl"))
    with open(f, "ab") as fh:
        fh.write(b"\n")  # a change, so the load writes

    def refuse(*a, **k):  # what a read-only folder answers (root ignores the folder's mode)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("sessionlab.tables._cache.atomic_write", refuse)
    before = sorted(p.name for p in (cache / "entries-v1").iterdir())
    assert_same(src, cache)
    assert sorted(p.name for p in (cache / "entries-v1").iterdir()) == before

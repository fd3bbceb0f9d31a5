"""Claude Code and Codex files load to the same tables whichever way the loader runs: in this
process, or in worker processes (chosen when most files are other agents' than pi's: their
readers hold the GIL), with pi files mixed in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab.tables import _load

ROOT = Path(__file__).parent.parent


@pytest.fixture
def mixed(tmp_path):
    src = tmp_path / "mixed"
    shutil.copytree(ROOT / "tests" / "data" / "claude" / "generated", src / "claude")
    shutil.copytree(ROOT / "tests" / "data" / "codex" / "generated", src / "codex")
    shutil.copytree(ROOT / "data" / "pi", src / "pi")
    return src


def test_worker_processes_equal_one_process(mixed, monkeypatch):
    paths = _load.find_files(mixed)
    assert _load._mostly_agents(paths)
    serial = sl.entries_table(mixed, cache=False, max_workers=1, on_bad_lines="skip")
    seen = []
    real = _load._before_fork
    monkeypatch.setattr(_load, "_before_fork", lambda **kw: (seen.append(True), real(**kw))[1])
    monkeypatch.setattr(_load, "_SERIAL_BYTES", 0)
    monkeypatch.setattr(_load, "_CHUNK_BYTES", (1, 200_000))  # several chunks, two workers
    pooled = sl.entries_table(mixed, cache=False, max_workers=2, on_bad_lines="skip")
    assert seen == [True], "the agents' files went to worker processes"
    assert pooled.equals(serial)
    assert set(pooled["agent"].to_pylist()) == {"pi", "claude-code", "codex"}


def test_mostly_pi_files_keep_threads(tmp_path):
    src = tmp_path / "pi"
    shutil.copytree(ROOT / "data" / "pi", src / "pi")
    shutil.copytree(ROOT / "data" / "sessions", src / "sessions")
    (src / "claude").mkdir()
    shutil.copy(ROOT / "tests" / "data" / "claude" / "real" / "apanloco-random-session.jsonl", src / "claude")
    paths = _load.find_files(src)
    agents = [_load._agent_of(p) for p in paths]
    assert agents.count("pi") * 2 > len(agents) and "claude-code" in agents
    assert not _load._mostly_agents(paths)


def test_a_value_no_column_takes_fails_its_file_alone(tmp_path):
    """A Claude Code line whose token count is too large for any column (a damaged file, found by the
    fuzz run) fails that file with a read_error issue; the batch's other files load as before."""
    src = tmp_path / "projects" / "p"
    src.mkdir(parents=True)
    files = sorted((ROOT / "tests" / "data" / "claude" / "generated").rglob("*.jsonl"))[:3]
    for i, f in enumerate(files):
        shutil.copy(f, src / f"s{i}.jsonl")
    good = sl.load(tmp_path / "projects", cache=False, on_bad_lines="skip")
    lines = (src / "s1.jsonl").read_bytes().splitlines(keepends=True)
    bad = next(i for i, x in enumerate(lines) if b'"output_tokens":' in x)
    lines[bad] = lines[bad].replace(b'"output_tokens":', b'"output_tokens":1' + b"0" * 30 + b',"x":', 1)
    (src / "s1.jsonl").write_bytes(b"".join(lines))
    got = sl.load(tmp_path / "projects", cache=False, on_bad_lines="skip")
    issues = got.issues.to_pylist()
    assert [i["kind"] for i in issues if i["file"].endswith("s1.jsonl")] == ["read_error"]
    others = [str(src / "s0.jsonl"), str(src / "s2.jsonl")]
    cols = ["entry_id", "parent_id", "type", "role"]  # (usage counted once across
    # files may move with the failed file's rows gone; the rows themselves do not)
    assert got.entries.filter(pa_isin(got.entries["file"], others)).select(cols).equals(
        good.entries.filter(pa_isin(good.entries["file"], others)).select(cols))
    assert got.entries.filter(pa_isin(got.entries["file"], others)).num_rows > 0


def pa_isin(col, values):
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.is_in(col, value_set=pa.array(values))


def test_a_store_session_is_not_stated_but_a_file_named_like_one_is(tmp_path):
    f = tmp_path / "notes#1.jsonl"
    f.write_text('{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}\n')
    stats: dict = {}
    paths, _ = _load._find(str(tmp_path), None, stats)
    assert paths == [str(f)] and stats[str(f)].st_size == f.stat().st_size  # (a file: its stat as listed)
    names: dict = {}
    assert not _load._no_such_file(str(f), names)
    assert _load._no_such_file(str(tmp_path / "sessions.db#abc"), names)  # (a session of a store)
    assert list(names) == [str(tmp_path)]  # (the folder listed once)
    assert not _load._no_such_file(str(tmp_path / "gone" / "x.db#1"), {})  # (no listing: the stat answers)


def test_default_folders_read_by_early_workers_keep_a_file_once_and_key_it_as_listed(tmp_path, monkeypatch):
    """The default folders of agents whose files the early workers read are not stated by the
    listing when they hold many files: each worker states a file as it opens it. A file reached
    again (a hard link and a symbolic link beside it) is still loaded once, where first found, and
    every file's key is its stat, as when the listing states them."""
    home = tmp_path / "home"
    shutil.copytree(ROOT / "tests" / "data" / "agents" / "qwen" / "home", home)
    chats = home / ".qwen" / "projects" / "-home-dev-api-server" / "chats"
    first = sorted(chats.iterdir())[0]
    (chats / ("z-hard-" + first.name)).hardlink_to(first)
    (chats / ("z-soft-" + first.name)).symlink_to(first)
    monkeypatch.setenv("HOME", str(home))
    lean = []
    real = _load._first_copies
    monkeypatch.setattr(_load, "_first_copies", lambda rs: (lean.append(len(rs)), real(rs))[1])
    few = _load.load_files(None, agents=["qwen"], cache=False, max_workers=2, on_bad_lines="skip")
    assert lean == [], "five files are stated by the listing (a few stats cost nothing)"
    monkeypatch.setattr(_load, "_UNSTATED_FILES", 5)
    got = _load.load_files(None, agents=["qwen"], cache=False, max_workers=2, on_bad_lines="skip")
    assert lean == [5], "the early workers read all five paths, the listing stated none"
    monkeypatch.setattr(_load, "_early_pool", lambda *a, **k: None)
    listed = _load.load_files(None, agents=["qwen"], cache=False, max_workers=2, on_bad_lines="skip")
    assert lean == [5]
    assert [r.path for r in few.files] == [r.path for r in listed.files] and few.keys == listed.keys
    paths = [r.path for r in got.files]
    assert paths == [r.path for r in listed.files] and len(paths) == 3 and str(first) in paths
    assert not any("z-" in p for p in paths)
    assert got.keys == listed.keys == {p: _load.stat_key(Path(p).stat()) for p in paths}
    for a, b in zip(got.files, listed.files):
        assert a.session == b.session and a.entries.equals(b.entries)


def test_jsonl_below_lists_as_os_walk_does(tmp_path):
    """The listing of an agent's folder (by ``os.scandir``, no stat per file) against ``os.walk``:
    regular ``*.jsonl`` files, links to files and folders followed, a folder reached twice (a link
    back up) read once, broken links and other names left out."""
    import os

    from sessionlab.agents._spec import jsonl_below

    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    for p in ("x.jsonl", "a/y.jsonl", "a/b/z.jsonl", "a/notes.txt", "a/b/.jsonl"):
        (root / p).write_text("{}\n")
    (root / "a" / "dir.jsonl").mkdir()  # (a folder named like a file: not listed itself)
    (root / "a" / "dir.jsonl" / "inner.jsonl").write_text("{}\n")
    (root / "a" / "link.jsonl").symlink_to(root / "x.jsonl")
    (root / "a" / "broken.jsonl").symlink_to(root / "missing.jsonl")
    (root / "a" / "b" / "up").symlink_to(root / "a")  # (a loop)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.jsonl").write_text("{}\n")
    (root / "out").symlink_to(outside)

    def reference() -> list[str]:
        out, seen = [], set()
        for folder, dirs, names in os.walk(str(root), followlinks=True):
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in seen:
                dirs[:] = []
                continue
            seen.add((st.st_dev, st.st_ino))
            out += [f for f in (os.path.join(folder, n) for n in names if n.endswith(".jsonl")) if os.path.isfile(f)]
        return sorted(out)

    errors: list = []
    got = jsonl_below([root], errors)
    assert got == reference() and not errors
    assert {os.path.relpath(p, root) for p in got} == {"x.jsonl", "a/y.jsonl", "a/b/z.jsonl", "a/b/.jsonl",
                                                      "a/dir.jsonl/inner.jsonl", "a/link.jsonl", "out/o.jsonl"}

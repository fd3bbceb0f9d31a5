"""The cache holds every agent's files: Claude Code transcripts (with their subagent files) and
Codex rollouts (with forks that replay their parent) reload from it equal to a fresh load, unchanged
files are not parsed, and a file that grew or changed is read again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab.tables import load_files

ROOT = Path(__file__).parent.parent


def tables(src, cache):
    res = load_files(src, on_bad_lines="skip", cache=cache)
    return (sl.entries_table(src, on_bad_lines="skip", cache=cache),
            sl.sessions_table(src, on_bad_lines="skip", cache=cache),
            [i for r in res.files for i in r.issues]), res


def assert_same(src, cache):
    (e, s, i), res = tables(src, cache)
    fe, fs, fi = tables(src, False)[0]
    assert e.equals(fe)
    assert s.equals(fs)
    assert i == fi
    return res, e


@pytest.fixture
def agents_corpus(tmp_path):
    src = tmp_path / "agents"
    shutil.copytree(ROOT / "tests" / "data" / "claude" / "generated", src / "claude")
    shutil.copytree(ROOT / "tests" / "data" / "claude" / "real" / "codemie", src / "codemie")
    shutil.copytree(ROOT / "tests" / "data" / "codex" / "generated", src / "codex")
    shutil.copytree(ROOT / "tests" / "data" / "codex" / "real" / "localpush", src / "localpush")
    shutil.copytree(ROOT / "data" / "claude", src / "data-claude")
    shutil.copytree(ROOT / "data" / "codex", src / "data-codex")
    return src


def test_agent_files_are_cached_and_equal_a_fresh_load(agents_corpus, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first, e = assert_same(agents_corpus, cache)
    agents = set(e["agent"].to_pylist())
    assert agents == {"claude-code", "codex"}
    manifest = next((cache / "entries-v1").glob("*.json"))
    listed = json.loads(manifest.read_bytes().split(b"\n", 1)[1])["files"]
    assert len(listed) == len(first.files) and all(m["nbytes"] > 0 for m in listed)
    # the Codex forks' replayed totals and the Claude Code subagents' spawning calls come back too
    assert any(isinstance(m.get("extra"), list) and m["extra"] and m["session"]["agent"] == "codex" for m in listed)

    def boom(*a, **k):
        raise AssertionError("parsed a file the cache holds")

    monkeypatch.setattr("sessionlab.tables._load._iter_results", boom)
    again, e2 = assert_same_cached_only(agents_corpus, cache)
    assert again.changes.unchanged == [r.path for r in again.files] and not again.changes.changed
    monkeypatch.undo()
    assert e2.equals(e)


def assert_same_cached_only(src, cache):
    res = load_files(src, on_bad_lines="skip", cache=cache)
    return res, sl.entries_table(src, on_bad_lines="skip", cache=cache)


def test_usage_from_the_cache_equals_a_fresh_load(agents_corpus, tmp_path):
    cache = tmp_path / "cache"
    sl.load(agents_corpus, cache=cache, on_bad_lines="skip")
    warm = sl.usage_by(sl.load(agents_corpus, cache=cache, on_bad_lines="skip").entries, by=["agent", "model"])
    cold = sl.usage_by(sl.load(agents_corpus, cache=False, on_bad_lines="skip").entries, by=["agent", "model"])
    assert warm.equals(cold)
    assert warm.num_rows >= 3 and sum(warm["cost_usd"].to_pylist()) > 0


def _grow(path: Path, lines: list[bytes]) -> None:
    with open(path, "ab") as fh:
        fh.write(b"".join(lines))


def test_grown_agent_files_reload_equal_to_fresh(agents_corpus, tmp_path):
    cache = tmp_path / "cache"
    assert_same(agents_corpus, cache)
    claude = sorted((agents_corpus / "claude").rglob("*.jsonl"))[0]
    codex = sorted((agents_corpus / "codex").rglob("*.jsonl"))[0]
    # a new assistant turn at the end of each: the last line again under a new id, and a torn line
    last = json.loads(claude.read_bytes().splitlines()[-1])
    for k, v in (("uuid", "11111111-2222-3333-4444-555555555555"), ("parentUuid", last.get("uuid"))):
        last[k] = v
    _grow(claude, [json.dumps(last).encode() + b"\n", b'{"type": "assist'])
    _grow(codex, [codex.read_bytes().splitlines()[-1] + b"\n"])
    res, e = assert_same(agents_corpus, cache)
    # the new lines are read alone (each reader goes on from the state it left)
    assert sorted(res.changes.appended) == sorted([str(claude), str(codex)]) and not res.changes.rewritten
    assert len(res.changes.unchanged) == len(res.files) - 2
    assert "11111111-2222-3333-4444-555555555555" in e["entry_id"].to_pylist()
    # and again: the grown files are cached as they are now
    res, _ = assert_same(agents_corpus, cache)
    assert not res.changes.changed


def test_a_fork_read_after_its_parent_was_cached(agents_corpus, tmp_path):
    """A Codex fork's replay of its parent is matched against the parent's totals as the cache
    kept them (JSON), not only against a parent read in the same load."""
    cache = tmp_path / "cache"
    forks = [p for p in (agents_corpus / "codex").rglob("*.jsonl") if b"forked_from_id" in p.read_bytes()[:4096]]
    assert forks, "the generated Codex sessions include a fork"
    moved = tmp_path / "later"
    moved.mkdir()
    for f in forks:
        shutil.move(str(f), moved / f.name)
    assert_same(agents_corpus, cache)  # the parents only
    for f in forks:
        shutil.move(str(moved / f.name), f)
    res, e = assert_same(agents_corpus, cache)
    assert sorted(res.changes.added) == sorted(str(f) for f in forks)
    cold = sl.usage_by(sl.load(agents_corpus, cache=False, on_bad_lines="skip").entries, by="session")
    warm = sl.usage_by(sl.load(agents_corpus, cache=cache, on_bad_lines="skip").entries, by="session")
    assert warm.equals(cold)


def test_the_cache_is_dropped_when_a_reader_or_the_price_table_changes(monkeypatch, tmp_path):
    """The fingerprint a cache is written under covers every file whose change may change the rows:
    pi's readers, the agents' readers, the tables' code and the price table's package."""
    from importlib.util import find_spec

    from sessionlab.tables import _cache

    pkg = Path(sl.__file__).parent
    watched = [pkg / "pi" / "io" / "reader.py", pkg / "agents" / "_claude_reader.py",
               pkg / "agents" / "_codex_reader.py", pkg / "tables" / "_agents.py",
               Path(find_spec("genai_prices").origin).parent / "data_snapshot.py"]
    real_stat = Path.stat
    for f in watched:
        _cache._fingerprint.cache_clear()
        before = _cache._fingerprint()

        def stat(self, *a, _f=f, **k):
            st = real_stat(self, *a, **k)
            if self == _f:
                return os.stat_result((*st[:8], st[8] + 1, st[9]))  # an edit: a later mtime
            return st

        monkeypatch.setattr(Path, "stat", stat)
        _cache._fingerprint.cache_clear()
        assert _cache._fingerprint() != before, f"an edit of {f.name} keeps the cache"
        monkeypatch.undo()
    _cache._fingerprint.cache_clear()


def _claude_lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_appends_are_read_alone_and_equal_a_fresh_load(agent, tmp_path, monkeypatch):
    """A transcript or rollout written in pieces (cut anywhere: mid-turn, or in the middle of a
    line), reloaded from the cache after each: a grown file whose reader left a state is extended
    by its new lines alone (the whole-file reader is never called for it), one whose state cannot
    go on (a Codex call still waiting for its usage) is read whole, and every reload equals a fresh
    load in every column, issue and session fact."""
    from sessionlab.agents import _claude_reader, _codex_reader

    module, name = (_claude_reader, "read_claude") if agent == "claude" else (_codex_reader, "read_codex")
    src = sorted((ROOT / "tests" / "data" / agent / "generated").rglob("*.jsonl"))
    whole = max(src, key=lambda p: p.stat().st_size).read_bytes()
    lines = whole.splitlines(keepends=True)
    folder = tmp_path / ("projects/p" if agent == "claude" else "sessions/2026/01/01")
    folder.mkdir(parents=True)
    f = folder / "s.jsonl"
    cache = tmp_path / "cache"
    n = len(lines)
    cuts = sorted({n // 7, n // 5, n // 3, n // 2, 2 * n // 3, n - 3, n - 1, n})
    f.write_bytes(b"".join(lines[:cuts[0]]) + lines[cuts[0]][:25])  # a torn last line
    assert_same(tmp_path / folder.relative_to(tmp_path).parts[0], cache)
    root = tmp_path / folder.relative_to(tmp_path).parts[0]
    real = getattr(module, name)
    seen = {"appended": 0, "rewritten": 0}
    whole_reads: list[int] = []
    monkeypatch.setattr(module, name, lambda *a, **k: (whole_reads.append(1), real(*a, **k))[1])
    for b in cuts[1:]:
        f.write_bytes(b"".join(lines[:b]))  # (what the agent appends: the torn line's rest, then more)
        whole_reads.clear()
        monkeypatch.setattr(module, name, lambda *a, **k: (whole_reads.append(1), real(*a, **k))[1])
        res = load_files(root, on_bad_lines="skip", cache=cache)
        monkeypatch.setattr(module, name, real)
        kind = "appended" if res.changes.appended == [str(f)] else "rewritten"
        assert getattr(res.changes, kind) == [str(f)], res.changes
        assert bool(whole_reads) == (kind == "rewritten")  # appended: the new lines alone
        seen[kind] += 1
        cached_tables = tables(root, cache)[0]
        fresh_tables = tables(root, False)[0]
        assert cached_tables[0].equals(fresh_tables[0]) and cached_tables[1].equals(fresh_tables[1])
        assert cached_tables[2] == fresh_tables[2]
    assert seen["appended"] >= 3, seen


def assert_same_cached(src, cache):
    (e, s, i), res = tables(src, cache)
    fe, fs, fi = tables(src, False)[0]
    assert e.equals(fe) and s.equals(fs) and i == fi
    return res, e


def test_an_answer_to_an_old_tool_call_sends_the_file_to_a_whole_read(tmp_path):
    """A new line whose tool result answers a call the saved state no longer holds (answered
    before) needs the old lines: the file is read whole, and equals a fresh load."""
    src = sorted((ROOT / "tests" / "data" / "claude" / "generated").rglob("*.jsonl"))
    path = max(src, key=lambda p: p.stat().st_size)
    objs = _claude_lines(path)
    answer = next(o for o in objs if o.get("type") == "user" and isinstance(o.get("message", {}).get("content"), list)
                  and any(b.get("type") == "tool_result" for b in o["message"]["content"]))
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    f = folder / "s.jsonl"
    f.write_bytes(path.read_bytes())
    cache = tmp_path / "cache"
    assert_same(folder.parent, cache)
    again = dict(answer, uuid="99999999-0000-0000-0000-000000000000", parentUuid=objs[-1].get("uuid"))
    with open(f, "ab") as fh:
        fh.write(json.dumps(again).encode() + b"\n")
    res, e = assert_same_cached(folder.parent, cache)
    assert res.changes.rewritten == [str(f)]
    row = e.filter(pa_equal(e["entry_id"], "99999999-0000-0000-0000-000000000000"))
    assert row["tool_name"][0].as_py() is not None  # the old call's name, which only the old lines hold


def pa_equal(col, value):
    import pyarrow.compute as pc

    return pc.equal(col, value)


def test_a_rollout_cut_before_a_calls_usage_is_read_whole_when_it_grows(tmp_path):
    """Cut between an assistant item and the token count that gives it its usage, a rollout's last
    row is still open: the reader leaves no state, and the grown file is read whole (and equals a
    fresh load)."""
    src = sorted((ROOT / "tests" / "data" / "codex" / "generated").rglob("*.jsonl"))
    lines = max(src, key=lambda p: p.stat().st_size).read_bytes().splitlines(keepends=True)
    objs = [json.loads(x) for x in lines]
    cut = next(i + 1 for i, o in enumerate(objs) if o.get("type") == "response_item"
               and (o.get("payload") or {}).get("role") == "assistant" and i > 5)
    root = tmp_path / "sessions"
    (root / "2026").mkdir(parents=True)
    f = root / "2026" / "s.jsonl"
    f.write_bytes(b"".join(lines[:cut]))
    cache = tmp_path / "cache"
    assert_same(root, cache)
    f.write_bytes(b"".join(lines))
    res, _ = assert_same_cached(root, cache)
    assert res.changes.rewritten == [str(f)]


@pytest.mark.parametrize("agent", ["goose", "opencode", "kilo", "hermes"])
def test_a_store_agents_sessions_load_with_the_cache_on(agent, tmp_path, monkeypatch):
    """Sessions in a SQLite store (read every time, never cached) load the same with the cache on."""
    from tests._agent_fixtures import use_home

    use_home(monkeypatch, agent)
    fresh = sl.load(agents=[agent], cache=False, progress=False, on_bad_lines="skip")
    cached = sl.load(agents=[agent], cache=tmp_path / "cache", progress=False, on_bad_lines="skip")
    assert fresh.sessions.num_rows > 0 and "read_error" not in cached.issues["kind"].to_pylist()
    assert cached.entries.equals(fresh.entries) and cached.sessions.equals(fresh.sessions)
    assert cached.issues.equals(fresh.issues)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts the process's open files")
def test_asking_whose_store_a_session_is_leaves_no_connection_open(monkeypatch):
    """Outside a load's batch every question about a store opens and closes its own connection (a
    leaked one per session ran a cached load of 98,304 Goose sessions out of file descriptors)."""
    from sessionlab import agents
    from tests._agent_fixtures import use_home

    home = use_home(monkeypatch, "goose")
    db = next(home.rglob("sessions.db"))
    before = len(os.listdir("/proc/self/fd"))
    assert all(agents.opener(f"{db}#s{i}") == "goose" for i in range(50))
    assert len(os.listdir("/proc/self/fd")) == before

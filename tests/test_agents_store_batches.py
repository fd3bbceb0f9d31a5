"""A store's sessions read as a batch (one connection, one query per question for the batch's
sessions: what the loader does) give what each session read alone gives, for every agent whose
sessions live in a SQLite store or a shared export."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from sessionlab import agents
from sessionlab.agents import read_source, reading_spend_only, sharing_stores, split_member
from sessionlab.tables._build import entries_of
from sessionlab.tables._file import load_chunk

from ._agent_fixtures import use_home

STORES = ["goose", "hermes", "kilo", "opencode", "copilot"]


def _members(agent: str) -> list[str]:
    spec = agents.spec(agent)
    return [p for p in spec.files(spec.roots(), []) if split_member(p)[1] is not None]


def _copied_home(agent: str, monkeypatch, tmp_path) -> Path:
    """A copy of the agent's fixture home, as ``HOME`` (a test may change its stores)."""
    copy = tmp_path / "home"
    shutil.copytree(use_home(monkeypatch, agent), copy)
    monkeypatch.setenv("HOME", str(copy))
    return copy


def _goose_store(monkeypatch, tmp_path) -> str:
    """The store of a copy of Goose's fixture home."""
    _copied_home("goose", monkeypatch, tmp_path)
    (db,) = {split_member(p)[0] for p in _members("goose")}
    return db


def _read_all(agent: str, paths: list[str]) -> list[tuple]:
    out = []
    for p in paths:
        af = agents.spec(agent).read(p, None)
        out.append((af.n, af.column_lists(), af.session, af.blocks, [(i.line_no, i.kind) for i in af.issues]))
    return out


@pytest.mark.parametrize("agent", STORES)
def test_a_batch_reads_what_each_session_alone_reads(agent, monkeypatch):
    use_home(monkeypatch, agent)
    paths = _members(agent)
    assert len(paths) >= 2  # (the fixture has several sessions in one store)
    alone = _read_all(agent, paths)
    with sharing_stores(paths):
        together = _read_all(agent, paths)
    assert together == alone
    backwards = list(reversed(paths))  # (the batch's order is not the store's)
    with sharing_stores(backwards):
        assert _read_all(agent, backwards) == list(reversed(alone))


def _facts(af) -> tuple:
    return (af.path, af.n, af.column_lists(), af.session, af.blocks, [(i.line_no, i.kind) for i in af.issues])


@pytest.mark.parametrize("spend", [False, True])
@pytest.mark.parametrize("agent", STORES)
def test_a_store_s_sessions_read_together_are_each_one_read_alone(agent, spend, monkeypatch):
    """``AgentSpec.read_members`` (one pass over a store for many sessions) against ``read``, in
    any order, spend-only or not; and the load's ``read_source`` hands each session out once."""
    use_home(monkeypatch, agent)
    paths = _members(agent)
    spec = agents.spec(agent)
    with reading_spend_only(spend):
        alone = {p: _facts(spec.read(p, None)) for p in paths}
        for order in (paths, list(reversed(paths))):
            stores: dict[str, list[str]] = {}
            for p in order:
                store, key = split_member(p)
                stores.setdefault(store, []).append(key)
            together = [_facts(af) for store, keys in stores.items() for af in spec.read_members(store, keys)]
            assert together == [alone[agents.member_path(store, k)] for store, keys in stores.items() for k in keys]
        with sharing_stores(paths):
            assert [_facts(read_source(agent, p)) for p in paths] == [alone[p] for p in paths]


def test_a_store_whose_joint_read_fails_is_read_session_by_session(monkeypatch):
    use_home(monkeypatch, "kilo")
    paths = _members("kilo")
    spec = agents.spec("kilo")
    alone = [_facts(spec.read(p, None)) for p in paths]

    calls = []

    def broken(store, keys):
        calls.append(len(keys))
        raise RuntimeError("joint read failed")

    monkeypatch.setattr("sessionlab.agents.kilo.read_members", broken)
    with sharing_stores(paths):
        assert [_facts(read_source("kilo", p)) for p in paths] == alone
    assert calls == [len(paths)]  # (tried once for the batch's sessions of the store, then each alone)


@pytest.mark.parametrize("agent", STORES)
def test_the_loader_s_batches_give_each_session_s_own_table(agent, monkeypatch):
    use_home(monkeypatch, agent)
    paths = _members(agent)
    whole = entries_of(load_chunk(paths))
    one_by_one = entries_of([r for p in paths for r in load_chunk([p])])
    assert whole.num_rows > 0
    assert whole.equals(one_by_one)


def test_a_batch_of_a_store_with_more_sessions_than_one_query_takes(tmp_path, monkeypatch):
    """Goose's store grown past the ids one batched query asks for: every session still read."""
    db = _goose_store(monkeypatch, tmp_path)
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute('PRAGMA table_info("sessions")')]
    mcols = [r[1] for r in con.execute('PRAGMA table_info("messages")') if r[1] != "id"]
    for k in range(600):  # (each session copied under a new id, with its messages)
        con.execute(f'INSERT INTO sessions ({",".join(cols)}) SELECT '
                    + ",".join(f"id || '-{k}'" if c == "id" else c for c in cols) + " FROM sessions WHERE id NOT LIKE '%-%'")
        con.execute(f'INSERT INTO messages ({",".join(mcols)}) SELECT '
                    + ",".join(f"session_id || '-{k}'" if c == "session_id" else c for c in mcols)
                    + " FROM messages WHERE session_id NOT LIKE '%-%'")
    con.commit()
    con.close()
    paths = _members("goose")
    assert len(paths) > 1000
    alone = _read_all("goose", paths)
    with sharing_stores(paths):
        assert _read_all("goose", paths) == alone
    assert sum(n for n, *_ in alone) > 1000


@pytest.mark.parametrize("listed_run", [1, 10**9])
@pytest.mark.parametrize("agent", STORES)
def test_a_batch_tells_each_source_s_agent_as_one_source_alone(agent, listed_run, monkeypatch, tmp_path):
    """``opener`` and ``split_member`` answer a store's sessions once per store in a batch (its
    folder listed once, no stat per session; or, for a store's few sessions in a row, a stat of
    each path, ``listed_run``): the same answers as each path asked alone, for odd keys, a store
    that is not the agent's, and a real file named like a session of the store."""
    from sessionlab.agents import _spec

    monkeypatch.setattr(_spec, "_LISTED_RUN", listed_run)
    copy = _copied_home(agent, monkeypatch, tmp_path)
    members = _members(agent)
    store = split_member(members[0])[0]
    (tmp_path / "home" / "x").mkdir()
    named = f"{store}#named-like-a-session"
    with open(named, "w") as fh:
        fh.write('{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}\n')
    odd = [f"{store}#", f"{store}#a/b", f"{store}#{members[0]}", named, f"{copy / 'x' / 'other.db'}#1",
           f"{copy / 'missing' / 'sessions.db'}#2", f"{store}.gone#3"]
    paths = members + odd
    alone = [(agents.opener(p), split_member(p)) for p in paths]
    assert alone[0] == (agent, split_member(members[0])) and alone[0][1][1] is not None
    assert alone[len(members) + 3] == (None, (named, None))  # (a file of its own)
    with sharing_stores(paths):
        assert [(agents.opener(p), split_member(p)) for p in paths] == alone
    # a batch's paths split at once (a store's next session answered from the one before): the file
    # named like a session right after the store's sessions, and again after a key with a folder
    mixed = members[:2] + [named] + members[2:] + [f"{store}#a/b", named] + odd + members[:1]
    expected = [(agents.opener(p), split_member(p)) for p in mixed]  # (each asked alone)
    with sharing_stores(mixed):
        got = agents.split_members(mixed)
        assert [(agents.opener(p), s) for p, s in zip(mixed, got)] == expected
        assert [split_member(p) for p in mixed] == got
    assert agents.split_members(mixed) == [s for _, s in expected]  # (no batch)


def test_a_batch_asks_the_parents_of_its_sessions_alone(tmp_path, monkeypatch):
    """A batch's lookup of parents holds its sessions' chains up to the top (a chain three deep,
    a parent the store lacks, a cycle), asked level by level, not the store's other sessions; its
    roots are those of each session read alone."""
    from sessionlab.agents._chain import parent_lookup, store_connection

    db = _goose_store(monkeypatch, tmp_path)
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute('PRAGMA table_info("sessions")')]
    first = con.execute("SELECT id FROM sessions ORDER BY id LIMIT 1").fetchone()[0]
    links = {"top": None, "mid": "top", "leaf": "mid", "orphan": "gone", "c1": "c2", "c2": "c1", "other": None}
    for sid, parent in links.items():
        values = ",".join("?" if c in ("id", "parent_session_id") else c for c in cols)
        args = [sid if c == "id" else parent for c in cols if c in ("id", "parent_session_id")]
        con.execute(f'INSERT INTO sessions ({",".join(cols)}) SELECT {values} FROM sessions WHERE id = ?',
                    [*args, first])
    con.commit()
    con.close()
    paths = [f"{db}#{s}" for s in ("leaf", "orphan", "c1")]
    alone = _read_all("goose", paths)
    assert [s[2]["root_session_id"] for s in alone] == ["top", "gone", "c1"]
    with sharing_stores(paths):
        assert _read_all("goose", paths) == alone
        with store_connection(db) as c:
            parent_lookup(c, db, "sessions", parent_col="parent_session_id")
        from sessionlab.agents._spec import BATCH

        (held,) = [v for k, v in BATCH.memo.items() if k[0] == "parents"]
        assert held == {"leaf": "mid", "mid": "top", "top": None, "orphan": "gone",
                                                  "gone": None, "c1": "c2", "c2": "c1"}


_PARENTS = re.compile(r'\s*SELECT (?:"\w+", )?"\w*parent\w*" FROM')  # (a walk up the parents: a level each)


@pytest.mark.parametrize("agent", ["goose", "hermes", "kilo", "opencode"])
def test_a_loader_batch_asks_its_store_each_question_once(agent, monkeypatch):
    """A batch of a store's sessions is one query per table (and per level of parents), not one
    per session: each statement the batch runs, its ids aside, runs once (Kilo asked a session's
    project once per session that had no folder)."""
    from sessionlab.agents import _chain

    use_home(monkeypatch, agent)
    paths = _members(agent)
    run: list[str] = []
    real = _chain.open_readonly

    def traced(path):
        con = real(path)
        con.set_trace_callback(run.append)
        return con

    monkeypatch.setattr(_chain, "open_readonly", traced)
    for spend in (False, True):
        run.clear()
        assert load_chunk(paths, False, spend, price=False)
        asked = [re.sub(r"IN \([^)]*\)", "IN (...)", re.sub(r"= '[^']*'", "= ?", s)) for s in run
                 if s.lstrip().upper().startswith("SELECT") and not _PARENTS.match(s)]
        assert asked and len(asked) == len(set(asked)), asked
        assert len(asked) < len(paths) * 2  # (each session alone asks two tables at least)

"""Goose keeps every session in one SQLite store: a load of the default folders cuts it into parts
by rowid (:mod:`sessionlab.agents._parts`) and each worker lists the sessions of its parts where it
reads them. The load is the one that lists every session first and reads them by name, in the
store's order of rows, whatever the parts."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from sessionlab.agents import _parts, goose
from sessionlab.tables import Corpus, _load
from sessionlab.tables._load import find_files, load_files

from ._agent_fixtures import use_home


def _rows(res):
    return Corpus(res.files).entries.drop_columns(["file"]).to_pylist()


def _sessions(res):
    return Corpus(res.files).sessions.drop_columns(["file"]).to_pylist()


def _facts(res):
    return [r.session for r in res.files]


@pytest.fixture
def store(monkeypatch, tmp_path):
    """The fixture's store copied, its rows renumbered against their order of creation (rowids 40 to
    55, three apart: gaps a part may fall in): the rows' order is not the sessions'."""
    shutil.copytree(use_home(monkeypatch, "goose"), tmp_path, dirs_exist_ok=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    (db,) = {str(r / goose.DB_NAME) for r in goose.roots() if (r / goose.DB_NAME).is_file()}
    with sqlite3.connect(db) as con:
        ids = [i for (i,) in con.execute("SELECT id FROM sessions ORDER BY rowid")]
        for n, i in enumerate(reversed(ids)):
            con.execute("UPDATE sessions SET rowid = ? WHERE id = ?", (40 + 3 * n, i))
    con.close()
    return db


@pytest.mark.parametrize("rows", [1, 2, 4, 1024])
def test_the_parts_list_the_store_s_sessions_in_its_order_of_rows(rows, store, monkeypatch):
    monkeypatch.setattr(_parts, "PART_ROWS", rows)
    parts = goose.stores(goose.roots())
    assert len(parts) == -(-16 // rows)  # (the span of the rowids, 40 to 55, not the count of rows)
    assert all(_parts.split_part(p)[0] == store for p in parts)
    listed = [s for p in parts for s in goose.store_sessions(p)]
    goose.finish([])
    with sqlite3.connect(store) as con:
        by_rows = [f"{store}#{i}" for (i,) in con.execute("SELECT id FROM sessions ORDER BY rowid")]
    con.close()
    assert listed == goose.files(goose.roots()) == by_rows and len(by_rows) == 6
    assert by_rows[0].endswith("#20260514_6")  # (the last created: its row renumbered first)
    assert goose._LISTED == {}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("spend_only", [False, True], ids=["full", "spend-only"])
def test_the_default_folders_load_what_naming_every_session_loads(workers, spend_only, store, monkeypatch):
    listed = find_files(None, agents=["goose"])
    named = load_files(listed, cache=False, on_bad_lines="skip", max_workers=1, spend_only=spend_only)
    monkeypatch.setattr(_parts, "PART_ROWS", 2)
    monkeypatch.setattr(_load, "_CHUNK_BYTES", (1, 1))  # (a task per part: each worker lists its own)
    got = load_files(None, agents=["goose"], cache=False, on_bad_lines="skip", max_workers=workers,
                     spend_only=spend_only)
    assert len(goose.stores(goose.roots())) == 8 and len(listed) == 6  # (rowids 40 to 55)
    assert [r.path for r in got.files] == listed == [r.path for r in named.files]
    assert _rows(got) == _rows(named) and any(e["input_tokens"] for e in _rows(got))
    assert _sessions(got) == _sessions(named) and _facts(got) == _facts(named)
    assert {(e["session_id"], e["root_session_id"]) for e in _rows(got) if e["root_session_id"]
            } == {("20260514_2", "20260514_1")}  # (a subagent's: its parent's, read from the rows listed)
    assert set(got.keys) == set(listed)
    assert goose._LISTED == {}  # (let go once read)


def test_a_part_that_cannot_be_listed_is_a_read_error_and_the_others_load(store, monkeypatch):
    monkeypatch.setattr(_parts, "PART_ROWS", 4)
    parts = goose.stores(goose.roots())
    real = goose.part_rows

    def rows(part, *a, **kw):
        if part == parts[0]:
            raise sqlite3.OperationalError("database is locked")
        return real(part, *a, **kw)

    monkeypatch.setattr(goose, "part_rows", rows)
    got = load_files(None, agents=["goose"], cache=False, on_bad_lines="skip", max_workers=1)
    bad = [r for r in got.files if r.path == parts[0]]
    assert len(bad) == 1 and [i.kind for i in bad[0].issues] == ["read_error"]
    assert bad[0].issues[0].message == "cannot list its sessions: OperationalError: database is locked"
    good = [r.path for r in got.files if r.session is not None]
    assert good == goose.files(goose.roots())[2:]  # (the first part's rowids, 40 to 43: two sessions)


def test_a_store_that_is_no_database_is_a_read_error(monkeypatch, tmp_path):
    folder = tmp_path / ".local" / "share" / "goose" / "sessions"
    folder.mkdir(parents=True)
    (folder / goose.DB_NAME).write_bytes(b"not a database" * 100)
    monkeypatch.setenv("HOME", str(tmp_path))
    got = load_files(None, agents=["goose"], cache=False, on_bad_lines="skip", max_workers=1)
    assert [r.path for r in got.files] == [str(folder / goose.DB_NAME)]
    assert [i.kind for i in got.files[0].issues] == ["read_error"]
    assert "DatabaseError" in got.files[0].issues[0].message


class _Bar:
    def __init__(self, total):
        self.total, self.steps = total, []

    def update(self, n):
        self.steps.append(n)

    def close(self):
        pass


@pytest.mark.parametrize("workers", [1, 2])
def test_the_progress_bar_steps_once_per_part(workers, store, monkeypatch):
    monkeypatch.setattr(_parts, "PART_ROWS", 2)  # (eight parts of a small store: one task has them all)
    bars = []
    monkeypatch.setattr(_load, "_progress_bar", lambda progress, total: bars.append(_Bar(total)) or bars[-1])
    load_files(None, agents=["goose"], cache=False, on_bad_lines="skip", max_workers=workers, progress=True)
    (bar,) = bars
    assert bar.total == 8 and bar.steps == [8]


def test_rows_a_listing_kept_are_not_read_once_the_store_changed(store, monkeypatch):
    """A part's listing keeps its rows for the report's read that follows; a store written between
    the two (Goose committing a session's new totals) is asked again, never answered from them."""
    monkeypatch.setattr(_parts, "PART_ROWS", 1024)
    (part,) = goose.stores(goose.roots())
    sids = [p.rpartition("#")[2] for p in goose.store_sessions(part)]
    first = goose.spend_members(store, sids)
    assert first.rows and goose._LISTED  # (read from the rows the listing kept)
    with sqlite3.connect(store) as con:
        con.execute("UPDATE sessions SET accumulated_input_tokens = accumulated_input_tokens + 1000")
    con.close()
    again = goose.spend_members(store, sids)
    goose.finish([])
    fresh = goose.spend_members(store, sids)
    assert again.rows == fresh.rows != first.rows and goose._LISTED == {}

"""The two storages (in memory, JSONL file) answer the seed's queries alike, and the file one persists."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab import CycleError, EntryNotFoundError, SessionError
from sessionlab.pi import model as E
from sessionlab.pi.storage import InMemorySessionStorage, JsonlSessionStorage, SessionStorage, new_session_header
from tests._pi_expected import PI

T = "2026-01-01T00:00:00.000Z"


def msg(eid: str, parent: str | None, text: str = "hi") -> E.MessageEntry:
    return E.MessageEntry(id=eid, parent_id=parent, timestamp=T, message=E.UserMessage(content=text, timestamp=0))


def call(eid: str, parent: str | None, tokens: int, cost: float) -> E.MessageEntry:
    usage = E.Usage(input=tokens, output=10, cache_read=5, cache_write=0, total_tokens=tokens + 15,
                    cost=E.Cost(total=cost))
    return E.MessageEntry(id=eid, parent_id=parent, timestamp=T, message=E.AssistantMessage(
        content=(E.TextContent(text="ok"),), provider="p", model="m", usage=usage, stop_reason="stop", timestamp=0))


def label(eid: str, parent: str, target: str, text: str | None) -> E.LabelEntry:
    return E.LabelEntry(id=eid, parent_id=parent, timestamp=T, target_id=target, label=text)


def info(eid: str, parent: str, name: str | None) -> E.SessionInfoEntry:
    return E.SessionInfoEntry(id=eid, parent_id=parent, timestamp=T, name=name)


@pytest.fixture(params=["memory", "jsonl"])
def storage(request, tmp_path) -> SessionStorage:
    header = new_session_header(session_id="s1", cwd="/p", timestamp=T)
    if request.param == "memory":
        return InMemorySessionStorage(header)
    return JsonlSessionStorage(tmp_path / "s.jsonl", header=header)


def _reopen(storage) -> SessionStorage:
    """The same storage read back from its file (the in-memory one: itself)."""
    if isinstance(storage, JsonlSessionStorage):
        storage.close()
        return JsonlSessionStorage(storage.file_path)
    return storage


def test_a_new_storage_is_empty(storage):
    assert storage.get_leaf_id() is None and storage.get_session_name() is None
    assert storage.get_entries() == [] and storage.get_branch() == []
    assert storage.get_metadata().id == "s1"
    assert isinstance(storage, SessionStorage)


def test_the_leaf_follows_appends_and_branches_walk_to_the_root(storage):
    for e in (msg("a", None), msg("b", "a"), msg("c", "b"), msg("d", "b")):
        storage.append_entry(e)
    assert storage.get_leaf_id() == "d"
    s = _reopen(storage)
    assert [e.id for e in s.get_branch()] == ["a", "b", "d"]
    assert [e.id for e in s.get_branch("c")] == ["a", "b", "c"]
    assert s.get_entry("c").message.content == "hi"
    assert s.get_entry("zz") is None
    with pytest.raises(EntryNotFoundError):
        s.get_branch("zz")


def test_labels_and_name_last_entry_wins(storage):
    storage.append_entry(msg("a", None))
    for e in (label("l1", "a", "a", "first"), label("l2", "l1", "a", "second"), info("i1", "l2", "Named"),
              info("i2", "i1", ""), label("l3", "i2", "b", "gone"), label("l4", "l3", "b", "")):
        storage.append_entry(e)
    s = _reopen(storage)
    assert s.get_label("a") == "second"
    assert s.get_label("b") is None  # an empty label clears
    assert s.get_session_name() is None  # an empty name clears it (pi 1.6.0; 0.58.3 kept "Named")


def test_set_leaf_id_records_the_move_and_survives_reopening(storage):
    for e in (msg("a", None), msg("b", "a"), msg("c", "b")):
        storage.append_entry(e)
    n = len(storage.get_entries())
    storage.set_leaf_id("c")  # already the leaf: nothing recorded
    assert len(storage.get_entries()) == n
    storage.set_leaf_id("a")
    records = storage.find_entries("leaf")
    assert len(records) == 1 and records[0].target_id == "a" and storage.get_leaf_id() == "a"
    with pytest.raises(EntryNotFoundError):
        storage.set_leaf_id("nope")
    s = _reopen(storage)
    assert s.get_leaf_id() == "a"
    assert [e.id for e in s.get_branch()] == ["a"]
    assert len(s.get_entries({"include_leaf_records": False})) == n
    storage = s
    storage.append_entry(msg("d", "a"))
    assert [e.id for e in _reopen(storage).get_branch()] == ["a", "d"]


def test_a_duplicate_id_is_refused_on_append_and_resolves_to_the_later_entry_when_read(storage, tmp_path):
    storage.append_entry(msg("a", None, "one"))
    with pytest.raises(sl.InvalidEntryError, match="already used"):
        storage.append_entry(msg("a", None, "two"))
    assert [e.message.content for e in _reopen(storage).get_entries()] == ["one"]  # nothing was stored
    # entries given (or a file written by another tool) with a repeated id: the later one wins
    s = InMemorySessionStorage(storage.get_metadata(), [msg("a", None, "one"), msg("a", None, "two")])
    assert s.get_entry("a").message.content == "two"
    if isinstance(storage, JsonlSessionStorage):  # read back, the repeated id is a line issue
        from sessionlab.pi.io.writer import to_line

        p = tmp_path / "dup.jsonl"
        p.write_text("".join(to_line(x, "pi") + "\n" for x in (s.get_metadata(), *s.get_entries())))
        with pytest.warns(sl.BadLinesWarning, match="duplicate_id"):
            assert JsonlSessionStorage(p).get_entry("a").message.content == "two"


def test_a_parent_cycle_raises_instead_of_hanging():
    s = InMemorySessionStorage(entries=[msg("a", "b"), msg("b", "a")])
    with pytest.raises(CycleError):
        s.get_branch("a")


def test_path_to_root_or_compaction_starts_at_the_first_kept_entry(storage):
    for e in (msg("a", None), msg("b", "a"), msg("c", "b"),
              E.CompactionEntry(id="k", parent_id="c", timestamp=T, summary="sum", first_kept_entry_id="b",
                                tokens_before=100),
              msg("d", "k")):
        storage.append_entry(e)
    s = _reopen(storage)
    assert [e.id for e in s.get_path_to_root_or_compaction("d")] == ["b", "c", "k", "d"]
    assert [e.id for e in s.get_path_to_root_or_compaction("c")] == ["a", "b", "c"]


def test_get_entries_filters_by_type_and_branch(storage):
    for e in (msg("a", None), call("b", "a", 100, 0.5), msg("c", "a"), label("l", "c", "a", "x")):
        storage.append_entry(e)
    s = _reopen(storage)
    assert [e.id for e in s.get_entries({"type": "label"})] == ["l"]
    assert [e.id for e in s.get_entries({"type": ["message"], "leaf_id": "b"})] == ["a", "b"]


def test_stats_sum_the_assistant_usage(storage):
    for e in (msg("a", None), call("b", "a", 100, 0.5), msg("c", "b"), call("d", "c", 200, 0.25)):
        storage.append_entry(e)
    st = _reopen(storage).get_session_stats()
    assert (st.entry_count, st.message_count, st.messages_by_role) == (4, 4, {"user": 2, "assistant": 2})
    assert (st.input_tokens, st.output_tokens, st.cache_read_tokens, st.total_tokens) == (300, 20, 10, 330)
    assert st.cost_total == pytest.approx(0.75)


# ---------------------------------------------------------------------------- the file


def test_nothing_is_written_before_the_first_append(tmp_path):
    path = tmp_path / "s.jsonl"
    s = JsonlSessionStorage(path, header=new_session_header(session_id="s1", cwd="/p"))
    assert not path.exists()
    s.append_entry(msg("a", None))
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [x["type"] for x in lines] == ["session", "message"] and lines[0]["id"] == "s1"
    JsonlSessionStorage(tmp_path / "t.jsonl", create=True)
    assert (tmp_path / "t.jsonl").read_text(encoding="utf-8").count("\n") == 1  # the header at once


def test_opening_changes_nothing_and_an_old_file_is_upgraded_on_first_append(tmp_path):
    src = PI / "real" / "before-compaction.jsonl"  # a version-1 file
    path = tmp_path / "old.jsonl"
    shutil.copy(src, path)
    before = path.read_bytes()
    s = JsonlSessionStorage(path)
    assert path.read_bytes() == before
    n = len(s.get_entries())
    leaf = s.get_leaf_id()
    s.append_entry(msg("new00001", leaf))
    s.close()
    again = sl.read_session(path)
    assert again.version == 3 and len(again.entries) == n + 1 and again.entries[-1].id == "new00001"
    assert JsonlSessionStorage(path).get_leaf_id() == "new00001"


def test_a_file_without_header_or_in_another_dialect_is_refused(tmp_path):
    bad = tmp_path / "nohead.jsonl"
    bad.write_text(json.dumps({"type": "message", "id": "a", "parentId": None, "timestamp": T,
                               "message": {"role": "user", "content": "x"}}) + "\n", encoding="utf-8")
    with pytest.raises(SessionError):
        JsonlSessionStorage(bad, on_bad_lines="skip")
    good = tmp_path / "pi.jsonl"
    s = JsonlSessionStorage(good, header=new_session_header(cwd="/p"))
    s.append_entry(msg("a", None))
    s.close()
    with pytest.raises(ValueError, match="dialect"):
        JsonlSessionStorage(good, dialect="seed")


def test_storages_built_from_the_same_entries_agree(tmp_path):
    src = Path(PI / "real" / "large-session.jsonl")
    sf = sl.read_session(src)
    mem = InMemorySessionStorage(sf.header, sf.entries)
    disk = JsonlSessionStorage(src)
    assert mem.get_leaf_id() == disk.get_leaf_id()
    assert [e.id for e in mem.get_branch()] == [e.id for e in disk.get_branch()]
    assert mem.get_session_stats() == disk.get_session_stats()
    assert mem.get_session_name() == disk.get_session_name()

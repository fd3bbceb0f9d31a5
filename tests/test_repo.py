"""Repos: create/open/list/delete/fork in memory and as pi-layout JSONL files."""

from __future__ import annotations

import json
import shutil

import pytest

from sessionlab import (
    EntryNotFoundError,
    InMemorySessionRepo,
    InvalidForkTargetError,
    JsonlSessionRepo,
    SessionNotFoundError,
    UnsafePathError,
    message_to_dict,
    open_session,
    read_session,
)
from sessionlab.pi.repo import encode_cwd
from tests._pi_expected import PI
from tests.test_session import assistant, user

SAMPLE_A = PI / "generated/sessions/--home-user-proj--/2026-01-15T10-00-01-000Z_00000001-0000-4000-8000-000000000000.jsonl"


@pytest.mark.parametrize("cwd,enc", [("/home/user/proj", "--home-user-proj--"), ("C:\\Users\\me", "--C--Users-me--"),
                                     ("/a/b-c", "--a-b-c--")])
def test_encode_cwd_is_pis(cwd, enc):
    assert encode_cwd(cwd) == enc


def build(session):
    u1 = session.append_message(user("one"))
    a1 = session.append_message(assistant("one"))
    session.append_thinking_level_change("high")
    u2 = session.append_message(user("two"))
    a2 = session.append_message(assistant("two"))
    return u1, a1, u2, a2


def test_jsonl_repo_create_open_list_delete(tmp_path):
    repo = JsonlSessionRepo(tmp_path)
    s = repo.create(cwd="/home/user/proj", session_id="s-1")
    path = s.storage.file_path
    assert path.parent.name == "--home-user-proj--" and path.name.endswith("_s-1.jsonl")
    assert json.loads(path.read_text().splitlines()[0])["id"] == "s-1"
    build(s)
    s.append_session_info("first")
    s2 = repo.create(cwd="/home/user/other", session_id="s-2")
    s2.append_message(user("later"))
    infos = repo.list()
    assert [i.id for i in infos] == ["s-1", "s-2"] or [i.id for i in infos] == ["s-2", "s-1"]
    by_id = {i.id: i for i in infos}
    assert by_id["s-1"].name == "first" and by_id["s-1"].entry_count == 6 and by_id["s-1"].cwd == "/home/user/proj"
    assert infos == sorted(infos, key=lambda i: i.modified, reverse=True)
    assert [i.id for i in repo.list(cwd="/home/user/other")] == ["s-2"]
    assert repo.open("s-1").build_context() == s.build_context()
    assert repo.open(by_id["s-1"]).get_leaf_id() == s.get_leaf_id()
    repo.delete("s-2")
    assert [i.id for i in repo.list()] == ["s-1"]
    with pytest.raises(SessionNotFoundError):
        repo.open("s-2")


def test_list_newest_first_by_message_time(tmp_path):
    repo = JsonlSessionRepo(tmp_path)
    for sid, t in [("old", 1000), ("new", 3000), ("mid", 2000)]:
        s = repo.create(cwd="/p", session_id=sid)
        s.append_message(type(user("x"))(content="x", timestamp=t))
    assert [i.id for i in repo.list()] == ["new", "mid", "old"]
    assert [i.modified for i in repo.list()] == [3000, 2000, 1000]


@pytest.mark.parametrize("bad", ["../evil", "a/b", "", ".hidden", "x..", "a b"])
def test_unsafe_ids_are_rejected(tmp_path, bad):
    repo = JsonlSessionRepo(tmp_path)
    with pytest.raises(UnsafePathError):
        repo.create(cwd="/p", session_id=bad)


def test_paths_outside_the_root_are_rejected(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside.jsonl"
    shutil.copy(SAMPLE_A, outside)
    repo = JsonlSessionRepo(root)
    with pytest.raises(UnsafePathError):
        repo.open(str(outside))
    with pytest.raises(UnsafePathError):
        repo.open("../outside.jsonl")
    with pytest.raises(UnsafePathError):
        repo.delete("../outside.jsonl")
    assert outside.exists()


@pytest.mark.parametrize("kind", ["memory", "jsonl"])
def test_fork_positions(tmp_path, kind):
    repo = InMemorySessionRepo() if kind == "memory" else JsonlSessionRepo(tmp_path)
    src = repo.create(cwd="/p", session_id="src")
    u1, a1, u2, a2 = build(src)

    before = repo.fork("src", u2, "before")
    assert [m.role for m in before.build_context().messages] == ["user", "assistant"]
    assert before.build_context() == src.build_context(leaf_id=src.get_entry(u2).parent_id)
    assert before.build_context().thinking_level == "high"

    at = repo.fork("src", a2, "at")
    assert at.build_context() == src.build_context(leaf_id=a2)

    whole = repo.fork("src")
    assert [e.id for e in whole.storage.entries] == [e.id for e in src.storage.entries]
    assert whole.storage.get_metadata().parent_session is not None

    with pytest.raises(InvalidForkTargetError) as err:
        repo.fork("src", a1, "before")
    assert err.value.code == "invalid_fork_target"
    with pytest.raises(EntryNotFoundError):
        repo.fork("src", "missing", "at")
    empty = repo.fork("src", u1, "before")  # a root user message: nothing before it
    assert empty.storage.entries == []


def test_fork_after_compaction_copies_what_the_context_needs_and_keeps_settings(tmp_path):
    repo = JsonlSessionRepo(tmp_path)
    src = repo.create(cwd="/p", session_id="src")
    src.append_model_change("openai", "gpt-5")
    src.append_thinking_level_change("high")
    u1, a1, u2, a2 = build(src)
    src.append_compaction("summary", u2, 1234)
    u3 = src.append_message(user("three"))
    fork = repo.fork("src", u3, "at")
    entries = fork.storage.entries
    assert entries[0].parent_id is None  # no dangling parent
    assert fork.build_context() == src.build_context(leaf_id=u3)
    sf = read_session(fork.storage.file_path)
    assert sf.issues == [] and sf.header.parent_session == str(src.storage.file_path)
    assert [e.type for e in sf.entries] == ["model_change", "thinking_level_change", "message", "message",
                                          "compaction", "message"]


def test_jsonl_fork_of_pi_sample_a_matches_pis_fork_point(tmp_path):
    """Sample D is pi's /fork of A at user message 0000000e: its copied context is A's at 00000007."""
    dest = tmp_path / "--home-user-proj--"
    dest.mkdir()
    shutil.copy(SAMPLE_A, dest / SAMPLE_A.name)
    repo = JsonlSessionRepo(tmp_path)
    fork = repo.fork("00000001-0000-4000-8000-000000000000", "0000000e", "before")
    a = open_session(SAMPLE_A)
    want = [message_to_dict(m) for m in a.build_context(leaf_id="00000007").messages]
    assert [message_to_dict(m) for m in fork.build_context().messages] == want
    d = open_session(PI / "generated/sessions/--home-user-proj--/2026-01-15T10-00-34-000Z_00000022-0000-4000-8000-000000000000.jsonl")
    assert [message_to_dict(m) for m in d.build_context(leaf_id="00000023").messages] == want
    assert read_session(fork.storage.file_path).issues == []


def test_fork_through_a_label_leaves_no_orphan_unlike_pi(tmp_path):
    """pi's /fork drops label entries without re-chaining (sample G: user 00000024 becomes an
    orphan and the context loses the first exchange). sessionlab copies the branch as it is."""
    d_file = PI / "generated/sessions/--home-user-proj--/2026-01-15T10-00-34-000Z_00000022-0000-4000-8000-000000000000.jsonl"
    dest = tmp_path / "--home-user-proj--"
    dest.mkdir()
    shutil.copy(d_file, dest / d_file.name)
    repo = JsonlSessionRepo(tmp_path)
    fork = repo.fork("00000022-0000-4000-8000-000000000000", "00000025", "at")
    sf = read_session(fork.storage.file_path)
    assert sf.issues == []  # no dangling parent
    assert [e.id for e in fork.get_branch()][:1] == ["00000002"]
    d = open_session(d_file)
    assert fork.build_context() == d.build_context(leaf_id="00000025")
    assert len(fork.build_context().messages) == 6
    g = open_session(PI / "generated/sessions/--home-user-proj--/2026-01-15T10-00-38-000Z_00000026-0000-4000-8000-000000000000.jsonl",
                     on_bad_lines="skip")
    assert len(g.build_context().messages) == 2  # pi's fork: the orphan branch
